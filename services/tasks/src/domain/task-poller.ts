/**
 * Follows unfinished tasks of one platform. Each tick a replica claims due tasks from the Redis
 * schedule (the claim is the lease: one replica per task until it expires; with Redis failing, a
 * Mongo lease instead, leased-tasks.ts), asks each upstream for its tasks, and writes only the
 * answers that change a task; an unchanged poll only moves the task in the schedule. Final states
 * settle or refund (task-billing.ts), by the one replica whose final record made the task final; tasks older than the timeout fail and are refunded. An
 * upstream that fails is left alone for a growing backoff.
 */
import type { Lease, LeasedTask, PollWrite } from '../data/leased-tasks.ts';
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

/** Final writes (and their settle or refund) in flight per channel and round. */
const APPLY_CONCURRENCY = 8;

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

  /** What a round does with its tasks besides the writes done one by one. */
  interface RoundOut {
    /** Changed, non-final results on a platform without change hooks: one bulk write. */
    writes: PollWrite<T>[];
    /** Unchanged polls: no Mongo write, only the schedule moves (by next poll time). */
    kept: Map<number, number[]>;
  }

  /**
   * Applies a poll answer to a task. A final result (or the timeout) and a change on a platform
   * with change hooks are written at once (one conditional updateOne; only the replica that wrote
   * a final result bills it); other changes are collected for one bulk write; an unchanged poll
   * writes nothing to Mongo.
   */
  const apply = async (t: T, p: Partial<T>, now: number, nextPollAt: number, lease: Lease, out: RoundOut) => {
    let finish = finishOf(p.status);
    if (!finish && now - t.submitted_ms > s.timeoutMs) {
      Object.assign(p, platform.timedOut(now));
      finish = 'refund';
    }
    if (finish) p = { ...platform.finished(now), ...p };
    else Object.assign(p, await renewal(t, now));
    if (!finish && !changed(t, p)) {
      out.kept.set(nextPollAt, [...(out.kept.get(nextPollAt) ?? []), t.id]);
      return;
    }
    const w: PollWrite<T> = { task: t, fields: p, nextPollAt, ...(finish ? { finish } : {}) };
    if (!finish && !platform.changed) {
      out.writes.push(w);
      return;
    }
    const next: T = { ...t, ...p, polls: t.polls + 1, ...(finish ? { final: true, billing: finish } : {}) };
    if (finish) {
      // Only the replica whose record made the task final bills it (and tells the client).
      if (!(await ops.finish(w, s.owner))) return;
      await finishBilling(d, platform, next).catch((err) =>
        d.onError(err, `${platform.name} billing failed; repair retries`),
      );
    } else if (!(await ops.applyPoll(w, lease, s.owner, s.leaseMs))) return;
    platform.changed?.(next);
  };

  /** Applies `fn` to each task with a few in flight (final writes and their billing wait on peers). */
  const each = async (tasks: T[], fn: (t: T) => Promise<void>) => {
    let i = 0;
    const worker = async () => {
      while (i < tasks.length) await fn(tasks[i++] as T);
    };
    await Promise.all(Array.from({ length: Math.min(APPLY_CONCURRENCY, tasks.length) }, worker));
  };

  const pollChannel = async (channelId: number, tasks: T[], lease: Lease): Promise<void> => {
    const now = Date.now();
    const channel = await d.peers.channel(channelId).catch(() => undefined);
    const answers = channel ? await platform.fetch(channel, tasks).catch(() => undefined) : undefined;
    const out: RoundOut = { writes: [], kept: new Map() };
    if (!answers) {
      const until = fail(channelId);
      const left: number[] = [];
      // Timeouts and hold renewals hold even when the upstream is gone.
      await each(tasks, async (t) => {
        if (now - t.submitted_ms > s.timeoutMs || now - holdOf(t).at >= renewAt)
          await apply(t, {}, now, until, lease, out);
        else left.push(t.id);
      });
      out.kept.set(until, [...(out.kept.get(until) ?? []), ...left]);
    } else {
      backoff.delete(channelId);
      // The next poll counts from the answer, not from the claim (claims of a big batch take time).
      const answeredAt = Date.now();
      await each(tasks, (t) =>
        apply(t, answers.get(platform.upstreamId(t)) ?? {}, answeredAt, answeredAt + s.intervalMs, lease, out),
      );
    }
    await ops.applyMany(out.writes, lease, s.owner, s.leaseMs);
    for (const [at, ids] of out.kept) await ops.keep(ids, lease, at);
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
      // A token per round: under the Mongo lease (Redis failing) the tasks it won carry it.
      const token = `${s.owner}#${platform.name}#${++round}`;
      const { tasks: due, lease } = await ops.due(now, s.batch, s.leaseMs, token);
      const wanted: T[] = [];
      const held = new Map<number, number[]>();
      for (const c of due) {
        const until = backoff.get(c.channel_id)?.until ?? 0;
        if (until <= now) wanted.push(c);
        else held.set(until, [...(held.get(until) ?? []), c.id]);
      }
      for (const [until, ids] of held) await ops.defer(ids, until);
      const mine = lease.redis
        ? wanted
        : await ops.claimMany(
            wanted.map((t) => t.id),
            token,
            now,
            s.leaseMs,
          );
      const claimed = new Map<number, T[]>();
      for (const t of mine) {
        const list = claimed.get(t.channel_id) ?? [];
        list.push(t);
        claimed.set(t.channel_id, list);
      }
      await Promise.all([...claimed].map(([ch, list]) => pollChannel(ch, list, lease)));
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
