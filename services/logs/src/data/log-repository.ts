/**
 * The `ferretdb` adapter of the logs' storage port (domain/log-store.ts; MONGO_FLAVOR, the
 * default; `mongodb` is plain-log-store.ts). Logs and hourly aggregates in the service's own
 * database. No transactions and no change streams (the MongoDB-compatible server has neither):
 * idempotency comes from the event id as `_id` in each day's partition (log-rows.ts), and
 * aggregates from offset-tagged $inc upserts (log-buckets.ts, read by log-dashboard.ts). Pages and
 * stats come from the read model (log-index-repository.ts); both are time-partitioned by UTC day,
 * and cleanup drops whole days (log-cleanup.ts).
 */
import type { Logger } from '@aigw/common';
import { LogType } from '@aigw/proto/common/v1/common';
import type { Collection, Connection } from 'mongoose';
import type { Indexable } from '../domain/log-index.ts';
import type { Retention } from '../domain/log-partitions.ts';
import type { LogDoc, NewLog } from '../domain/log-record.ts';
import type { LogStore, StoredBatch, ToIndex } from '../domain/log-store.ts';
import { storeBatch } from './log-batch.ts';
import { type BucketDoc, bucketWriters, type LegacyLog } from './log-buckets.ts';
import { logCleanup } from './log-cleanup.ts';
import { logCubingJob } from './log-cubing-job.ts';
import { logDashboard } from './log-dashboard.ts';
import { exportLogs } from './log-export.ts';
import { type LogQuery, toFilter } from './log-filter.ts';
import { type LogIndexRepository, logIndexRepository } from './log-index-repository.ts';
import { type LogRows, logRows, type StoredLog } from './log-rows.ts';

export { type LogQuery, toFilter };
export type { ToIndex };

/** `lists: false` answers queries by scanning the partitions, as before the lists (tests compare). */
/**
 * `clock`: see logIndexRepository (tests that query at a past `now` set it back); `segment`: the
 * positions per segment of an hour (domain/log-segments.ts; tests make it small).
 */
export function logRepository(
  conn: Connection,
  opts: { lists?: boolean; clock?: () => number; segment?: number } = {},
) {
  const legacy = conn.collection<LegacyLog>('logs');
  const buckets = conn.collection<BucketDoc>('quota_data');
  const index = logIndexRepository(conn, opts.clock, opts.segment);
  const writers = bucketWriters(conn);
  const dash = logDashboard(conn, index.userIds);
  const rows = logRows(conn);
  /** Whether the lists hold every log (checked until they do; then for good). */
  let listsBuilt = false;
  const useLists = async () => {
    if (opts.lists === false) return false;
    if (!listsBuilt) listsBuilt = (await index.meta()).migrated === true;
    return listsBuilt;
  };
  const cutNow = async () => (await index.meta()).cut ?? 0;

  const repo = {
    flavor: 'ferretdb' as const,
    index,
    rows,
    applyBuckets: writers.applyBuckets,
    applyPending: writers.applyPending,
    dashboard: dash.dashboard,
    async ensureIndexes(): Promise<void> {
      // The partitions need only their `_id` (the event id). The buckets are read by `_id`; these
      // serve the dashboard's scan of the hours before this version (and older versions).
      await buckets.createIndex({ created_at: 1 });
      await buckets.createIndex({ user_id: 1, created_at: 1 });
      await dash.dashFrom();
    },

    /** Stores a batch of logs keyed by event id, one unordered insert per day partition (log-batch.ts). */
    insertBatch: (docs: (NewLog & { src: string })[]): Promise<StoredBatch> =>
      storeBatch(conn, docs, (stored) => rows.insert(stored)),

    /**
     * Adds a partition's stored logs to the lists: those stored now, and redelivered ones above
     * the offset the lists hold for the partition (`key`: topic and partition). Hidden logs are not
     * listed.
     */
    /** Adds a batch's logs to the lists; `marks`: per watermark key, the batch's last offset. */
    async indexBatch(list: ToIndex[], marks: Map<string, number>): Promise<void> {
      const wm = new Map<string, number>();
      for (const key of new Set(list.filter((r) => !r.fresh).map((r) => r.key)))
        wm.set(key, await index.watermark(key));
      await index.add(
        list.filter((r) => !r.log.hidden && (r.fresh || r.offset > (wm.get(r.key) ?? -1))).map((r) => r.log),
      );
      for (const [key, offset] of marks) await index.raiseWatermark(key, offset);
    },

    /**
     * Moves the logs of the single collection older versions wrote (`logs`) into the day
     * partitions and the lists, once, in id order (resumes after a restart by id), then drops it;
     * queries scan the partitions until then. Returns the logs moved.
     */
    async buildLists(): Promise<number> {
      const n = await moveLegacyLogs(legacy, rows, index);
      listsBuilt = true;
      return n;
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
  };
  return {
    ...repo,
    /** The logs of the older single collection moved into the partitions and the lists (buildLists). */
    adopt: repo.buildLists,
    exportRows: (q: LogQuery, o?: { chunk?: number; now?: number }) => exportLogs(repo, q, o),
    cleaner: (logger: Logger, retention: () => Retention) => logCleanup(repo, logger, retention),
    /** Each closed hour's and day's cubes, computed in the background (combined filters count them). */
    jobs: (logger: Logger, intervalMs: number) => logCubingJob(index, logger, intervalMs),
  } satisfies LogStore;
}

/** The move of buildLists (see there); 0 when it was done before. */
async function moveLegacyLogs(
  legacy: Collection<LegacyLog>,
  rows: LogRows,
  index: LogIndexRepository,
): Promise<number> {
  const m = await index.meta();
  if (m.migrated) return 0;
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
  return n;
}

export type LogRepository = ReturnType<typeof logRepository>;

/** The read model and the partitions: what cleanup and export use of the repository. */
export interface ListsRepository {
  index: LogIndexRepository;
  rows: LogRows;
}

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
