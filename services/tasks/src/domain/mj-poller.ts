/**
 * Follows unfinished drawing tasks. Each tick a replica picks due tasks, takes a lease on each
 * (a conditional update of `lease_until`: one replica per task at a time), asks each upstream for
 * its tasks in one list-by-condition call, and applies the answers under the lease. Final states
 * settle or refund (mj-billing.ts); tasks older than the timeout fail and are refunded. An
 * upstream that fails is left alone for a growing backoff.
 */
import type { MjProgress, MjTaskDoc } from '../data/mj-task-repository.ts';
import { finishBilling } from './mj-billing.ts';
import { isFinal } from './mj-rules.ts';
import type { MjDeps } from './mj-submit.ts';
import { mjTaskView } from './mj-view.ts';

export interface PollerSettings {
  owner: string;
  intervalMs: number;
  leaseMs: number;
  batch: number;
  timeoutMs: number;
  backoffMaxMs: number;
  notify(url: string, body: unknown): void;
  forwardBase(): string | undefined;
}

const str = (v: unknown) => (typeof v === 'string' ? v : v == null ? '' : String(v));
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The fields of an upstream task this service keeps. */
export function progressOf(up: Record<string, unknown>): MjProgress {
  return {
    status: str(up.status) || 'SUBMITTED',
    progress: str(up.progress) || '0%',
    image_url: str(up.imageUrl),
    prompt: str(up.prompt),
    prompt_en: str(up.promptEn),
    description: str(up.description),
    fail_reason: str(up.failReason),
    start_time: num(up.startTime),
    finish_time: num(up.finishTime),
    buttons: Array.isArray(up.buttons) ? JSON.stringify(up.buttons) : '',
    properties: up.properties && typeof up.properties === 'object' ? JSON.stringify(up.properties) : '',
  };
}

function changed(t: MjTaskDoc, p: MjProgress): boolean {
  return (Object.keys(p) as (keyof MjProgress)[]).some((k) => p[k] !== undefined && p[k] !== t[k]);
}

export function mjPoller(d: MjDeps, s: PollerSettings) {
  const backoff = new Map<number, { until: number; n: number }>();

  const fail = (id: number) => {
    const b = backoff.get(id) ?? { until: 0, n: 0 };
    b.n += 1;
    b.until = Date.now() + Math.min(s.intervalMs * 2 ** b.n, s.backoffMaxMs);
    backoff.set(id, b);
    return b.until;
  };

  const apply = async (t: MjTaskDoc, p: MjProgress, now: number): Promise<void> => {
    // The upstream keeps the prompt; an empty one in an answer is no reason to lose ours.
    if (!p.prompt) delete p.prompt;
    let finish: 'settle' | 'refund' | undefined;
    if (p.status === 'SUCCESS') finish = 'settle';
    else if (p.status === 'FAILURE') finish = 'refund';
    else if (now - t.submit_time > s.timeoutMs) {
      p.status = 'FAILURE';
      p.fail_reason = '任务超时';
      p.finish_time = now;
      finish = 'refund';
    }
    if (finish && !p.finish_time) p.finish_time = now;
    const didChange = changed(t, p);
    const ok = await d.repo.applyPoll(t.id, s.owner, p, {
      nextPollAt: now + s.intervalMs,
      ...(finish ? { finish } : {}),
    });
    if (!ok) return;
    const next: MjTaskDoc = { ...t, ...p, ...(finish ? { final: true, billing: finish } : {}) };
    if (finish) await finishBilling(d, next).catch((err) => d.onError(err, 'task billing failed; repair will retry'));
    if (didChange && t.notify_hook && d.options.get('MjNotifyEnabled') === 'true') {
      s.notify(t.notify_hook, mjTaskView(next, s.forwardBase()));
    }
  };

  const pollChannel = async (channelId: number, tasks: MjTaskDoc[]): Promise<void> => {
    const now = Date.now();
    const channel = await d.peers.channel(channelId).catch(() => undefined);
    let answer: { status: number; body: unknown } | undefined;
    if (channel) {
      answer = await d.upstream
        .post(channel, '/mj/task/list-by-condition', { ids: tasks.map((t) => t.mj_id) })
        .catch(() => undefined);
    }
    if (!answer || answer.status !== 200 || !Array.isArray(answer.body)) {
      const until = fail(channelId);
      for (const t of tasks) {
        // Timeouts hold even when the upstream is gone.
        if (now - t.submit_time > s.timeoutMs) await apply(t, { status: t.status }, now);
        else await d.repo.release(t.id, s.owner, until);
      }
      return;
    }
    backoff.delete(channelId);
    // The next poll counts from the answer, not from the claim (claims of a big batch take time).
    const answeredAt = Date.now();
    const byId = new Map<string, Record<string, unknown>>();
    for (const up of answer.body as Record<string, unknown>[])
      if (up && typeof up === 'object') byId.set(str(up.id), up);
    for (const t of tasks) {
      const up = byId.get(t.mj_id);
      await apply(t, up ? progressOf(up) : { status: t.status }, answeredAt);
    }
  };

  let ticks = 0;
  return {
    /** One round: claim what is due, poll it, apply the answers. */
    async tick(): Promise<void> {
      const now = Date.now();
      const due = await d.repo.due(now, s.batch);
      const claimed = new Map<number, MjTaskDoc[]>();
      for (const c of due) {
        if ((backoff.get(c.channel_id)?.until ?? 0) > now) continue;
        const t = await d.repo.claim(c.id, s.owner, now, s.leaseMs);
        if (!t || isFinal(t.status)) continue;
        const list = claimed.get(t.channel_id) ?? [];
        list.push(t);
        claimed.set(t.channel_id, list);
      }
      await Promise.all([...claimed].map(([ch, list]) => pollChannel(ch, list)));
      if (++ticks % 10 === 0) await this.repair();
    },
    /** Finishes settles and refunds that a crash or an unreachable billing left open. */
    async repair(): Promise<void> {
      for (const t of await d.repo.billingPending(100)) {
        await finishBilling(d, t).catch((err) => d.onError(err, 'task billing repair failed'));
      }
    },
  };
}
