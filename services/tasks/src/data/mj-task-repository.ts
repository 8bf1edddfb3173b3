/** Drawing tasks (`mj_tasks`): the midjourney-proxy fields plus the shared lease and billing state. */
import { nextSequence } from '@aigw/common';
import type { Collection, Connection } from 'mongoose';
import type { DueSchedule } from './due-schedule.ts';
import { type FinalRecord, type LeasedTask, type LeaseFields, leaseOps } from './leased-tasks.ts';

export type { BillingState } from './leased-tasks.ts';

export interface MjTaskDoc extends LeasedTask {
  /** IMAGINE, UPSCALE, ... */
  action: string;
  mj_id: string;
  /** Submit code: 1, 21, 22. */
  code: number;
  progress: string;
  image_url: string;
  prompt: string;
  prompt_en: string;
  description: string;
  state: string;
  custom_id: string;
  /** Milliseconds. */
  submit_time: number;
  start_time: number;
  finish_time: number;
  /** Seconds. */
  created_at: number;
  /** JSON text. */
  buttons: string;
  properties: string;
}

export type NewMjTask = Omit<MjTaskDoc, '_id' | 'id' | LeaseFields>;

export interface MjListQuery {
  userId?: number;
  channelId?: number;
  mjId?: string;
  start?: number;
  end?: number;
}

/** `schedule` (due-schedule.ts): the poll schedule in Redis; without it the poller scans. */
export function mjTaskRepository(conn: Connection, schedule?: DueSchedule) {
  const col = conn.collection('mj_tasks') as unknown as Collection<MjTaskDoc>;
  const finals = conn.collection('mj_task_finals') as unknown as Collection<FinalRecord>;

  return {
    ...leaseOps(col, finals, {}, schedule),
    async init(): Promise<void> {
      await col.createIndex({ request_id: 1 }, { unique: true });
      await col.createIndex({ mj_id: 1, user_id: 1 });
      await col.createIndex({ final: 1, next_poll_at: 1 });
    },

    async insert(t: NewMjTask): Promise<MjTaskDoc> {
      const id = await nextSequence(conn, 'mj_tasks');
      const doc: MjTaskDoc = { ...t, _id: id, id, lease_until: 0, lease_owner: '', polls: 0, updated_at: Date.now() };
      await col.insertOne(doc);
      // A lost schedule entry (Redis down) is found again by the next rebuild.
      if (!doc.final) await schedule?.schedule([id], doc.next_poll_at).catch(() => undefined);
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

    byId: (id: number) => col.findOne({ _id: id }),
  };
}

export type MjTaskRepository = ReturnType<typeof mjTaskRepository>;
