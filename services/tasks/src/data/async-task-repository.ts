/** Async tasks (`tasks`: Suno music and lyrics): the spec's fields plus the shared lease and billing state. */
import { nextSequence } from '@aigw/common';
import type { Collection, Connection } from 'mongoose';
import type { DueSchedule } from './due-schedule.ts';
import { type FinalRecord, type LeasedTask, type LeaseFields, leaseOps } from './leased-tasks.ts';

export interface AsyncTaskDoc extends LeasedTask {
  /** "suno". */
  platform: string;
  /** MUSIC or LYRICS. */
  action: string;
  task_id: string;
  progress: string;
  /** Seconds. */
  created_at: number;
  submit_time: number;
  start_time: number;
  finish_time: number;
  /** JSON text of the upstream's result (clips, lyrics). */
  data: string;
  /** JSON text of the submitted body (without hooks). */
  properties: string;
  /** Deleted by its owner (OpenAI's video delete): kept for the records, gone from the API. */
  deleted?: boolean;
}

export type NewAsyncTask = Omit<AsyncTaskDoc, '_id' | 'id' | LeaseFields>;

export interface AsyncListQuery {
  userId?: number;
  channelId?: number;
  taskId?: string;
  platform?: string;
  status?: string;
  start?: number;
  end?: number;
}

/** `schedules` (due-schedule.ts): each platform's poll schedule in Redis; without it pollers scan. */
export function asyncTaskRepository(conn: Connection, schedules?: (platform: string) => DueSchedule) {
  const col = conn.collection('tasks') as unknown as Collection<AsyncTaskDoc>;
  const finals = conn.collection('task_finals') as unknown as Collection<FinalRecord>;
  return {
    ...leaseOps(col, finals),
    /** Lease operations over one platform's tasks (each platform has its own poller). */
    forPlatform: (platform: string) => leaseOps(col, finals, { platform }, schedules?.(platform)),
    async init(): Promise<void> {
      await col.createIndex({ request_id: 1 }, { unique: true });
      await col.createIndex({ task_id: 1, user_id: 1 });
      await col.createIndex({ final: 1, next_poll_at: 1 });
      await col.createIndex({ user_id: 1, platform: 1, _id: -1 });
    },
    async insert(t: NewAsyncTask): Promise<AsyncTaskDoc> {
      const id = await nextSequence(conn, 'tasks');
      const doc: AsyncTaskDoc = {
        ...t,
        _id: id,
        id,
        lease_until: 0,
        lease_owner: '',
        polls: 0,
        updated_at: Date.now(),
      };
      await col.insertOne(doc);
      // A lost schedule entry (Redis down) is found again by the next rebuild.
      if (!doc.final)
        await schedules?.(doc.platform)
          .schedule([id], doc.next_poll_at)
          .catch(() => undefined);
      return doc;
    },
    byTaskIds: (ids: string[], userId: number) =>
      col
        .find({ task_id: { $in: ids }, user_id: userId })
        .sort({ _id: -1 })
        .toArray(),
    /**
     * One page of a user's tasks of a platform, newest first (or oldest first), after the task
     * with internal id `afterId`; deleted ones left out. Asks `limit` + 1 to tell whether more follow.
     */
    async cursorPage(q: { userId: number; platform: string; afterId?: number; asc: boolean; limit: number }) {
      const f: Record<string, unknown> = { user_id: q.userId, platform: q.platform, deleted: { $ne: true } };
      if (q.afterId !== undefined) f._id = q.asc ? { $gt: q.afterId } : { $lt: q.afterId };
      const rows = await col
        .find(f)
        .sort({ _id: q.asc ? 1 : -1 })
        .limit(q.limit + 1)
        .toArray();
      return { items: rows.slice(0, q.limit), more: rows.length > q.limit };
    },
    /** Marks a user's task deleted; false when there was none. */
    async markDeleted(userId: number, taskId: string, platform: string): Promise<boolean> {
      const r = await col.updateOne(
        { task_id: taskId, user_id: userId, platform, deleted: { $ne: true } },
        { $set: { deleted: true, updated_at: Date.now() } },
      );
      return r.matchedCount > 0;
    },
    async list(q: AsyncListQuery, page: number, pageSize: number) {
      const f: Record<string, unknown> = {};
      if (q.userId) f.user_id = q.userId;
      if (q.channelId) f.channel_id = q.channelId;
      if (q.taskId) f.task_id = q.taskId;
      if (q.platform) f.platform = q.platform;
      if (q.status) f.status = q.status;
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
  };
}

export type AsyncTaskRepository = ReturnType<typeof asyncTaskRepository>;
