/**
 * Logs and hourly aggregates in the service's own database. No transactions and no change
 * streams (the MongoDB-compatible server has neither): idempotency comes from the event id as
 * `_id` in each day's partition (log-rows.ts), and aggregates from offset-tagged $inc upserts.
 * Pages and stats come from the read model (log-index-repository.ts); both are time-partitioned
 * by UTC day, and cleanup drops whole days (log-cleanup.ts).
 */
import { randomBytes } from 'node:crypto';
import { isDuplicateKey, nextSequence } from '@aigw/common';
import { LogType } from '@aigw/proto/common/v1/common';
import type { Connection, mongo } from 'mongoose';
import {
  bucketsOfDay,
  type DayBucketDoc,
  dayBucketId,
  dayBucketOf,
  dayIncrement,
  incDifference,
  sumsAbove,
} from '../domain/day-buckets.ts';
import type { Indexable } from '../domain/log-index.ts';
import { type Bucket, bucketKey, bucketsOf, type LogDoc, type NewLog, type OffsetLog } from '../domain/log-record.ts';
import { logIndexRepository } from './log-index-repository.ts';
import { logRows, type StoredLog } from './log-rows.ts';

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

/** A log of the single collection older versions wrote (`logs`), moved into the partitions at start. */
type LegacyLog = LogDoc & { _id: string; ix?: number };

/** A stored log to add to the lists, with the offset it was read at (`fresh`: stored just now). */
export interface ToIndex {
  log: Indexable & { hidden?: boolean };
  offset: number;
  fresh: boolean;
}

/** The stored rows a query selects (the scans, and the cursors of the export). */
export function toFilter(q: LogQuery, cut = 0): Record<string, unknown> {
  const f: Record<string, unknown> = { hidden: { $ne: true } };
  if (q.type) f.type = q.type;
  if (q.user_id) f.user_id = q.user_id;
  if (q.username) f.username = q.username;
  if (q.token_name) f.token_name = q.token_name;
  if (q.model_name) f.model_name = q.model_name;
  if (q.channel) f.channel = q.channel;
  if (q.group) f.group = q.group;
  if (q.start || q.end || cut) {
    const range: Record<string, number> = {};
    if (q.start || cut) range.$gte = Math.max(q.start ?? 0, cut);
    if (q.end) range.$lte = q.end;
    f.created_at = range;
  }
  return f;
}

/** `lists: false` answers queries by scanning the partitions, as before the lists (tests compare). */
/** `clock`: see logIndexRepository (tests that query at a past `now` set it back). */
export function logRepository(conn: Connection, opts: { lists?: boolean; clock?: () => number } = {}) {
  const legacy = conn.collection<LegacyLog>('logs');
  const buckets = conn.collection<BucketDoc>('quota_data');
  /** The dashboard's sums since this version: per user (0: everyone) and day, in the same collection. */
  const days = conn.collection<DayBucketDoc>('quota_data');
  /** Per day document and partition: the offset it holds (this process's last read or write). */
  const watermarks = new Map<string, number>();
  const index = logIndexRepository(conn, opts.clock);
  const rows = logRows(conn);
  /** Whether the lists hold every log (checked until they do; then for good). */
  let listsBuilt = false;
  const useLists = async () => {
    if (opts.lists === false) return false;
    if (!listsBuilt) listsBuilt = (await index.meta()).migrated === true;
    return listsBuilt;
  };
  const cutNow = async () => (await index.meta()).cut ?? 0;
  let dashFromCache: number | undefined;

  return {
    index,
    rows,
    async ensureIndexes(): Promise<void> {
      // The partitions need only their `_id` (the event id). The buckets are read by `_id`; these
      // serve the dashboard's scan of the hours before this version (and older versions).
      await buckets.createIndex({ created_at: 1 });
      await buckets.createIndex({ user_id: 1, created_at: 1 });
      await dashFrom();
    },

    /**
     * Stores a batch of logs keyed by event id, one unordered insert per day partition (duplicates
     * fail alone). Returns the event ids stored now, and those stored before from the same
     * partition offset (`src`): a redelivery, whose aggregation may not have finished. A second
     * publish of an event (another offset) is neither: it was logged and summed once already.
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
      const stored = unique.map((d, i) => ({ ...d, _id: d.event_id, id: last - unique.length + 1 + i }));
      for (const r of stored) ids.set(r.event_id, r.id);
      const dups = await rows.insert(stored);
      const dupIds = new Set(dups.map((d) => d.row.event_id));
      for (const d of unique) if (!dupIds.has(d.event_id)) inserted.add(d.event_id);
      for (const { row, stored: s } of dups) {
        if (s?.src !== row.src) continue;
        replayed.add(row.event_id);
        ids.set(row.event_id, s.id);
      }
      return { inserted, replayed, ids };
    },

    /**
     * Adds a partition's stored logs to the lists: those stored now, and redelivered ones above
     * the offset the lists hold for the partition (`key`: topic and partition). Hidden logs are not
     * listed.
     */
    async indexBatch(key: string, list: ToIndex[], lastOffset: number): Promise<void> {
      const wm = list.some((r) => !r.fresh) ? await index.watermark(key) : -1;
      await index.add(list.filter((r) => !r.log.hidden && (r.fresh || r.offset > wm)).map((r) => r.log));
      await index.raiseWatermark(key, lastOffset);
    },

    /**
     * Moves the logs of the single collection older versions wrote (`logs`) into the day
     * partitions and the lists, once, in id order (resumes after a restart by id), then drops it;
     * queries scan the partitions until then. Returns the logs moved.
     */
    async buildLists(): Promise<number> {
      const m = await index.meta();
      if (m.migrated) {
        listsBuilt = true;
        return 0;
      }
      let n = 0;
      let chunk: LegacyLog[] = [];
      const flush = async () => {
        if (chunk.length === 0) return;
        // Keyed by event id in the partitions (the oldest versions keyed logs by ObjectId).
        const moved = chunk.map(({ ix: _ix, _id: _old, ...l }) => ({ ...l, _id: l.event_id }) as StoredLog);
        const dups = new Set((await rows.insert(moved)).map((d) => d.row._id));
        // A log the consumer stored again meanwhile (a redelivery) is listed already.
        await index.add(moved.filter((l) => !dups.has(l._id) && !l.hidden).map(indexable));
        await index.markMigrated(chunk[chunk.length - 1]?.id ?? 0);
        n += chunk.length;
        chunk = [];
      };
      const cursor = legacy
        .find({ id: { $gt: m.migratedUpTo ?? 0 } })
        .sort({ id: 1 })
        .batchSize(2_000);
      for await (const l of cursor) {
        chunk.push(l);
        if (chunk.length >= 2_000) await flush();
      }
      await flush();
      await index.markMigrated(null);
      await legacy.drop().catch(() => undefined);
      listsBuilt = true;
      return n;
    },

    /**
     * Adds a partition's consumption logs to the dashboard's sums, exactly once: one document per
     * user and UTC day, and everyone's (user 0) per day (domain/day-buckets.ts), so a batch
     * updates one document per user it holds. A document records per partition the last offset
     * it absorbed (`applied.p<n>`, raised with $max in the same single-document update as its
     * $inc), and only logs above it are added: a replay, or a batch cut differently after a
     * crash, adds nothing twice. Writes filter on `_id` alone: FerretDB pushes nothing else down,
     * and conditional upserts made each write a scan (80 of them took 0.7-0.9 s on 300 buckets;
     * 160 did not finish in a minute). Instead the update returns the document as it was; if its
     * offset is not the one the sum was computed from (another replica held the partition a moment
     * ago), the difference is corrected at once. Returns the documents updated.
     */
    async applyBuckets(partition: number, rows: OffsetLog[]): Promise<number> {
      if (rows.length === 0) return 0;
      const everyone = rows.map((r) => ({ ...r, log: { ...r.log, user_id: 0, username: '' } }));
      return applyDays(partition, [...rows, ...everyone]);
    },

    async find(q: LogQuery, page: number, pageSize: number): Promise<{ items: LogDoc[]; total: number }> {
      if (await useLists()) {
        const { refs, total } = await index.page(q, page, pageSize);
        if (refs.length === 0) return { items: [], total };
        const byId = await rows.byRefs(refs);
        return { items: refs.map((r) => byId.get(r.eventId)).filter((l): l is LogDoc => l !== undefined), total };
      }
      const all = (await rows.scan(toFilter(q, await cutNow()))).sort((a, b) => b.id - a.id);
      return { items: all.slice((page - 1) * pageSize, page * pageSize), total: all.length };
    },

    /** Quota over the filter; requests and tokens over the last 60 seconds. */
    async stat(q: LogQuery, now = Math.floor(Date.now() / 1000)): Promise<{ quota: number; rpm: number; tpm: number }> {
      if (await useLists()) return index.stat(q, now);
      const cut = await cutNow();
      const all = await rows.scan(toFilter({ ...q, type: LogType.CONSUME }, cut));
      const recent = await rows.scan(toFilter({ ...q, type: LogType.CONSUME, start: now - 60, end: undefined }, cut));
      return {
        quota: all.reduce((s, l) => s + l.quota, 0),
        rpm: recent.length,
        tpm: recent.reduce((s, l) => s + l.tokens, 0),
      };
    },

    /**
     * Every query starts at `ts` from now on; the logs before it are deleted in the background
     * (log-cleanup.ts). Returns the number of listed logs it removes.
     */
    async deleteBefore(ts: number): Promise<number> {
      const n = (await useLists())
        ? await index.countBefore(ts)
        : (await rows.scan({ hidden: { $ne: true }, created_at: { $gte: await cutNow(), $lt: ts } })).length;
      await index.cut(ts);
      return n;
    },

    /**
     * The dashboard's hourly buckets: one user's (user_id, or a username's users) per model, or
     * everyone's summed per model (user 0, as new-api sums them). Read by _id: the day's models,
     * then the hours' buckets; hours before this version's first start scan by time.
     */
    async dashboard(q: { user_id?: number; username?: string; start: number; end: number }): Promise<Bucket[]> {
      const lo = Math.floor(q.start / 3600) * 3600;
      const hi = q.end;
      const from = await dashFrom();
      const users = q.user_id ? [q.user_id] : q.username ? await index.userIds(q.username) : [0];
      const out: BucketDoc[] = [];
      if (lo < from) {
        const f: Record<string, unknown> = { created_at: { $gte: lo, $lte: Math.min(hi, from - 1) } };
        if (q.user_id) f.user_id = q.user_id;
        else if (q.username) f.username = q.username;
        else f.user_id = { $gt: 0 };
        const old = await buckets.find(f, { projection: { batches: 0 } }).toArray();
        out.push(...(q.user_id || q.username ? old : sumPerModel(old)));
      }
      if (hi >= from) for (const u of users) out.push(...(await bucketsById(u, Math.max(lo, from), hi)));
      const rows = out.map(({ _id, applied: _a, batches: _b, ...b }) => ({ key: _id, ...b }) as Bucket);
      // Since this version, a document per user and day (every hour, whatever the start above):
      // added to the older buckets of the same hour (each log is summed in one of them).
      for (const u of users) rows.push(...(await bucketsByDay(u, lo, hi)));
      const merged = new Map<string, Bucket>();
      for (const b of rows) {
        const m = merged.get(b.key);
        if (!m) merged.set(b.key, { ...b });
        else {
          m.token_used += b.token_used;
          m.count += b.count;
          m.quota += b.quota;
        }
      }
      return [...merged.values()].sort(
        (a, b) => a.created_at - b.created_at || a.model_name.localeCompare(b.model_name),
      );
    },

    /**
     * Folds pending consumption logs into hourly buckets, exactly once: the logs are tagged with
     * a batch id first, each bucket records the batches it absorbed ($inc only when the batch is
     * not there yet), then the logs are marked done. A crash in between is finished by the next
     * run (batches left tagged are re-applied, and buckets skip what they already hold).
     */
    async applyPending(limit = 5_000): Promise<number> {
      let applied = 0;
      const stuck = await legacy.distinct('agg', { agg: /^b-/ });
      for (const batch of stuck) applied += await applyBatch(String(batch));
      const pending = await legacy
        .find({ agg: 'pending' }, { projection: { id: 1 } })
        .limit(limit)
        .toArray();
      if (pending.length === 0) return applied;
      const batch = `b-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
      await legacy.updateMany({ id: { $in: pending.map((p) => p.id) }, agg: 'pending' }, { $set: { agg: batch } });
      return applied + (await applyBatch(batch));
    },
  };

  /** Adds a partition's rows to their day documents, exactly once (see applyBuckets). */
  async function applyDays(partition: number, rows: OffsetLog[]): Promise<number> {
    const field = `p${partition}`;
    const mark = (k: string) => `${k}|${field}`;
    const groups = new Map<string, OffsetLog[]>();
    for (const r of rows) {
      const k = dayBucketOf(r.log);
      const g = groups.get(k);
      if (g) g.push(r);
      else groups.set(k, [r]);
    }
    if (watermarks.size > 200_000) watermarks.clear();
    const unknown = [...groups.keys()].filter((k) => !watermarks.has(mark(k)));
    for (let i = 0; i < unknown.length; i += 5_000) {
      const ids = unknown.slice(i, i + 5_000);
      const found = await days.find({ _id: { $in: ids } }, { projection: { applied: 1 } }).toArray();
      const applied = new Map(found.map((b) => [b._id, b.applied?.[field] ?? -1]));
      for (const k of ids) watermarks.set(mark(k), applied.get(k) ?? -1);
    }
    let written = 0;
    await Promise.all(
      [...groups].map(async ([key, group]) => {
        const assumed = watermarks.get(mark(key)) ?? -1;
        const fresh = sumsAbove(group, assumed);
        const first = fresh[0];
        if (!first) return;
        written++;
        const lastOffset = Math.max(...fresh.map((r) => r.offset));
        const before = await days.findOneAndUpdate(
          { _id: key },
          {
            $inc: dayIncrement(fresh.map((r) => r.log)),
            $max: { [`applied.${field}`]: lastOffset },
            $setOnInsert: {
              user_id: first.log.user_id,
              username: first.log.username,
              day: Math.floor(first.log.created_at / 86_400),
            },
          } as mongo.UpdateFilter<DayBucketDoc>,
          { upsert: true, returnDocument: 'before' },
        );
        const actual = before?.applied?.[field] ?? -1;
        watermarks.set(mark(key), Math.max(actual, lastOffset));
        if (actual === assumed) return;
        const logs = (after: number) => sumsAbove(group, after).map((r) => r.log);
        const fix = incDifference(dayIncrement(logs(actual)), dayIncrement(logs(assumed)));
        if (Object.keys(fix).length > 0) await days.updateOne({ _id: key }, { $inc: fix });
      }),
    );
    return written;
  }

  /**
   * The hour from which the buckets of everyone (user 0) and the day's models exist: set at the
   * first start of this version, at the next whole hour; the dashboard scans the buckets by time
   * before it, as older versions did.
   */
  async function dashFrom(): Promise<number> {
    if (dashFromCache !== undefined) return dashFromCache;
    const next = Math.ceil(Date.now() / 1000 / 3600) * 3600;
    const m = await buckets.findOneAndUpdate(
      { _id: 'meta|dashboard' },
      { $setOnInsert: { created_at: next } },
      { upsert: true, returnDocument: 'after' },
    );
    dashFromCache = m?.created_at ?? next;
    return dashFromCache;
  }

  /** A user's (0: everyone's) day documents over a range, as (user, model, hour) buckets. */
  async function bucketsByDay(user: number, lo: number, hi: number): Promise<Bucket[]> {
    const ids: string[] = [];
    for (let d = Math.floor(lo / 86_400); d <= Math.floor(hi / 86_400); d++) ids.push(dayBucketId(user, d));
    const docs = await days.find({ _id: { $in: ids } }, { projection: { applied: 0 } }).toArray();
    return docs.flatMap((d) => bucketsOfDay(d, lo, hi));
  }

  /** Older buckets by _id: the models of each day, then each hour's bucket of each model. */
  async function bucketsById(user: number, lo: number, hi: number): Promise<BucketDoc[]> {
    const days: number[] = [];
    for (let d = Math.floor(lo / 86_400); d <= Math.floor(hi / 86_400); d++) days.push(d);
    const listed = await buckets.find({ _id: { $in: days.map((d) => dayModelsId(user, d)) } }).toArray();
    const models = new Map(listed.map((d) => [d._id, (d as { models?: string[] }).models ?? []]));
    const ids: string[] = [];
    for (let h = Math.floor(lo / 3600) * 3600; h <= hi; h += 3600) {
      for (const m of models.get(dayModelsId(user, Math.floor(h / 86_400))) ?? []) ids.push(bucketKey(user, m, h));
    }
    const out: BucketDoc[] = [];
    for (let i = 0; i < ids.length; i += 5_000) {
      out.push(...(await buckets.find({ _id: { $in: ids.slice(i, i + 5_000) } }).toArray()));
    }
    return out;
  }

  async function applyBatch(batch: string): Promise<number> {
    const rows = await legacy
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
    await legacy.updateMany({ agg: batch }, { $set: { agg: 'done' } });
    return rows.length;
  }
}

/** The models a user (0: everyone) used on a day: `d|<user>|<day>`. */
const dayModelsId = (user: number, day: number) => `d|${user}|${day}`;

/** Older per-user buckets summed per model and hour (everyone's dashboard before user 0's buckets). */
function sumPerModel(rows: BucketDoc[]): BucketDoc[] {
  const out = new Map<string, BucketDoc>();
  for (const r of rows) {
    const key = bucketKey(0, r.model_name, r.created_at);
    const b = out.get(key) ?? { ...r, _id: key, user_id: 0, username: '', token_used: 0, count: 0, quota: 0 };
    b.token_used += r.token_used;
    b.count += r.count;
    b.quota += r.quota;
    out.set(key, b);
  }
  return [...out.values()];
}

export type LogRepository = ReturnType<typeof logRepository>;

/** The fields the lists keep of a log (older logs may lack the stored token sum). */
const indexable = (l: LogDoc): Indexable => ({
  id: l.id,
  event_id: l.event_id,
  created_at: l.created_at,
  type: l.type,
  quota: l.quota,
  tokens: l.tokens ?? (l.prompt_tokens ?? 0) + (l.completion_tokens ?? 0),
  user_id: l.user_id,
  username: l.username,
  token_name: l.token_name,
  model_name: l.model_name,
  channel: l.channel,
  group: l.group,
});
