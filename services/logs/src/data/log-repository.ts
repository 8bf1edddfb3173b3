/**
 * Logs and hourly aggregates in the service's own database. No transactions and no change
 * streams (the MongoDB-compatible server has neither): idempotency comes from the unique
 * event_id index, and aggregates from batch-tagged $inc upserts (see applyPending).
 */
import { randomBytes } from 'node:crypto';
import { duplicateIndexes, isDuplicateKey, nextSequence } from '@aigw/common';
import { LogType } from '@aigw/proto/common/v1/common';
import type { Connection } from 'mongoose';
import type { Indexable, ScopeSet } from '../domain/log-index.ts';
import {
  type Bucket,
  bucketDeltas,
  bucketKey,
  bucketsOf,
  type LogDoc,
  type NewLog,
  type OffsetLog,
} from '../domain/log-record.ts';
import { logIndexRepository } from './log-index-repository.ts';

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
  /** Older flushes: the batch ids this bucket absorbed. */
  batches?: string[];
  /** Per partition (`p<n>`): the last offset of the usage topic this bucket absorbed. */
  applied?: Record<string, number>;
}

/** A stored log: new ones are keyed by their event id (an `_id` lookup is all FerretDB indexes). */
type StoredLog = LogDoc & { _id: string; ix?: number };

/** A stored log to add to the lists, with the offset it was read at (`fresh`: stored just now). */
export interface ToIndex {
  log: Indexable & { hidden?: boolean };
  offset: number;
  fresh: boolean;
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

/** `lists: false` answers queries by scanning the collection, as before the lists (tests compare). */
export function logRepository(conn: Connection, opts: { lists?: boolean } = {}) {
  const logs = conn.collection<StoredLog>('logs');
  const buckets = conn.collection<BucketDoc>('quota_data');
  /** Per bucket and partition: the offset the bucket holds (this process's last read or write). */
  const watermarks = new Map<string, number>();
  const index = logIndexRepository(conn);
  /** Whether the lists hold every log (checked until they do; then for good). */
  let listsBuilt = false;
  const useLists = async () => {
    if (opts.lists === false) return false;
    if (!listsBuilt) listsBuilt = await index.built();
    return listsBuilt;
  };

  /**
   * One pass over the visible logs a filter selects, in id order, added to a set of scopes in
   * chunks; `mark` records each chunk's last id, then null when done.
   */
  async function backfill(
    filter: Record<string, unknown>,
    set: ScopeSet,
    mark: (lastId: number | null) => Promise<void>,
  ): Promise<number> {
    const cursor = logs
      .find(
        { ...filter, hidden: { $ne: true } },
        {
          projection: {
            id: 1,
            event_id: 1,
            created_at: 1,
            type: 1,
            quota: 1,
            tokens: 1,
            prompt_tokens: 1,
            completion_tokens: 1,
            user_id: 1,
            username: 1,
            token_name: 1,
            model_name: 1,
            channel: 1,
            group: 1,
          },
        },
      )
      .sort({ id: 1 })
      .batchSize(2_000);
    let chunk: Indexable[] = [];
    let n = 0;
    const flush = async () => {
      if (chunk.length === 0) return;
      await index.add(chunk, set);
      await mark(chunk[chunk.length - 1]?.id ?? 0);
      n += chunk.length;
      chunk = [];
    };
    for await (const l of cursor) {
      chunk.push({ ...l, tokens: l.tokens ?? (l.prompt_tokens ?? 0) + (l.completion_tokens ?? 0) });
      if (chunk.length >= 2_000) await flush();
    }
    await flush();
    await mark(null);
    return n;
  }

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

    /**
     * Stores a batch of logs keyed by event id with one insert (unordered: duplicates fail alone).
     * Returns the event ids stored now, and those stored before from the same partition offset
     * (`src`): a redelivery, whose aggregation may not have finished. A second publish of an
     * event (another offset) is neither: it was logged and summed once already.
     */
    async insertBatch(
      docs: (NewLog & { src: string })[],
    ): Promise<{ inserted: Set<string>; replayed: Set<string>; ids: Map<string, number> }> {
      const firstOf = new Set<string>();
      const unique = docs.filter((d) => !firstOf.has(d.event_id) && firstOf.add(d.event_id));
      const inserted = new Set<string>();
      const replayed = new Set<string>();
      const ids = new Map<string, number>();
      if (unique.length === 0) return { inserted, replayed, ids };
      const last = await nextSequence(conn, 'logs', unique.length);
      // ix: listed by the consumer, 2 with the dimensions (logs without it predate the lists, with
      // 1 the dimensions; both are backfilled).
      const rows = unique.map((d, i) => ({ ...d, _id: d.event_id, id: last - unique.length + 1 + i, ix: 2 }));
      for (const r of rows) ids.set(r.event_id, r.id);
      const dups: (NewLog & { src: string })[] = [];
      try {
        await logs.insertMany(rows, { ordered: false });
      } catch (err) {
        const refused = duplicateIndexes(err);
        if (!refused) throw err;
        for (const i of refused) {
          const d = unique[i];
          if (d) dups.push(d);
        }
      }
      const dupIds = new Set(dups.map((d) => d.event_id));
      for (const d of unique) if (!dupIds.has(d.event_id)) inserted.add(d.event_id);
      // Only redeliveries get here: a lookup per duplicate, by _id.
      const seen = await Promise.all(
        dups.map((d) =>
          logs.findOne({ _id: d.event_id }, { projection: { src: 1, id: 1 } }).then((r) => [d, r] as const),
        ),
      );
      for (const [d, r] of seen) {
        if (r?.src !== d.src) continue;
        replayed.add(d.event_id);
        ids.set(d.event_id, r.id);
      }
      return { inserted, replayed, ids };
    },

    /**
     * Adds a partition's stored logs to the lists: those stored now, and redelivered ones above
     * the offset the lists hold for the partition (`key`: topic and partition). Hidden logs are not
     * listed.
     */
    async indexBatch(key: string, rows: ToIndex[], lastOffset: number): Promise<void> {
      const wm = rows.some((r) => !r.fresh) ? await index.watermark(key) : -1;
      await index.add(rows.filter((r) => !r.log.hidden && (r.fresh || r.offset > wm)).map((r) => r.log));
      await index.raiseWatermark(key, lastOffset);
    },

    /**
     * Lists the logs stored before the lists existed (once; resumes after a restart by id), then
     * lets queries use the lists. One pass over the collection.
     */
    async buildLists(): Promise<number> {
      const m = await index.meta();
      if (m.built) return 0;
      const n = await backfill({ ix: { $exists: false }, id: { $gt: m.backfilled ?? 0 } }, 'base', (id) =>
        index.markBuilt(id),
      );
      listsBuilt = true;
      return n;
    },

    /**
     * Lists the logs that predate the dimensions (model, channel, group and token name scopes) in
     * them, once, resuming after a restart by id; queries read the dimensions after that. Logs
     * stored since (`ix: 2`) were listed there by the consumer.
     */
    async buildDimensions(): Promise<number> {
      const m = await index.meta();
      if (m.dims) return 0;
      return backfill({ ix: { $ne: 2 }, id: { $gt: m.dimsBackfilled ?? 0 } }, 'dims', (id) => index.markDims(id));
    },

    /**
     * Adds a partition's consumption logs to their hourly buckets, exactly once. A bucket records
     * per partition the last offset it absorbed (`applied.p<n>`, raised with $max in the same
     * single-document update as its $inc), and only logs above it are added: a replay, or a batch
     * cut differently after a crash, adds nothing twice. Writes filter on `_id` alone: FerretDB
     * pushes nothing else down, and conditional upserts made each write a scan (80 of them took
     * 0.7-0.9 s on 300 buckets; 160 did not finish in a minute). Instead the update returns the
     * bucket as it was; if its offset is not the one the sum was computed from (another replica
     * held the partition a moment ago), the difference is corrected at once.
     */
    async applyBuckets(partition: number, rows: OffsetLog[]): Promise<number> {
      if (rows.length === 0) return 0;
      const field = `p${partition}`;
      const mark = (k: string) => `${k}|${field}`;
      const keys = [...new Set(rows.map(bucketKeyOf))];
      if (watermarks.size > 200_000) watermarks.clear();
      await Promise.all(
        keys
          .filter((k) => !watermarks.has(mark(k)))
          .map(async (k) => {
            const b = await buckets.findOne({ _id: k }, { projection: { applied: 1 } });
            watermarks.set(mark(k), b?.applied?.[field] ?? -1);
          }),
      );
      const seen = (k: string) => watermarks.get(mark(k)) ?? -1;
      const deltas = bucketDeltas(rows, seen);
      await Promise.all(
        deltas.map(async (d) => {
          const assumed = seen(d.key);
          const before = await buckets.findOneAndUpdate(
            { _id: d.key },
            {
              $inc: { token_used: d.token_used, count: d.count, quota: d.quota },
              $max: { [`applied.${field}`]: d.lastOffset },
              $setOnInsert: {
                user_id: d.user_id,
                username: d.username,
                model_name: d.model_name,
                created_at: d.created_at,
              },
            },
            { upsert: true, returnDocument: 'before' },
          );
          const actual = before?.applied?.[field] ?? -1;
          watermarks.set(mark(d.key), Math.max(actual, d.lastOffset));
          if (actual === assumed) return;
          const mine = rows.filter((r) => bucketKeyOf(r) === d.key);
          const fix = difference(
            mine.filter((r) => r.offset > actual),
            mine.filter((r) => r.offset > assumed),
          );
          if (fix.count !== 0) await buckets.updateOne({ _id: d.key }, { $inc: fix });
        }),
      );
      return deltas.length;
    },

    async find(q: LogQuery, page: number, pageSize: number): Promise<{ items: LogDoc[]; total: number }> {
      if (await useLists()) {
        const { eventIds, total } = await index.page(q, page, pageSize);
        if (eventIds.length === 0) return { items: [], total };
        const found = await logs.find({ _id: { $in: eventIds } }).toArray();
        const byId = new Map(found.map(({ _id, ix: _ix, ...l }) => [_id, l as LogDoc]));
        return { items: eventIds.map((id) => byId.get(id)).filter((l): l is LogDoc => l !== undefined), total };
      }
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
      if (await useLists()) return index.stat(q, now);
      const filter = toFilter({ ...q, type: LogType.CONSUME });
      const recentFilter = toFilter({ ...q, type: LogType.CONSUME, start: now - 60, end: undefined });
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
      await index.cut(ts);
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
        if (!isDuplicateKey(err)) throw err;
      }
    }
    await logs.updateMany({ agg: batch }, { $set: { agg: 'done' } });
    return rows.length;
  }
}

const bucketKeyOf = (r: OffsetLog) => bucketKey(r.log.user_id, r.log.model_name, r.log.created_at);

/** The sums of `want` minus those of `have`. */
function difference(want: OffsetLog[], have: OffsetLog[]): { token_used: number; count: number; quota: number } {
  const sum = (rows: OffsetLog[]) => bucketsOf(rows.map((r) => r.log))[0] ?? { token_used: 0, count: 0, quota: 0 };
  const w = sum(want);
  const h = sum(have);
  return { token_used: w.token_used - h.token_used, count: w.count - h.count, quota: w.quota - h.quota };
}

export type LogRepository = ReturnType<typeof logRepository>;
