/**
 * What every polled task (drawing, music, video) shares: owner and price, billing state, and the
 * poll lease. Only a poll that changes a task writes it (ADR 0001: no transactions):
 *
 * - Who polls: normally the Redis schedule (due-schedule.ts), whose claim hides a task from every
 *   other replica for the lease time: an unchanged poll costs no Mongo write at all, a change one
 *   update by `_id` and `final: false`, sent only while the claim still has half its time left
 *   (the filter keeps a late write from undoing a final transition; on FerretDB it stays an index
 *   lookup since id-index.patch pushes `_id` down beside other keys, ADR 0001).
 * - A final transition (SUCCESS, FAILURE, the timeout) is decided in Mongo, once: the replica
 *   whose insert of the task's `_id` into `<collection>_finals` succeeds (unique `_id`, one index
 *   lookup) made the task final and alone settles or refunds at once; the record carries the final
 *   fields, so a replica that loses (or finds a finisher crashed before writing the task) writes the
 *   same fields and leaves billing to repair, which is idempotent by request id.
 * - When Redis fails, the replica falls back to the Mongo lease of before (a scan for due tasks,
 *   a conditional update of `lease_until`/`lease_owner`, writes filtered on the lease): slow on
 *   FerretDB, but tasks are still polled, time out and are billed once.
 */
import type { Collection } from 'mongoose';
import type { DueSchedule } from './due-schedule.ts';
import { leaseWrites, quiet } from './lease-writes.ts';

/** What billing still has to do for a task: nothing, settle the hold, or give it back. */
export type BillingState = 'held' | 'settle' | 'settled' | 'refund' | 'refunded';

export interface LeasedTask {
  _id: number;
  id: number;
  user_id: number;
  username: string;
  token_id: number;
  token_name: string;
  group: string;
  channel_id: number;
  status: string;
  fail_reason: string;
  /** Submit time in milliseconds (the timeout counts from it). */
  submitted_ms: number;
  /** Quota charged at submit and the price that produced it. */
  quota: number;
  model: string;
  model_price: number;
  group_ratio: number;
  /** The billing idempotency key (pre-consume, settle, refund) and the charge's log key. */
  request_id: string;
  /**
   * The reservation now holding the charge, when it was renewed (billing gives a hold back after
   * an hour; a task may run longer): `<request_id>:h<n>`, taken at `hold_at` (ms). Absent: the
   * submit's own hold, `request_id`, taken at `submitted_ms`.
   */
  hold_id?: string;
  hold_at?: number;
  holds_renewed?: number;
  /**
   * The user subscription that pays the hold (billing chose it at pre-consume; absent or '': the
   * wallet). Its settle charges the subscription's windows; the logs show it as billing_source.
   */
  subscription_id?: string;
  billing: BillingState;
  final: boolean;
  notify_hook: string;
  lease_until: number;
  lease_owner: string;
  /** Written with each change (and by the Mongo lease path); the Redis schedule holds the live time. */
  next_poll_at: number;
  /** Changed poll results written to the task, and the replicas that wrote them (tests read both). */
  polls: number;
  pollers?: string[];
  updated_at: number;
}

export type LeaseFields = 'lease_until' | 'lease_owner' | 'polls' | 'pollers' | 'updated_at';

/**
 * How a round holds its tasks: the Redis claim (until `until`; the members' score is the proof),
 * or, with Redis failing, the Mongo lease stamped with `token`.
 */
export type Lease = { redis: true; until: number } | { redis: false; token: string };

/** A final transition, recorded once per task (its `_id` is the task's). */
export interface FinalRecord {
  _id: number;
  /** The fields that made the task final (status, fail reason, final, billing, ...). */
  set: Record<string, unknown>;
  by: string;
  at: number;
}

/** One changed poll result to write: the task as read, its new fields, what comes next (or how it ends). */
export interface PollWrite<T> {
  task: T;
  fields: Partial<T>;
  nextPollAt: number;
  finish?: BillingState;
}

/** What the lease operations share: the tasks (typed and as LeasedTask for filters), finals, scope, schedule. */
export interface LeaseContext<T extends LeasedTask> {
  col: Collection<T>;
  /** The same collection: the driver's filter types do not follow a generic document. */
  c: Collection<LeasedTask>;
  finals: Collection<FinalRecord>;
  scope: Record<string, unknown>;
  schedule: DueSchedule | undefined;
}

/**
 * Claimed schedule members as read from Mongo: those ready for a poll, those gone (deleted or
 * final), and those due later (under a Mongo lease or moved) by the time they are due.
 */
export function sortClaimed<T extends LeasedTask>(ids: number[], docs: T[], now: number) {
  const found = new Set(docs.map((d) => d._id));
  const gone = ids.filter((id) => !found.has(id));
  const ready: T[] = [];
  const later = new Map<number, number[]>();
  for (const d of docs) {
    if (d.final) gone.push(d._id);
    else if (d.next_poll_at <= now && d.lease_until <= now) ready.push(d);
    else {
      const at = Math.max(d.next_poll_at, d.lease_until);
      later.set(at, [...(later.get(at) ?? []), d._id]);
    }
  }
  return { ready, gone, later };
}

/** Which tasks a round polls: due ones from the schedule (or a scan), the schedule's rebuild, the Mongo lease. */
function dueOps<T extends LeasedTask>(x: LeaseContext<T>) {
  const { col, c, scope, schedule } = x;
  const scan = (now: number, limit: number) =>
    col
      .find({ ...scope, final: false, next_poll_at: { $lte: now }, lease_until: { $lte: now } } as never)
      .sort({ next_poll_at: 1 })
      .limit(limit)
      .toArray() as Promise<T[]>;
  return {
    /**
     * Unfinished tasks due for a poll, with how this round holds them. With a schedule, the
     * claimed members are this round's (the claim is the lease) and are read by `_id`; those not
     * due in Mongo (final, under a fallback replica's Mongo lease, moved) go back to their Mongo
     * time or leave the schedule. Without a schedule, or when Redis fails, they are scan
     * candidates whose Mongo lease claimMany() still has to take.
     */
    async due(now: number, limit: number, leaseMs: number, token: string): Promise<{ tasks: T[]; lease: Lease }> {
      const fallback = async () => ({ tasks: await scan(now, limit), lease: { redis: false, token } as Lease });
      if (!schedule) return fallback();
      let ids: number[];
      try {
        ids = await schedule.claim(now, limit, leaseMs);
      } catch {
        return fallback();
      }
      const lease: Lease = { redis: true, until: now + leaseMs };
      if (ids.length === 0) return { tasks: [], lease };
      const docs = (await c.find({ _id: { $in: ids } }).toArray()) as T[];
      const { ready, gone, later } = sortClaimed(ids, docs, now);
      await quiet(schedule.remove(gone));
      for (const [at, list] of later) await quiet(schedule.schedule(list, at));
      return { tasks: ready, lease };
    },

    /** Moves tasks' next poll in the schedule only (a channel in backoff). */
    async defer(ids: number[], at: number): Promise<void> {
      await quiet(schedule?.schedule(ids, at));
    },

    /**
     * Rebuilds the schedule from Mongo when its marker is missing (first start, expired every
     * `rebuildMs`, Redis wiped): one scan of unfinished tasks and of open billing. True when it ran.
     */
    async rebuild(rebuildMs: number): Promise<boolean> {
      if (!schedule || !(await schedule.takeRebuild(rebuildMs))) return false;
      try {
        const open = (await c
          .find({ ...scope, final: false }, { projection: { _id: 1, next_poll_at: 1, lease_until: 1 } })
          .toArray()) as LeasedTask[];
        await schedule.restore(open.map((t) => ({ id: t._id, at: Math.max(t.next_poll_at, t.lease_until) })));
        const billing = await c
          .find({ ...scope, final: true, billing: { $in: ['settle', 'refund'] } }, { projection: { _id: 1 } })
          .toArray();
        await schedule.billingOpen(billing.map((t) => t._id));
        return true;
      } catch (err) {
        await quiet(schedule.dropRebuild());
        throw err;
      }
    },

    /**
     * The Mongo lease (fallback when Redis fails): takes the lease of those tasks that are still
     * due and free, in two statements: one conditional updateMany stamps this round's token, one
     * find reads back what it got (each document's update is atomic with its filter, so two
     * replicas never both win one).
     */
    async claimMany(ids: number[], token: string, now: number, leaseMs: number): Promise<T[]> {
      if (ids.length === 0) return [];
      await c.updateMany(
        // Due as well as free: a replica that read a task as due just before another one polled
        // it and gave the lease back must not poll it again at once.
        { _id: { $in: ids }, final: false, lease_until: { $lte: now }, next_poll_at: { $lte: now } },
        { $set: { lease_until: now + leaseMs, lease_owner: token } },
      );
      return (await c.find({ _id: { $in: ids }, lease_owner: token }).toArray()) as T[];
    },
  };
}

/**
 * Final tasks whose settle or refund did not finish (a crash, billing down). With a schedule
 * they come from its billing set (read by `_id`); the rebuild refills that set from Mongo.
 */
async function billingPending<T extends LeasedTask>(x: LeaseContext<T>, limit: number): Promise<T[]> {
  const { c, scope, schedule } = x;
  const pending = { final: true, billing: { $in: ['settle', 'refund'] as BillingState[] } };
  if (!schedule)
    return (await c
      .find({ ...scope, ...pending })
      .limit(limit)
      .toArray()) as T[];
  const ids = await schedule.billingPending(limit).catch(() => [] as number[]);
  if (ids.length === 0) return [];
  const docs = (await c.find({ _id: { $in: ids }, ...pending }).toArray()) as T[];
  const open = new Set(docs.map((d) => d._id));
  await quiet(schedule.billingDone(ids.filter((id) => !open.has(id))));
  return docs;
}

/**
 * `scope` narrows due() and billingPending() to some tasks (e.g. one platform of a collection).
 * With a `schedule` (due-schedule.ts) due tasks come from Redis and are read by `_id` (no scan);
 * without one, or while Redis fails, due() scans the collection and the Mongo lease decides.
 */
export function leaseOps<T extends LeasedTask>(
  col: Collection<T>,
  finals: Collection<FinalRecord>,
  scope: Record<string, unknown> = {},
  schedule?: DueSchedule,
) {
  // The driver's filter types do not follow a generic document; the filters only name
  // LeasedTask fields.
  const x: LeaseContext<T> = { col, c: col as unknown as Collection<LeasedTask>, finals, scope, schedule };
  return {
    schedule,
    ...dueOps(x),
    ...leaseWrites(x),
    billingPending: (limit: number) => billingPending(x, limit),
  };
}

export type LeaseOps<T extends LeasedTask> = ReturnType<typeof leaseOps<T>>;
