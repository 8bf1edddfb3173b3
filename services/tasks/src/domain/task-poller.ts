/**
 * Follows unfinished tasks of one platform. Each tick a replica picks due tasks, takes a lease on
 * each (a conditional update of `lease_until`: one replica per task at a time), asks each
 * upstream for its tasks in one call, and applies the answers under the lease. Final states
 * settle or refund (task-billing.ts); tasks older than the timeout fail and are refunded. An
 * upstream that fails is left alone for a growing backoff.
 */
import type { LeasedTask } from '../data/leased-tasks.ts';
import type { Peers, UsagePort } from './ports.ts';
import { finishBilling, holdOf, renewHold } from './task-billing.ts';
import { finishOf, type TaskPlatform } from './task-platform.ts';

export interface PollerSettings {
  owner: string;
  intervalMs: number;
  leaseMs: number;
  batch: number;
  timeoutMs: number;
  backoffMaxMs: number;
  /** How often the Redis poll schedule is rebuilt from Mongo (due-schedule.ts). */
  rebuildMs?: number;
  /** How long billing keeps a reservation (an hour); holds are renewed a margin before it. */
  holdTtlMs: number;
}

export interface PollerDeps {
  peers: Peers;
  usage: UsagePort;
  onError(err: unknown, what: string): void;
}

function changed<T extends LeasedTask>(t: T, p: Partial<T>): boolean {
  return (Object.keys(p) as (keyof T)[]).some((k) => p[k] !== undefined && p[k] !== t[k]);
}

export function taskPoller<T extends LeasedTask>(d: PollerDeps, platform: TaskPlatform<T>, s: PollerSettings) {
  const backoff = new Map<number, { until: number; n: number }>();
  const ops = platform.ops;

  const fail = (id: number) => {
    const b = backoff.get(id) ?? { until: 0, n: 0 };
    b.n += 1;
    b.until = Date.now() + Math.min(s.intervalMs * 2 ** b.n, s.backoffMaxMs);
    backoff.set(id, b);
    return b.until;
  };

  // Renew a hold 10 minutes before billing would give it back (a third of a short expiry).
  const renewAt = s.holdTtlMs - Math.min(10 * 60_000, Math.floor(s.holdTtlMs / 3));

  /** The renewed hold's fields when the task's hold is due for renewal; {} otherwise or on error. */
  const renewal = async (t: T, now: number): Promise<Partial<T>> => {
    if (t.billing !== 'held' || now - holdOf(t).at < renewAt) return {};
    try {
      return (await renewHold(d, t, now)) as Partial<T>;
    } catch (err) {
      d.onError(err, `${platform.name} hold renewal failed; next poll retries`);
      return {};
    }
  };

  /**
   * Applies a poll answer to a task. With `batch` given, a result that does not finish the task
   * (on a platform without change hooks) is only collected there, by its fields: the caller
   * applies each distinct result to all its tasks in one statement (applyMany).
   */
  const apply = async (
    t: T,
    p: Partial<T>,
    now: number,
    nextPollAt = now + s.intervalMs,
    batch?: Map<string, { fields: Partial<T>; ids: number[] }>,
  ): Promise<void> => {
    const token = t.lease_owner;
    let finish = finishOf(p.status);
    if (!finish && now - t.submitted_ms > s.timeoutMs) {
      Object.assign(p, platform.timedOut(now));
      finish = 'refund';
    }
    if (finish) p = { ...platform.finished(now), ...p };
    else Object.assign(p, await renewal(t, now));
    const didChange = changed(t, p);
    if (batch && !finish && (!didChange || !platform.changed)) {
      const fields: Partial<T> = didChange ? p : {};
      const key = JSON.stringify(fields);
      const group = batch.get(key) ?? { fields, ids: [] as number[] };
      group.ids.push(t.id);
      batch.set(key, group);
      return;
    }
    const ok = await ops.applyPoll(t.id, token, p, {
      nextPollAt,
      poller: s.owner,
      ...(finish ? { finish } : {}),
    });
    if (!ok) return;
    const next: T = { ...t, ...p, ...(finish ? { final: true, billing: finish } : {}) };
    if (finish) {
      await finishBilling(d, platform, next).catch((err) =>
        d.onError(err, `${platform.name} billing failed; repair retries`),
      );
    }
    if (didChange) platform.changed?.(next);
  };

  const pollChannel = async (channelId: number, tasks: T[]): Promise<void> => {
    const now = Date.now();
    const channel = await d.peers.channel(channelId).catch(() => undefined);
    const answers = channel ? await platform.fetch(channel, tasks).catch(() => undefined) : undefined;
    if (!answers) {
      const until = fail(channelId);
      for (const t of tasks) {
        // Timeouts and hold renewals hold even when the upstream is gone.
        if (now - t.submitted_ms > s.timeoutMs || now - holdOf(t).at >= renewAt) await apply(t, {}, now, until);
        else await ops.release(t.id, t.lease_owner, until);
      }
      return;
    }
    backoff.delete(channelId);
    // The next poll counts from the answer, not from the claim (claims of a big batch take time).
    const answeredAt = Date.now();
    const batch = new Map<string, { fields: Partial<T>; ids: number[] }>();
    for (const t of tasks) {
      await apply(t, answers.get(platform.upstreamId(t)) ?? {}, answeredAt, answeredAt + s.intervalMs, batch);
    }
    // Every task of a round carries the round's lease token.
    const token = tasks[0]?.lease_owner;
    if (!token) return;
    for (const { fields, ids } of batch.values()) {
      await ops.applyMany(ids, token, fields, { nextPollAt: answeredAt + s.intervalMs, poller: s.owner });
    }
  };

  let ticks = 0;
  let round = 0;
  let rebuilding: Promise<unknown> | undefined;
  return {
    /** One round: claim what is due, poll it, apply the answers. */
    async tick(): Promise<void> {
      // The schedule's rebuild scans the collection: it runs beside the polls, not before them.
      if (ops.schedule && !rebuilding) {
        rebuilding = ops
          .rebuild(s.rebuildMs ?? 10 * 60_000)
          .catch((err) => d.onError(err, `${platform.name} schedule rebuild failed; next tick retries`))
          .finally(() => {
            rebuilding = undefined;
          });
      }
      const now = Date.now();
      const due = await ops.due(now, s.batch, s.leaseMs);
      const wanted: number[] = [];
      const held = new Map<number, number[]>();
      for (const c of due) {
        const until = backoff.get(c.channel_id)?.until ?? 0;
        if (until <= now) wanted.push(c.id);
        else held.set(until, [...(held.get(until) ?? []), c.id]);
      }
      for (const [until, ids] of held) await ops.defer(ids, until);
      // A lease token per round: the tasks this round won are the ones carrying it.
      const token = `${s.owner}#${platform.name}#${++round}`;
      const claimed = new Map<number, T[]>();
      for (const t of await ops.claimMany(wanted, token, now, s.leaseMs)) {
        const list = claimed.get(t.channel_id) ?? [];
        list.push(t);
        claimed.set(t.channel_id, list);
      }
      await Promise.all([...claimed].map(([ch, list]) => pollChannel(ch, list)));
      if (++ticks % 10 === 0) await this.repair();
    },
    /** Finishes settles and refunds that a crash or an unreachable billing left open. */
    /** Resolves when a running schedule rebuild is done (tests). */
    settled: () => rebuilding ?? Promise.resolve(),
    async repair(): Promise<void> {
      for (const t of await ops.billingPending(100)) {
        await finishBilling(d, platform, t).catch((err) => d.onError(err, `${platform.name} billing repair failed`));
      }
    },
  };
}
