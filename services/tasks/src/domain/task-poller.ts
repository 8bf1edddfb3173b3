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

/** What a platform's poller works with: its deps, platform, settings, lease ops and channel backoff. */
interface PollerContext<T extends LeasedTask> {
  d: PollerDeps;
  platform: TaskPlatform<T>;
  s: PollerSettings;
  ops: TaskPlatform<T>['ops'];
  /** A hold this old is renewed (10 minutes before billing would give it back, a third of a short expiry). */
  renewAt: number;
  backoff: Map<number, { until: number; n: number }>;
}

/** What a round does with its tasks besides the writes done one by one. */
interface RoundOut<T extends LeasedTask> {
  /** Changed, non-final results on a platform without change hooks: one bulk write. */
  writes: PollWrite<T>[];
  /** Unchanged polls: no Mongo write, only the schedule moves (by next poll time). */
  kept: Map<number, number[]>;
}

/** Adds an id to the list kept under a key. */
function addTo(map: Map<number, number[]>, key: number, ...ids: number[]): void {
  map.set(key, [...(map.get(key) ?? []), ...ids]);
}

/** A channel that failed is left alone for a growing time (up to backoffMaxMs); answers until when. */
export function backOff(
  backoff: Map<number, { until: number; n: number }>,
  s: Pick<PollerSettings, 'intervalMs' | 'backoffMaxMs'>,
  channelId: number,
  now = Date.now(),
): number {
  const b = backoff.get(channelId) ?? { until: 0, n: 0 };
  b.n += 1;
  b.until = now + Math.min(s.intervalMs * 2 ** b.n, s.backoffMaxMs);
  backoff.set(channelId, b);
  return b.until;
}

/** Due tasks whose channel is not in backoff, and the others by the time their channel's backoff ends. */
export function splitByBackoff<T extends LeasedTask>(
  due: T[],
  backoff: Map<number, { until: number }>,
  now: number,
): { wanted: T[]; held: Map<number, number[]> } {
  const wanted: T[] = [];
  const held = new Map<number, number[]>();
  for (const c of due) {
    const until = backoff.get(c.channel_id)?.until ?? 0;
    if (until <= now) wanted.push(c);
    else addTo(held, until, c.id);
  }
  return { wanted, held };
}

/** The renewed hold's fields when the task's hold is due for renewal; {} otherwise or on error. */
async function renewal<T extends LeasedTask>(x: PollerContext<T>, t: T, now: number): Promise<Partial<T>> {
  if (t.billing !== 'held' || now - holdOf(t).at < x.renewAt) return {};
  try {
    return (await renewHold(x.d, t, now)) as Partial<T>;
  } catch (err) {
    x.d.onError(err, `${x.platform.name} hold renewal failed; next poll retries`);
    return {};
  }
}

/**
 * Applies a poll answer to a task. A final result (or the timeout) and a change on a platform
 * with change hooks are written at once (one conditional updateOne; only the replica that wrote
 * a final result bills it); other changes are collected for one bulk write; an unchanged poll
 * writes nothing to Mongo.
 */
async function applyAnswer<T extends LeasedTask>(
  x: PollerContext<T>,
  t: T,
  answer: { p: Partial<T>; now: number; nextPollAt: number },
  lease: Lease,
  out: RoundOut<T>,
): Promise<void> {
  const { d, platform, s, ops } = x;
  const { now, nextPollAt } = answer;
  let p = answer.p;
  let finish = finishOf(p.status);
  if (!finish && now - t.submitted_ms > s.timeoutMs) {
    Object.assign(p, platform.timedOut(now));
    finish = 'refund';
  }
  if (finish) p = { ...platform.finished(now), ...p };
  else Object.assign(p, await renewal(x, t, now));
  if (!finish && !changed(t, p)) {
    addTo(out.kept, nextPollAt, t.id);
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
}

/** Applies `fn` to each task with a few in flight (final writes and their billing wait on peers). */
async function eachLimited<T>(tasks: T[], fn: (t: T) => Promise<void>): Promise<void> {
  let i = 0;
  const worker = async () => {
    while (i < tasks.length) await fn(tasks[i++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(APPLY_CONCURRENCY, tasks.length) }, worker));
}

/** Polls one channel's tasks and writes what changed; a channel that does not answer backs off. */
async function pollChannel<T extends LeasedTask>(
  x: PollerContext<T>,
  channelId: number,
  tasks: T[],
  lease: Lease,
): Promise<void> {
  const { d, platform, s, ops } = x;
  const now = Date.now();
  const channel = await d.peers.channel(channelId).catch(() => undefined);
  const answers = channel ? await platform.fetch(channel, tasks).catch(() => undefined) : undefined;
  const out: RoundOut<T> = { writes: [], kept: new Map() };
  if (!answers) {
    const until = backOff(x.backoff, s, channelId);
    const left: number[] = [];
    // Timeouts and hold renewals hold even when the upstream is gone.
    await eachLimited(tasks, async (t) => {
      if (now - t.submitted_ms > s.timeoutMs || now - holdOf(t).at >= x.renewAt)
        await applyAnswer(x, t, { p: {}, now, nextPollAt: until }, lease, out);
      else left.push(t.id);
    });
    addTo(out.kept, until, ...left);
  } else {
    x.backoff.delete(channelId);
    // The next poll counts from the answer, not from the claim (claims of a big batch take time).
    const answeredAt = Date.now();
    await eachLimited(tasks, (t) =>
      applyAnswer(
        x,
        t,
        { p: answers.get(platform.upstreamId(t)) ?? {}, now: answeredAt, nextPollAt: answeredAt + s.intervalMs },
        lease,
        out,
      ),
    );
  }
  await ops.applyMany(out.writes, lease, s.owner, s.leaseMs);
  for (const [at, ids] of out.kept) await ops.keep(ids, lease, at);
}

/** Tasks by their channel. */
function byChannel<T extends LeasedTask>(tasks: T[]): Map<number, T[]> {
  const claimed = new Map<number, T[]>();
  for (const t of tasks) {
    const list = claimed.get(t.channel_id) ?? [];
    list.push(t);
    claimed.set(t.channel_id, list);
  }
  return claimed;
}

export function taskPoller<T extends LeasedTask>(d: PollerDeps, platform: TaskPlatform<T>, s: PollerSettings) {
  const x: PollerContext<T> = {
    d,
    platform,
    s,
    ops: platform.ops,
    // Renew a hold 10 minutes before billing would give it back (a third of a short expiry).
    renewAt: s.holdTtlMs - Math.min(10 * 60_000, Math.floor(s.holdTtlMs / 3)),
    backoff: new Map(),
  };
  const { ops } = x;

  /** Finishes settles and refunds that a crash or an unreachable billing left open. */
  const repair = async (): Promise<void> => {
    for (const t of await ops.billingPending(100)) {
      await finishBilling(d, platform, t).catch((err) => d.onError(err, `${platform.name} billing repair failed`));
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
      // A token per round: under the Mongo lease (Redis failing) the tasks it won carry it.
      const token = `${s.owner}#${platform.name}#${++round}`;
      const { tasks: due, lease } = await ops.due(now, s.batch, s.leaseMs, token);
      const { wanted, held } = splitByBackoff(due, x.backoff, now);
      for (const [until, ids] of held) await ops.defer(ids, until);
      const mine = lease.redis
        ? wanted
        : await ops.claimMany(
            wanted.map((t) => t.id),
            token,
            now,
            s.leaseMs,
          );
      await Promise.all([...byChannel(mine)].map(([ch, list]) => pollChannel(x, ch, list, lease)));
      if (++ticks % 10 === 0) await repair();
    },
    /** Resolves when a running schedule rebuild is done (tests). */
    settled: () => rebuilding ?? Promise.resolve(),
    repair,
  };
}
