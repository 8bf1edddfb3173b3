/**
 * The logs on MongoDB (MONGO_FLAVOR=mongodb; the port is domain/log-store.ts): the rows alone, in
 * one collection, answered by ordinary queries that its indexes serve: a page is find + sort +
 * skip/limit, its total countDocuments, the stat a `$group`, the export one cursor, the cleanup
 * `deleteMany`. No read model: nothing is written per log but its row (and, once per username and
 * user, the name the dashboard's username filter maps to its users).
 *
 * The collection is `logs`, the one older versions wrote (plain-log-adopt.ts gives their rows and
 * the ferretdb flavor's day partitions the hour field). Each row carries `hour`, its `created_at`'s
 * hour: the order of the pages is the lists' (newest hour first, then arrival: ids are drawn in
 * arrival order), and every index is a console filter followed by that order, so a filtered page
 * reads its page from the index and a range is bounded by its hours.
 */
import type { Logger } from '@aigw/common';
import { LogType } from '@aigw/proto/common/v1/common';
import type { Connection } from 'mongoose';
import type { Retention } from '../domain/log-partitions.ts';
import type { LogDoc, NewLog } from '../domain/log-record.ts';
import type { LogStat, LogStore, StoredBatch, ToIndex } from '../domain/log-store.ts';
import { storeBatch } from './log-batch.ts';
import { bucketWriters } from './log-buckets.ts';
import { logDashboard } from './log-dashboard.ts';
import { chunked, EXPORT_CHUNK } from './log-export.ts';
import { type LogQuery, toFilter } from './log-filter.ts';
import type { IndexDoc } from './log-index-store.ts';
import { insertKeyed } from './log-rows.ts';
import { adoptRows, plainCleanup } from './plain-log-adopt.ts';
import { hourOf, type PlainRow } from './plain-rows.ts';

/** Newest first: the page order (the export reads it backwards). */
const NEWEST = { hour: -1, id: -1 } as const;

/** The console's filters (spec 02 section 7), each indexed with the page order after it. */
const FILTERS = ['type', 'user_id', 'username', 'token_name', 'model_name', 'channel', 'group'] as const;

/** The plain store's indexes: the page order alone (everyone's page, the cut), and per filter. */
export const PLAIN_INDEXES: Record<string, 1 | -1>[] = [
  { ...NEWEST },
  ...FILTERS.map((f) => ({ [f]: 1 as const, ...NEWEST })),
  // A user's consumption or errors: the self log page's usual filter.
  { user_id: 1, type: 1, ...NEWEST },
];

/** A query's filter (toFilter) with the hours of its range: the indexes' hour key bounds the read. */
export function plainFilter(q: LogQuery, cut: number): Record<string, unknown> {
  const f = toFilter(q, cut);
  const range = f.created_at as { $gte?: number; $lte?: number } | undefined;
  if (range) {
    f.hour = {
      ...(range.$gte !== undefined ? { $gte: hourOf(range.$gte) } : {}),
      ...(range.$lte !== undefined ? { $lte: hourOf(range.$lte) } : {}),
    };
  }
  return f;
}

/** The names documents (`n|<username>` in `log_index`, as the lists write them): the dashboard's username filter. */
function nameRecorder(main: ReturnType<Connection['collection']>) {
  const known = new Set<string>();
  return async (logs: ToIndex['log'][]) => {
    const pairs = new Map<string, [string, number]>();
    for (const l of logs) {
      const key = `${l.username}|${l.user_id}`;
      if (l.username && l.user_id && !known.has(key)) pairs.set(key, [l.username, l.user_id]);
    }
    if (pairs.size === 0) return;
    const ops = [...pairs.values()].map(([name, id]) => ({
      updateOne: { filter: { _id: `n|${name}` }, update: { $addToSet: { ids: id } }, upsert: true },
    }));
    await main.bulkWrite(ops as never, { ordered: false });
    if (known.size > 100_000) known.clear();
    for (const k of pairs.keys()) known.add(k);
  };
}

export function plainLogStore(conn: Connection): LogStore {
  const logs = conn.collection<PlainRow>('logs');
  const main = conn.collection<IndexDoc>('log_index');
  const writers = bucketWriters(conn);
  const userIds = async (name: string) => (await main.findOne({ _id: `n|${name}` }))?.ids ?? [];
  const dash = logDashboard(conn, userIds);
  const recordNames = nameRecorder(main as never);
  const meta = async () => (await main.findOne({ _id: 'meta' })) ?? ({ _id: 'meta' } as IndexDoc);
  const cutNow = async () => (await meta()).cut ?? 0;
  /** Older versions' pending logs folded (then the flag spares every start a query of them). */
  let pendingDone = false;

  const sum = async (filter: Record<string, unknown>, fields: Record<string, unknown>) =>
    (
      await logs.aggregate<Record<string, number>>([{ $match: filter }, { $group: { _id: null, ...fields } }]).toArray()
    )[0];

  return {
    flavor: 'mongodb',
    async ensureIndexes(): Promise<void> {
      await logs.createIndexes(PLAIN_INDEXES.map((key) => ({ key })));
      const buckets = conn.collection('quota_data');
      await buckets.createIndex({ created_at: 1 });
      await buckets.createIndex({ user_id: 1, created_at: 1 });
      await dash.dashFrom();
    },
    insertBatch: (docs: (NewLog & { src: string })[]): Promise<StoredBatch> =>
      storeBatch(conn, docs, (stored) =>
        insertKeyed(
          logs as never,
          stored.map((r) => ({ ...r, hour: hourOf(r.created_at) })),
        ),
      ),
    // The rows are the list: only the names of the listed logs are recorded.
    indexBatch: (list: ToIndex[]) => recordNames(list.filter((r) => !r.log.hidden).map((r) => r.log)),
    applyBuckets: writers.applyBuckets,
    async applyPending(limit?: number): Promise<number> {
      if (pendingDone || (await meta()).pendingFolded) return 0;
      const n = await writers.applyPending(limit);
      if (n > 0) return n;
      await main.updateOne({ _id: 'meta' }, { $set: { pendingFolded: true } }, { upsert: true });
      pendingDone = true;
      return 0;
    },
    adopt: () => adoptRows(conn, logs),
    async find(q: LogQuery, page: number, pageSize: number): Promise<{ items: LogDoc[]; total: number }> {
      const f = plainFilter(q, await cutNow());
      const [items, total] = await Promise.all([
        logs
          .find(f, { projection: { _id: 0, hour: 0 } })
          .sort(NEWEST)
          .skip((page - 1) * pageSize)
          .limit(pageSize)
          .toArray(),
        logs.countDocuments(f),
      ]);
      return { items: items as unknown as LogDoc[], total };
    },
    async stat(q: LogQuery, now = Math.floor(Date.now() / 1000)): Promise<LogStat> {
      const cut = await cutNow();
      const consume = { ...q, type: LogType.CONSUME };
      const [all, recent] = await Promise.all([
        sum(plainFilter(consume, cut), { quota: { $sum: '$quota' } }),
        sum(plainFilter({ ...consume, start: now - 60, end: undefined }, cut), {
          rpm: { $sum: 1 },
          tpm: { $sum: '$tokens' },
        }),
      ]);
      return { quota: Number(all?.quota ?? 0), rpm: Number(recent?.rpm ?? 0), tpm: Number(recent?.tpm ?? 0) };
    },
    async *exportRows(q: LogQuery, opts: { chunk?: number } = {}): AsyncGenerator<LogDoc[]> {
      const filter = plainFilter(q, await cutNow());
      const fields = { _id: 0, hour: 0, src: 0, agg: 0, hidden: 0 };
      yield* chunked(logs.find(filter, { projection: fields }).sort({ hour: 1, id: 1 }), opts.chunk ?? EXPORT_CHUNK);
    },
    async deleteBefore(ts: number): Promise<number> {
      const cut = await cutNow();
      const n = await logs.countDocuments({
        hidden: { $ne: true },
        hour: { $gte: hourOf(cut), $lte: hourOf(ts) },
        created_at: { $gte: cut, $lt: ts },
      });
      await main.updateOne({ _id: 'meta' }, { $max: { cut: ts } }, { upsert: true });
      return n;
    },
    dashboard: dash.dashboard,
    cleaner: (logger: Logger, retention: () => Retention) => plainCleanup(conn, logs, cutNow, logger, retention),
    jobs: () => ({ start: () => undefined, stop: async () => undefined }),
  };
}
