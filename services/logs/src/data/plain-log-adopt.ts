/**
 * The plain store's (plain-log-store.ts) upkeep: the rows it adopts at start (the ferretdb
 * flavor's day partitions, and older versions' rows in `logs` without their hour), and the
 * cleanup passes (the history cut and each class's retention, one `deleteMany` each).
 */
import type { Logger } from '@aigw/common';
import { LogType } from '@aigw/proto/common/v1/common';
import type { Collection, Connection } from 'mongoose';
import {
  indexCollection,
  indexDays,
  keptFrom,
  LOG_CLASSES,
  type LogClass,
  type Retention,
} from '../domain/log-partitions.ts';
import { type CleanupResult, oneAtATime } from './log-cleanup.ts';
import { insertKeyed, logRows, type StoredLog } from './log-rows.ts';
import { hourOf, type PlainRow } from './plain-rows.ts';

const CHUNK = 2_000;

/** The rows of a class (consumption 2, errors 5, the rest: top-up, admin, system, refund). */
const CLASS_TYPES: Record<LogClass, unknown> = {
  consume: LogType.CONSUME,
  error: LogType.ERROR,
  system: { $nin: [LogType.CONSUME, LogType.ERROR] },
};

/**
 * Moves the ferretdb flavor's day partitions into `logs` (each partition dropped once its rows are
 * in: a restart goes on, duplicates of rows moved before are skipped), drops the read model's day
 * collections, and gives older versions' rows their hour. Returns the rows moved.
 */
export async function adoptRows(conn: Connection, logs: Collection<PlainRow>): Promise<number> {
  const rows = logRows(conn);
  let moved = 0;
  for (const p of await rows.partitions()) {
    let chunk: PlainRow[] = [];
    const flush = async () => {
      await insertKeyed(logs as unknown as Collection<StoredLog>, chunk);
      moved += chunk.length;
      chunk = [];
    };
    for await (const r of rows.coll(p.name).find({}).batchSize(CHUNK)) {
      chunk.push({ ...r, hour: hourOf(r.created_at) });
      if (chunk.length >= CHUNK) await flush();
    }
    await flush();
    await rows.drop(p.name);
  }
  for (const day of indexDays(await rows.names())) await rows.drop(indexCollection(day));
  const hourless = logs.find({ hour: { $exists: false } }, { projection: { _id: 1, created_at: 1 } }).batchSize(CHUNK);
  let ops: { updateOne: { filter: { _id: unknown }; update: { $set: { hour: number } } } }[] = [];
  for await (const r of hourless) {
    ops.push({ updateOne: { filter: { _id: r._id }, update: { $set: { hour: hourOf(r.created_at) } } } });
    if (ops.length >= CHUNK) {
      await logs.bulkWrite(ops as never, { ordered: false });
      ops = [];
    }
  }
  if (ops.length > 0) await logs.bulkWrite(ops as never, { ordered: false });
  return moved;
}

/**
 * The plain store's cleanup: the rows before the history cut, and each class's rows older than its
 * retention (keptFrom: whole days), a `deleteMany` each, bounded by hour (the indexes' key). Each
 * pass first adopts what a replica of the other flavor wrote meanwhile (adoptRows).
 */
export function plainCleanup(
  conn: Connection,
  logs: Collection<PlainRow>,
  cut: () => Promise<number>,
  logger: Logger,
  retention: () => Retention,
) {
  async function pass(now: number): Promise<CleanupResult> {
    const out: CleanupResult = { droppedPartitions: 0, droppedIndexDays: 0, rebuiltDays: 0, deletedRows: 0 };
    // Partitions a replica of the ferretdb flavor wrote after this one started (a rolling switch).
    const moved = await adoptRows(conn, logs);
    if (moved > 0) logger.info({ logs: moved }, 'log partitions moved into the plain store');
    const from = await cut();
    if (from > 0) {
      const r = await logs.deleteMany({ hour: { $lte: hourOf(from) }, created_at: { $lt: from } });
      out.deletedRows += r.deletedCount;
    }
    const kept = keptFrom(retention(), now);
    for (const cls of LOG_CLASSES) {
      const day = kept[cls];
      if (day === null) continue;
      // A whole day's hours: `hour < day * 24` is `created_at < day * 86,400`.
      out.deletedRows += (
        await logs.deleteMany({ type: CLASS_TYPES[cls], hour: { $lt: day * 24 } } as never)
      ).deletedCount;
    }
    if (out.deletedRows) logger.info({ ...out, cut: from }, 'log cleanup done');
    return out;
  }
  return oneAtATime(pass, logger);
}
