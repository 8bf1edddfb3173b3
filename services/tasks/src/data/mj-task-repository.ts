/**
 * Drawing tasks (`mj_tasks`). Every change is a single-document update; the poller's lease
 * (`lease_until`, `lease_owner`) and the `final` flag are conditions of those updates, so two
 * replicas never both apply a poll result or a final transition (ADR 0001: no transactions).
 */
import { nextSequence } from '@aigw/common';
import type { Collection, Connection } from 'mongoose';

/** What billing still has to do for a task: nothing, settle the hold, or give it back. */
export type BillingState = 'held' | 'settle' | 'settled' | 'refund' | 'refunded';

export interface MjTaskDoc {
  _id: number;
  id: number;
  user_id: number;
  username: string;
  token_id: number;
  token_name: string;
  group: string;
  channel_id: number;
  /** IMAGINE, UPSCALE, ... */
  action: string;
  mj_id: string;
  /** Submit code: 1, 21, 22. */
  code: number;
  status: string;
  progress: string;
  image_url: string;
  prompt: string;
  prompt_en: string;
  description: string;
  fail_reason: string;
  state: string;
  custom_id: string;
  /** Milliseconds. */
  submit_time: number;
  start_time: number;
  finish_time: number;
  /** Seconds. */
  created_at: number;
  /** Quota charged at submit and the price that produced it. */
  quota: number;
  model: string;
  model_price: number;
  group_ratio: number;
  /** JSON text. */
  buttons: string;
  properties: string;
  notify_hook: string;
  /** The billing idempotency key (pre-consume, settle, refund). */
  request_id: string;
  billing: BillingState;
  final: boolean;
  lease_until: number;
  lease_owner: string;
  next_poll_at: number;
  /** Poll results applied and the replicas that applied them (tests read both). */
  polls: number;
  pollers?: string[];
  updated_at: number;
}

export type NewMjTask = Omit<MjTaskDoc, '_id' | 'id' | 'lease_until' | 'lease_owner' | 'polls' | 'updated_at'>;

/** The fields a poll may change. */
export type MjProgress = Partial<
  Pick<
    MjTaskDoc,
    | 'status'
    | 'progress'
    | 'image_url'
    | 'prompt'
    | 'prompt_en'
    | 'description'
    | 'fail_reason'
    | 'start_time'
    | 'finish_time'
    | 'buttons'
    | 'properties'
  >
>;

export interface MjListQuery {
  userId?: number;
  channelId?: number;
  mjId?: string;
  start?: number;
  end?: number;
}

export function mjTaskRepository(conn: Connection) {
  const col = conn.collection('mj_tasks') as unknown as Collection<MjTaskDoc>;

  return {
    async init(): Promise<void> {
      await col.createIndex({ request_id: 1 }, { unique: true });
      await col.createIndex({ mj_id: 1, user_id: 1 });
      await col.createIndex({ final: 1, next_poll_at: 1 });
    },

    async insert(t: NewMjTask): Promise<MjTaskDoc> {
      const id = await nextSequence(conn, 'mj_tasks');
      const doc: MjTaskDoc = { ...t, _id: id, id, lease_until: 0, lease_owner: '', polls: 0, updated_at: Date.now() };
      await col.insertOne(doc);
      return doc;
    },

    /** The newest task with this upstream id, of one user (or any user when userId is 0). */
    async byMjId(mjId: string, userId: number): Promise<MjTaskDoc | null> {
      const filter = userId ? { mj_id: mjId, user_id: userId } : { mj_id: mjId };
      return col.findOne(filter, { sort: { _id: -1 } });
    },

    async byMjIds(ids: string[], userId: number): Promise<MjTaskDoc[]> {
      return col
        .find({ mj_id: { $in: ids }, user_id: userId })
        .sort({ _id: -1 })
        .toArray();
    },

    async list(q: MjListQuery, page: number, pageSize: number): Promise<{ items: MjTaskDoc[]; total: number }> {
      const f: Record<string, unknown> = {};
      if (q.userId) f.user_id = q.userId;
      if (q.channelId) f.channel_id = q.channelId;
      if (q.mjId) f.mj_id = q.mjId;
      if (q.start || q.end) {
        const range: Record<string, number> = {};
        if (q.start) range.$gte = q.start;
        if (q.end) range.$lte = q.end;
        f.submit_time = range;
      }
      const [items, total] = await Promise.all([
        col
          .find(f)
          .sort({ _id: -1 })
          .skip((page - 1) * pageSize)
          .limit(pageSize)
          .toArray(),
        col.countDocuments(f),
      ]);
      return { items, total };
    },

    /** Unfinished tasks due for a poll whose lease is free (candidates; claim() decides). */
    async due(now: number, limit: number): Promise<MjTaskDoc[]> {
      return col
        .find({ final: false, next_poll_at: { $lte: now }, lease_until: { $lte: now } })
        .sort({ next_poll_at: 1 })
        .limit(limit)
        .toArray();
    },

    /** Takes the poll lease of a task; null when another replica holds it or it finished. */
    async claim(id: number, owner: string, now: number, leaseMs: number): Promise<MjTaskDoc | null> {
      return col.findOneAndUpdate(
        { _id: id, final: false, lease_until: { $lte: now } },
        { $set: { lease_until: now + leaseMs, lease_owner: owner } },
        { returnDocument: 'after' },
      );
    },

    /**
     * Applies a poll result under the lease; `finish` also makes the task final and names what
     * billing must do. False when the lease was lost (another replica polls it now).
     */
    async applyPoll(
      id: number,
      owner: string,
      fields: MjProgress,
      next: { nextPollAt: number; finish?: BillingState },
    ): Promise<boolean> {
      const set: Record<string, unknown> = { ...fields, lease_until: 0, lease_owner: '', updated_at: Date.now() };
      if (next.finish) {
        set.final = true;
        set.billing = next.finish;
      } else set.next_poll_at = next.nextPollAt;
      const r = await col.updateOne(
        { _id: id, lease_owner: owner, final: false },
        { $set: set, $inc: { polls: 1 }, $addToSet: { pollers: owner } },
      );
      return r.modifiedCount === 1;
    },

    /** Gives a lease back without a result (upstream unreachable), with the next poll time. */
    async release(id: number, owner: string, nextPollAt: number): Promise<void> {
      await col.updateOne(
        { _id: id, lease_owner: owner },
        { $set: { lease_until: 0, lease_owner: '', next_poll_at: nextPollAt } },
      );
    },

    /** Marks billing done (from 'settle' or 'refund'); false when someone else did it. */
    async billed(id: number, from: BillingState, to: BillingState): Promise<boolean> {
      const r = await col.updateOne({ _id: id, billing: from }, { $set: { billing: to } });
      return r.modifiedCount === 1;
    },

    /** Final tasks whose settle or refund did not finish (a crash, billing down). */
    async billingPending(limit: number): Promise<MjTaskDoc[]> {
      return col
        .find({ final: true, billing: { $in: ['settle', 'refund'] } })
        .limit(limit)
        .toArray();
    },

    byId: (id: number) => col.findOne({ _id: id }),
  };
}

export type MjTaskRepository = ReturnType<typeof mjTaskRepository>;
