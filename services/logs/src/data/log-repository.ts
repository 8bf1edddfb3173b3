/**
 * Logs and hourly aggregates in the service's own database. No transactions and no change
 * streams (the MongoDB-compatible server has neither): idempotency comes from the unique
 * event_id index, and aggregates from batch-tagged $inc upserts (see applyPending).
 */
import { randomBytes } from 'node:crypto';
import { nextSequence } from '@aigw/common';
import type { Connection } from 'mongoose';
import { type Bucket, bucketsOf, type LogDoc, type NewLog } from '../domain/log-record.ts';

export interface LogQuery {
  type?: number;
  user_id?: number;
  username?: string;
  token_name?: string;
  model_name?: string;
  start?: number;
  end?: number;
  channel?: number;
  group?: string;
}

interface BucketDoc extends Omit<Bucket, 'key'> {
  _id: string;
  batches: string[];
}

function toFilter(q: LogQuery): Record<string, unknown> {
  const f: Record<string, unknown> = { hidden: { $ne: true } };
  if (q.type) f.type = q.type;
  if (q.user_id) f.user_id = q.user_id;
  if (q.username) f.username = q.username;
  if (q.token_name) f.token_name = q.token_name;
  if (q.model_name) f.model_name = q.model_name;
  if (q.channel) f.channel = q.channel;
  if (q.group) f.group = q.group;
  if (q.start || q.end) {
    const range: Record<string, number> = {};
    if (q.start) range.$gte = q.start;
    if (q.end) range.$lte = q.end;
    f.created_at = range;
  }
  return f;
}

export function logRepository(conn: Connection) {
  const logs = conn.collection<LogDoc>('logs');
  const buckets = conn.collection<BucketDoc>('quota_data');

  return {
    async ensureIndexes(): Promise<void> {
      await logs.createIndex({ event_id: 1 }, { unique: true });
      await logs.createIndex({ id: -1 });
      await logs.createIndex({ created_at: -1 });
      await logs.createIndex({ user_id: 1, created_at: -1 });
      await logs.createIndex({ agg: 1 });
      await buckets.createIndex({ created_at: 1 });
      await buckets.createIndex({ user_id: 1, created_at: 1 });
    },

    /** Stores new logs; events seen before are skipped. Returns how many were new. */
    async insert(docs: NewLog[]): Promise<number> {
      if (docs.length === 0) return 0;
      const seen = new Set(
        (
          await logs.find({ event_id: { $in: docs.map((d) => d.event_id) } }, { projection: { event_id: 1 } }).toArray()
        ).map((d) => d.event_id),
      );
      const fresh = docs.filter(
        (d, i) => !seen.has(d.event_id) && docs.findIndex((x) => x.event_id === d.event_id) === i,
      );
      if (fresh.length === 0) return 0;
      const last = await nextSequence(conn, 'logs', fresh.length);
      const withIds = fresh.map((d, i) => ({ ...d, id: last - fresh.length + 1 + i }));
      let inserted = 0;
      for (const doc of withIds) {
        try {
          await logs.insertOne(doc);
          inserted++;
        } catch (err) {
          // A concurrent consumer stored the same event first.
          if ((err as { code?: number }).code !== 11000) throw err;
        }
      }
      return inserted;
    },

    async find(q: LogQuery, page: number, pageSize: number): Promise<{ items: LogDoc[]; total: number }> {
      const filter = toFilter(q);
      const [items, total] = await Promise.all([
        logs
          .find(filter, { projection: { _id: 0 } })
          .sort({ id: -1 })
          .skip((page - 1) * pageSize)
          .limit(pageSize)
          .toArray(),
        logs.countDocuments(filter),
      ]);
      return { items: items as LogDoc[], total };
    },

    /** Quota over the filter; requests and tokens over the last 60 seconds. */
    async stat(q: LogQuery, now = Math.floor(Date.now() / 1000)): Promise<{ quota: number; rpm: number; tpm: number }> {
      const filter = toFilter({ ...q, type: 2 });
      const recentFilter = toFilter({ ...q, type: 2, start: now - 60, end: undefined });
      const sum = async (f: Record<string, unknown>) => {
        const rows = await logs
          .aggregate<{ quota: number; tokens: number; count: number }>([
            { $match: f },
            {
              $group: {
                _id: null,
                quota: { $sum: '$quota' },
                tokens: { $sum: '$tokens' },
                count: { $sum: 1 },
              },
            },
          ])
          .toArray();
        return rows[0] ?? { quota: 0, tokens: 0, count: 0 };
      };
      const [all, recent] = await Promise.all([sum(filter), sum(recentFilter)]);
      return { quota: all.quota, rpm: recent.count, tpm: recent.tokens };
    },

    async deleteBefore(ts: number): Promise<number> {
      const res = await logs.deleteMany({ created_at: { $lt: ts } });
      return res.deletedCount;
    },

    async dashboard(q: { user_id?: number; username?: string; start: number; end: number }): Promise<Bucket[]> {
      const f: Record<string, unknown> = { created_at: { $gte: Math.floor(q.start / 3600) * 3600, $lte: q.end } };
      if (q.user_id) f.user_id = q.user_id;
      if (q.username) f.username = q.username;
      const rows = await buckets
        .find(f, { projection: { batches: 0 } })
        .sort({ created_at: 1 })
        .toArray();
      return rows.map(({ _id, ...b }) => ({ key: _id, ...b }) as Bucket);
    },

    /**
     * Folds pending consumption logs into hourly buckets, exactly once: the logs are tagged with
     * a batch id first, each bucket records the batches it absorbed ($inc only when the batch is
     * not there yet), then the logs are marked done. A crash in between is finished by the next
     * run (batches left tagged are re-applied, and buckets skip what they already hold).
     */
    async applyPending(limit = 5_000): Promise<number> {
      let applied = 0;
      const stuck = await logs.distinct('agg', { agg: /^b-/ });
      for (const batch of stuck) applied += await applyBatch(String(batch));
      const pending = await logs
        .find({ agg: 'pending' }, { projection: { id: 1 } })
        .limit(limit)
        .toArray();
      if (pending.length === 0) return applied;
      const batch = `b-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
      await logs.updateMany({ id: { $in: pending.map((p) => p.id) }, agg: 'pending' }, { $set: { agg: batch } });
      return applied + (await applyBatch(batch));
    },
  };

  async function applyBatch(batch: string): Promise<number> {
    const rows = await logs
      .find(
        { agg: batch },
        {
          projection: {
            user_id: 1,
            username: 1,
            model_name: 1,
            created_at: 1,
            prompt_tokens: 1,
            completion_tokens: 1,
            quota: 1,
          },
        },
      )
      .toArray();
    for (const b of bucketsOf(rows)) {
      try {
        await buckets.updateOne(
          { _id: b.key, batches: { $ne: batch } },
          {
            $inc: { token_used: b.token_used, count: b.count, quota: b.quota },
            $push: { batches: batch },
            $setOnInsert: {
              user_id: b.user_id,
              username: b.username,
              model_name: b.model_name,
              created_at: b.created_at,
            },
          },
          { upsert: true },
        );
      } catch (err) {
        // The bucket exists and already holds this batch (the filter missed, the upsert collided).
        if ((err as { code?: number }).code !== 11000) throw err;
      }
    }
    await logs.updateMany({ agg: batch }, { $set: { agg: 'done' } });
    return rows.length;
  }
}

export type LogRepository = ReturnType<typeof logRepository>;
