/**
 * What every polled task (drawing, music, video) shares: owner and price, billing state, and the
 * poll lease. Every change is a single-document update whose filter carries the lease
 * (`lease_until`, `lease_owner`) or the `final` flag, so two replicas never both apply a poll
 * result or a final transition (ADR 0001: no transactions).
 */
import type { Collection } from 'mongoose';
import type { DueSchedule } from './due-schedule.ts';

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
  billing: BillingState;
  final: boolean;
  notify_hook: string;
  lease_until: number;
  lease_owner: string;
  next_poll_at: number;
  /** Poll results applied and the replicas that applied them (tests read both). */
  polls: number;
  pollers?: string[];
  updated_at: number;
}

export type LeaseFields = 'lease_until' | 'lease_owner' | 'polls' | 'pollers' | 'updated_at';

/**
 * `scope` narrows due() and billingPending() to some tasks (e.g. one platform of a collection).
 * With a `schedule` (due-schedule.ts) due tasks come from Redis and are read by `_id` (no scan);
 * without one, or while Redis fails, due() scans the collection.
 */
export function leaseOps<T extends LeasedTask>(
  col: Collection<T>,
  scope: Record<string, unknown> = {},
  schedule?: DueSchedule,
) {
  // The driver's filter types do not follow a generic document; the filters below only name
  // LeasedTask fields.
  const c = col as unknown as Collection<LeasedTask>;
  const scan = (now: number, limit: number) =>
    col
      .find({ ...scope, final: false, next_poll_at: { $lte: now }, lease_until: { $lte: now } } as never)
      .sort({ next_poll_at: 1 })
      .limit(limit)
      .toArray() as Promise<T[]>;
  /** Redis errors never stop polling or billing: the rebuild repairs the schedule. */
  const quiet = (p: Promise<unknown> | undefined) => p?.catch(() => undefined);
  return {
    schedule,
    /**
     * Unfinished tasks due for a poll whose lease is free (candidates; claimMany() decides). With
     * a schedule, the claimed members are read by `_id`; those not due in Mongo (final, leased
     * elsewhere, moved) go back to their Mongo time or leave the schedule.
     */
    async due(now: number, limit: number, leaseMs = 30_000): Promise<T[]> {
      if (!schedule) return scan(now, limit);
      let ids: number[];
      try {
        ids = await schedule.claim(now, limit, leaseMs);
      } catch {
        return scan(now, limit);
      }
      if (ids.length === 0) return [];
      const docs = (await c.find({ _id: { $in: ids } }).toArray()) as T[];
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
      await quiet(schedule.remove(gone));
      for (const [at, list] of later) await quiet(schedule.schedule(list, at));
      return ready;
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
     * Takes the poll lease of those tasks that are still due and free, in two statements: one
     * conditional updateMany stamps this round's lease token, one find reads back what it got
     * (each document's update is atomic with its filter, so two replicas never both win one).
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

    /**
     * Applies a poll result under the lease; `finish` also makes the task final and names what
     * billing must do. False when the lease was lost (another replica polls it now).
     */
    async applyPoll(
      id: number,
      token: string,
      fields: Partial<T>,
      next: { nextPollAt: number; finish?: BillingState; poller: string },
    ): Promise<boolean> {
      const set: Record<string, unknown> = { ...fields, lease_until: 0, lease_owner: '', updated_at: Date.now() };
      if (next.finish) {
        set.final = true;
        set.billing = next.finish;
      } else set.next_poll_at = next.nextPollAt;
      const r = await c.updateOne(
        { _id: id, lease_owner: token, final: false },
        { $set: set, $inc: { polls: 1 }, $addToSet: { pollers: next.poller } },
      );
      if (r.modifiedCount !== 1) return false;
      if (next.finish) {
        // Billing first: a task that left the schedule is still found by repair.
        await quiet(schedule?.billingOpen([id]));
        await quiet(schedule?.remove([id]));
      } else await quiet(schedule?.schedule([id], next.nextPollAt));
      return true;
    },

    /**
     * Applies the same non-final poll result (`fields`, often none) to many tasks of one round at
     * once (one statement instead of one per task): fields set, lease given back, next poll time,
     * poll counted. Only the tasks still leased to `token` and unfinished change; returns how many did.
     */
    async applyMany(
      ids: number[],
      token: string,
      fields: Partial<T>,
      next: { nextPollAt: number; poller: string },
    ): Promise<number> {
      if (ids.length === 0) return 0;
      const r = await c.updateMany(
        { _id: { $in: ids }, lease_owner: token, final: false },
        {
          $set: {
            ...(fields as Record<string, unknown>),
            lease_until: 0,
            lease_owner: '',
            next_poll_at: next.nextPollAt,
            updated_at: Date.now(),
          },
          $inc: { polls: 1 },
          $addToSet: { pollers: next.poller },
        },
      );
      await quiet(schedule?.schedule(ids, next.nextPollAt));
      return r.modifiedCount;
    },

    /** Gives a lease back without a result (upstream unreachable), with the next poll time. */
    async release(id: number, token: string, nextPollAt: number): Promise<void> {
      await c.updateOne(
        { _id: id, lease_owner: token },
        { $set: { lease_until: 0, lease_owner: '', next_poll_at: nextPollAt } },
      );
      await quiet(schedule?.schedule([id], nextPollAt));
    },

    /** Marks billing done (from 'settle' or 'refund'); false when someone else did it. */
    async billed(id: number, from: BillingState, to: BillingState): Promise<boolean> {
      const r = await c.updateOne({ _id: id, billing: from }, { $set: { billing: to } });
      await quiet(schedule?.billingDone([id]));
      return r.modifiedCount === 1;
    },

    /**
     * Final tasks whose settle or refund did not finish (a crash, billing down). With a schedule
     * they come from its billing set (read by `_id`); the rebuild refills that set from Mongo.
     */
    async billingPending(limit: number): Promise<T[]> {
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
    },
  };
}

export type LeaseOps<T extends LeasedTask> = ReturnType<typeof leaseOps<T>>;
