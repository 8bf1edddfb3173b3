/**
 * The dashboard's hourly buckets read back: since this version per user and UTC day by `_id`,
 * older versions' buckets by `_id` through the day's models, and before those by time.
 */
import type { Collection, Connection } from 'mongoose';
import { bucketsOfDay, type DayBucketDoc, dayBucketId, hourBucketId } from '../domain/day-buckets.ts';
import { type Bucket, bucketKey } from '../domain/log-record.ts';
import type { BucketDoc } from './log-buckets.ts';

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

/**
 * A user's (0: everyone's) hour documents over a range, and the day documents of older versions,
 * as (user, model, hour) buckets (an hour in both, the day of an upgrade, is summed by the caller).
 */
async function bucketsByDay(days: Collection<DayBucketDoc>, user: number, lo: number, hi: number): Promise<Bucket[]> {
  const ids: string[] = [];
  for (let d = Math.floor(lo / 86_400); d <= Math.floor(hi / 86_400); d++) {
    ids.push(dayBucketId(user, d));
    for (let h = 0; h < 24; h++) {
      const at = d * 86_400 + h * 3_600;
      if (at + 3_599 >= lo && at <= hi) ids.push(hourBucketId(user, d, h));
    }
  }
  const docs: DayBucketDoc[] = [];
  for (let i = 0; i < ids.length; i += 5_000) {
    const chunk = ids.slice(i, i + 5_000);
    docs.push(...(await days.find({ _id: { $in: chunk } }, { projection: { applied: 0 } }).toArray()));
  }
  return docs.flatMap((d) => bucketsOfDay(d, lo, hi));
}

/** Older buckets by _id: the models of each day, then each hour's bucket of each model. */
async function bucketsById(buckets: Collection<BucketDoc>, user: number, lo: number, hi: number): Promise<BucketDoc[]> {
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

/** The dashboard's reads; `userIds` maps a username to its users (the names documents in `log_index`). */
export function logDashboard(conn: Connection, userIds: (name: string) => Promise<number[]>) {
  const buckets = conn.collection<BucketDoc>('quota_data');
  const days = conn.collection<DayBucketDoc>('quota_data');
  let dashFromCache: number | undefined;

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

  return {
    dashFrom,
    /**
     * The dashboard's hourly buckets: one user's (user_id, or a username's users) per model, or
     * everyone's summed per model (user 0, as new-api sums them). Read by _id: the day's models,
     * then the hours' buckets; hours before this version's first start scan by time.
     */
    async dashboard(q: { user_id?: number; username?: string; start: number; end: number }): Promise<Bucket[]> {
      const lo = Math.floor(q.start / 3600) * 3600;
      const hi = q.end;
      const from = await dashFrom();
      const users = q.user_id ? [q.user_id] : q.username ? await userIds(q.username) : [0];
      const out: BucketDoc[] = [];
      if (lo < from) {
        const f: Record<string, unknown> = { created_at: { $gte: lo, $lte: Math.min(hi, from - 1) } };
        if (q.user_id) f.user_id = q.user_id;
        else if (q.username) f.username = q.username;
        else f.user_id = { $gt: 0 };
        const old = await buckets.find(f, { projection: { batches: 0 } }).toArray();
        out.push(...(q.user_id || q.username ? old : sumPerModel(old)));
      }
      if (hi >= from) for (const u of users) out.push(...(await bucketsById(buckets, u, Math.max(lo, from), hi)));
      const rows = out.map(({ _id, applied: _a, batches: _b, ...b }) => ({ key: _id, ...b }) as Bucket);
      // Since this version, a document per user and day (every hour, whatever the start above):
      // added to the older buckets of the same hour (each log is summed in one of them).
      for (const u of users) rows.push(...(await bucketsByDay(days, u, lo, hi)));
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
  };
}
