/**
 * The dashboard's sums, written exactly once: per user and UTC day from the consumer's batches
 * (offset-tagged $inc updates), and the older versions' hourly buckets from logs still pending.
 */
import { randomBytes } from 'node:crypto';
import { isDuplicateKey } from '@aigw/common';
import type { Collection, Connection, mongo } from 'mongoose';
import { bucketDocOf, type DayBucketDoc, dayIncrement, incDifference, sumsAbove } from '../domain/day-buckets.ts';
import { type Bucket, bucketsOf, type LogDoc, type OffsetLog, type PartitionLog } from '../domain/log-record.ts';
import { wideSums } from './wide-sums.ts';

export interface BucketDoc extends Omit<Bucket, 'key'> {
  _id: string;
  /** Older flushes: the batch ids this bucket absorbed. */
  batches?: string[];
  /** Per partition (`p<n>`): the last offset of the usage topic this bucket absorbed. */
  applied?: Record<string, number>;
}

/** A log of the single collection older versions wrote (`logs`), moved into the partitions at start. */
export type LegacyLog = LogDoc & { _id: string; ix?: number };

/** A day document's rows of one partition, and the offset the document was last seen holding for it. */
interface PartitionRows {
  field: string;
  rows: OffsetLog[];
  assumed: number;
}

/** Rows per day document, and per partition within each. */
function byDocument(rows: PartitionLog[]): Map<string, Map<number, OffsetLog[]>> {
  const docs = new Map<string, Map<number, OffsetLog[]>>();
  for (const r of rows) {
    const k = bucketDocOf(r.log);
    const parts = docs.get(k) ?? new Map<number, OffsetLog[]>();
    docs.set(k, parts);
    const g = parts.get(r.partition);
    if (g) g.push(r);
    else parts.set(r.partition, [r]);
  }
  return docs;
}

/** Adds rows to their day documents, exactly once per partition (see applyBuckets). */
async function applyDays(
  days: Collection<DayBucketDoc>,
  watermarks: Map<string, number>,
  rows: PartitionLog[],
): Promise<number> {
  const mark = (k: string, partition: number) => `${k}|p${partition}`;
  const docs = byDocument(rows);
  if (watermarks.size > 200_000) watermarks.clear();
  const unknown = [...docs].filter(([k, parts]) => [...parts.keys()].some((p) => !watermarks.has(mark(k, p))));
  for (let i = 0; i < unknown.length; i += 5_000) {
    const chunk = unknown.slice(i, i + 5_000);
    const found = await days.find({ _id: { $in: chunk.map(([k]) => k) } }, { projection: { applied: 1 } }).toArray();
    const applied = new Map(found.map((b) => [b._id, b.applied ?? {}]));
    for (const [k, parts] of chunk)
      for (const p of parts.keys()) watermarks.set(mark(k, p), applied.get(k)?.[`p${p}`] ?? -1);
  }
  let written = 0;
  await Promise.all(
    [...docs].map(async ([key, parts]) => {
      const fresh: PartitionRows[] = [];
      for (const [p, group] of parts) {
        const assumed = watermarks.get(mark(key, p)) ?? -1;
        if (sumsAbove(group, assumed).length > 0) fresh.push({ field: `p${p}`, rows: group, assumed });
      }
      if (fresh.length === 0) return;
      written++;
      const adding = fresh.flatMap((f) => sumsAbove(f.rows, f.assumed));
      const first = adding[0] as OffsetLog;
      const before = await days.findOneAndUpdate(
        { _id: key },
        {
          $inc: wideSums(dayIncrement(adding.map((r) => r.log))),
          $max: Object.fromEntries(
            fresh.map((f) => [`applied.${f.field}`, Math.max(...sumsAbove(f.rows, f.assumed).map((r) => r.offset))]),
          ),
          $setOnInsert: {
            user_id: first.log.user_id,
            username: first.log.username,
            day: Math.floor(first.log.created_at / 86_400),
          },
        } as mongo.UpdateFilter<DayBucketDoc>,
        { upsert: true, returnDocument: 'before' },
      );
      // Another replica may have held a partition a moment ago: correct what was added from the
      // offset the document actually held.
      let fix: Record<string, number> = {};
      for (const f of fresh) {
        const actual = before?.applied?.[f.field] ?? -1;
        const last = Math.max(...f.rows.map((r) => r.offset));
        watermarks.set(`${key}|${f.field}`, Math.max(actual, last));
        if (actual === f.assumed) continue;
        const logs = (after: number) => sumsAbove(f.rows, after).map((r) => r.log);
        fix = addIncrements(fix, incDifference(dayIncrement(logs(actual)), dayIncrement(logs(f.assumed))));
      }
      if (Object.keys(fix).length > 0) await days.updateOne({ _id: key }, { $inc: wideSums(fix) });
    }),
  );
  return written;
}

function addIncrements(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  for (const k of Object.keys(out)) if (out[k] === 0) delete out[k];
  return out;
}

/** Folds one tagged batch of older logs into their hourly buckets (see applyPending). */
async function applyBatch(
  legacy: Collection<LegacyLog>,
  buckets: Collection<BucketDoc>,
  batch: string,
): Promise<number> {
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

/** The dashboard's sum writers (`quota_data`). */
export function bucketWriters(conn: Connection) {
  const legacy = conn.collection<LegacyLog>('logs');
  const buckets = conn.collection<BucketDoc>('quota_data');
  /** The dashboard's sums since this version: per user (0: everyone) and day, in the same collection. */
  const days = conn.collection<DayBucketDoc>('quota_data');
  /** Per day document and partition: the offset it holds (this process's last read or write). */
  const watermarks = new Map<string, number>();
  return {
    /**
     * Adds consumption logs (of one or more partitions) to the dashboard's sums, exactly once: one document per
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
    async applyBuckets(rows: PartitionLog[]): Promise<number> {
      if (rows.length === 0) return 0;
      const everyone = rows.map((r) => ({ ...r, log: { ...r.log, user_id: 0, username: '' } }));
      return applyDays(days, watermarks, [...rows, ...everyone]);
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
      for (const batch of stuck) applied += await applyBatch(legacy, buckets, String(batch));
      const pending = await legacy
        .find({ agg: 'pending' }, { projection: { id: 1 } })
        .limit(limit)
        .toArray();
      if (pending.length === 0) return applied;
      const batch = `b-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
      await legacy.updateMany({ id: { $in: pending.map((p) => p.id) }, agg: 'pending' }, { $set: { agg: batch } });
      return applied + (await applyBatch(legacy, buckets, batch));
    },
  };
}
