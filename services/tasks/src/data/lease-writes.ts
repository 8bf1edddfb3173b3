/**
 * The writes of a poll round (leased-tasks.ts explains the lease): a final transition decided once
 * across replicas, changed non-final results under the round's lease, unchanged polls that only
 * move the schedule, and billing marked done.
 */
import { isDuplicateKey } from '@aigw/common';
import type { BillingState, Lease, LeaseContext, LeasedTask, PollWrite } from './leased-tasks.ts';

/** Redis errors never stop polling or billing: the rebuild repairs the schedule. */
export const quiet = (p: Promise<unknown> | undefined) => p?.catch(() => undefined);

/**
 * The update of one changed, non-final poll: under the Redis claim by `_id` and `final: false`
 * (a round whose write lands after another replica made the task final must not put a running
 * status back; the local server's patched `_id` pushdown keeps such a filter an index lookup).
 */
export function pollUpdate<T extends LeasedTask>(w: PollWrite<T>, lease: Lease, poller: string, now: number) {
  const set: Record<string, unknown> = { ...w.fields, updated_at: now, next_poll_at: w.nextPollAt };
  const filter: Record<string, unknown> = { _id: w.task._id, final: false };
  if (!lease.redis) {
    Object.assign(filter, { lease_owner: lease.token });
    Object.assign(set, { lease_until: 0, lease_owner: '' });
  }
  return { filter, update: { $set: set, $inc: { polls: 1 }, $addToSet: { pollers: poller } } };
}

/** Whether a round may still write under its lease (a Redis claim with half its time left). */
export const mayWrite = (lease: Lease, leaseMs: number) => !lease.redis || Date.now() < lease.until - leaseMs / 2;

/**
 * Makes a task final, once across replicas: true when this call's record won (the caller
 * settles or refunds); false when another replica's did (its fields are written to the task
 * if they are not there yet, and billing is left to repair).
 */
async function finishOnce<T extends LeasedTask>(x: LeaseContext<T>, w: PollWrite<T>, poller: string) {
  const { c, finals, schedule } = x;
  const id = w.task._id;
  const now = Date.now();
  let set: Record<string, unknown> = {
    ...w.fields,
    final: true,
    billing: w.finish,
    updated_at: now,
    lease_until: 0,
    lease_owner: '',
  };
  let won = true;
  try {
    await finals.insertOne({ _id: id, set, by: poller, at: now });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    won = false;
    const first = await finals.findOne({ _id: id });
    if (!first) throw err;
    set = first.set;
  }
  if (won || !w.task.final) {
    await c.updateOne({ _id: id }, { $set: set, $inc: { polls: 1 }, $addToSet: { pollers: poller } });
  }
  // Billing first: a task that left the schedule is still found by repair.
  await quiet(schedule?.billingOpen([id]));
  await quiet(schedule?.remove([id]));
  return won;
}

/** A round's writes under its lease, and billing marked done. */
export function leaseWrites<T extends LeasedTask>(x: LeaseContext<T>) {
  const { c, schedule } = x;

  /** Moves polled tasks to their next poll: under a Redis lease only if this round still holds it. */
  const reschedule = async (ids: number[], lease: Lease, at: number) => {
    if (!schedule || ids.length === 0) return;
    if (lease.redis) await quiet(schedule.release(ids, lease.until, at));
    else await quiet(schedule.schedule(ids, at));
  };

  return {
    finish: (w: PollWrite<T>, poller: string): Promise<boolean> => finishOnce(x, w, poller),

    /**
     * Writes one changed, non-final poll result (one update). False when the round's lease is too
     * old to write (the next poll reads the task again) or the Mongo lease was lost.
     */
    async applyPoll(w: PollWrite<T>, lease: Lease, poller: string, leaseMs: number): Promise<boolean> {
      if (!mayWrite(lease, leaseMs)) return false;
      const { filter, update } = pollUpdate(w, lease, poller, Date.now());
      const r = await c.updateOne(filter as never, update as never);
      await reschedule([w.task._id], lease, w.nextPollAt);
      return r.modifiedCount === 1;
    },

    /** Writes many changed, non-final poll results of a round in bulk statements (100 each). */
    async applyMany(writes: PollWrite<T>[], lease: Lease, poller: string, leaseMs: number): Promise<number> {
      let n = 0;
      for (let i = 0; i < writes.length; i += 100) {
        if (!mayWrite(lease, leaseMs)) break;
        const part = writes.slice(i, i + 100);
        const now = Date.now();
        const r = await c.bulkWrite(part.map((w) => ({ updateOne: pollUpdate(w, lease, poller, now) })) as never, {
          ordered: false,
        });
        n += r.modifiedCount;
        const byAt = new Map<number, number[]>();
        for (const w of part) byAt.set(w.nextPollAt, [...(byAt.get(w.nextPollAt) ?? []), w.task._id]);
        for (const [at, ids] of byAt) await reschedule(ids, lease, at);
      }
      return n;
    },

    /**
     * Polls that changed nothing (or an upstream that did not answer): under the Redis lease only
     * the schedule moves (no Mongo write); under the Mongo lease the lease is given back with the
     * next poll time.
     */
    async keep(ids: number[], lease: Lease, nextPollAt: number): Promise<void> {
      if (ids.length === 0) return;
      if (!lease.redis) {
        await c.updateMany(
          { _id: { $in: ids }, lease_owner: lease.token },
          { $set: { lease_until: 0, lease_owner: '', next_poll_at: nextPollAt } },
        );
      }
      await reschedule(ids, lease, nextPollAt);
    },

    /**
     * Marks billing done ('settle' -> 'settled', 'refund' -> 'refunded'). By bare `_id`: a final
     * task's billing only ever moves to its done state, and settle and refund are idempotent.
     */
    async billed(id: number, _from: BillingState, to: BillingState): Promise<void> {
      await c.updateOne({ _id: id }, { $set: { billing: to } });
      await quiet(schedule?.billingDone([id]));
    },
  };
}
