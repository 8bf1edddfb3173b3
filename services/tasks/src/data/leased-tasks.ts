/**
 * What every polled task (drawing, music, video) shares: owner and price, billing state, and the
 * poll lease. Every change is a single-document update whose filter carries the lease
 * (`lease_until`, `lease_owner`) or the `final` flag, so two replicas never both apply a poll
 * result or a final transition (ADR 0001: no transactions).
 */
import type { Collection } from 'mongoose';

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

/** `scope` narrows due() and billingPending() to some tasks (e.g. one platform of a collection). */
export function leaseOps<T extends LeasedTask>(col: Collection<T>, scope: Record<string, unknown> = {}) {
  // The driver's filter types do not follow a generic document; the filters below only name
  // LeasedTask fields.
  const c = col as unknown as Collection<LeasedTask>;
  return {
    /** Unfinished tasks due for a poll whose lease is free (candidates; claimMany() decides). */
    due: (now: number, limit: number) =>
      col
        .find({ ...scope, final: false, next_poll_at: { $lte: now }, lease_until: { $lte: now } } as never)
        .sort({ next_poll_at: 1 })
        .limit(limit)
        .toArray() as Promise<T[]>,

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
      return r.modifiedCount === 1;
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
      return r.modifiedCount;
    },

    /** Gives a lease back without a result (upstream unreachable), with the next poll time. */
    async release(id: number, token: string, nextPollAt: number): Promise<void> {
      await c.updateOne(
        { _id: id, lease_owner: token },
        { $set: { lease_until: 0, lease_owner: '', next_poll_at: nextPollAt } },
      );
    },

    /** Marks billing done (from 'settle' or 'refund'); false when someone else did it. */
    async billed(id: number, from: BillingState, to: BillingState): Promise<boolean> {
      const r = await c.updateOne({ _id: id, billing: from }, { $set: { billing: to } });
      return r.modifiedCount === 1;
    },

    /** Final tasks whose settle or refund did not finish (a crash, billing down). */
    billingPending: (limit: number) =>
      c
        .find({ ...scope, final: true, billing: { $in: ['settle', 'refund'] } })
        .limit(limit)
        .toArray() as Promise<T[]>,
  };
}

export type LeaseOps<T extends LeasedTask> = ReturnType<typeof leaseOps<T>>;
