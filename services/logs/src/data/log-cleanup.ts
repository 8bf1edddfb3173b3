/**
 * Cleanup in the background: the history cut (`DELETE /api/log/`, answered at once after the cut
 * is recorded) and the retention of each log class (LogConsumeRetentionDays,
 * LogErrorRetentionDays, LogSystemRetentionDays; 0 keeps forever).
 *
 * - Whole days go as collections: a class's day partition before its retention or the cut's day
 *   is dropped; the day's read model goes with the last of its classes, or is rebuilt from the
 *   classes left (marked in the meta document first, so a restart finishes it).
 * - The day the cut falls in: the logs before the cut are deleted by `_id` (read from everyone's
 *   list), 500 per `deleteMany`, so no write of the store waits long behind it; its read model
 *   stays until the day goes (queries start at the cut already). Hidden logs (LogConsumeEnabled
 *   off) are not listed: they go with the day.
 *
 * One pass at a time per process; passes are idempotent, so two replicas may both run one.
 */
import type { Logger } from '@aigw/common';
import type { Indexable } from '../domain/log-index.ts';
import {
  cleanupPlan,
  DAY,
  dayOf,
  indexDays,
  keptFrom,
  type Retention,
  rowPartitions,
} from '../domain/log-partitions.ts';
import type { LogDoc } from '../domain/log-record.ts';
import type { ListsRepository } from './log-repository.ts';

const DELETE_BATCH = 500;

export interface CleanupResult {
  droppedPartitions: number;
  droppedIndexDays: number;
  rebuiltDays: number;
  deletedRows: number;
}

export function logCleanup(repo: ListsRepository, logger: Logger, retention: () => Retention) {
  const { index, rows } = repo;

  async function rebuild(day: number): Promise<number> {
    await index.markRebuild(day, true);
    await index.dropDay(day);
    const parts = (await rows.partitions()).filter((p) => p.day === day);
    const found: LogDoc[] = [];
    for (const p of parts) {
      found.push(
        ...((await rows
          .coll(p.name)
          .find({ hidden: { $ne: true } })
          .toArray()) as LogDoc[]),
      );
    }
    found.sort((a, b) => a.id - b.id);
    for (let i = 0; i < found.length; i += 2_000) await index.add(found.slice(i, i + 2_000) as Indexable[]);
    await index.markRebuild(day, false);
    return found.length;
  }

  async function pass(now: number): Promise<CleanupResult> {
    const out: CleanupResult = { droppedPartitions: 0, droppedIndexDays: 0, rebuiltDays: 0, deletedRows: 0 };
    const m = await index.meta();
    const cut = m.cut ?? 0;
    const names = await rows.names();
    const parts = rowPartitions(names);
    const plan = cleanupPlan(parts, cut, keptFrom(retention(), now));
    for (const p of plan.drop) {
      await rows.drop(p.name);
      out.droppedPartitions++;
      logger.info({ partition: p.name }, 'log partition dropped');
    }
    const dropIndex = new Set(plan.dropIndexDays);
    for (const d of indexDays(names)) if (d < dayOf(cut)) dropIndex.add(d);
    for (const d of dropIndex) {
      await index.dropDay(d);
      out.droppedIndexDays++;
    }
    const rebuilds = new Set([...plan.rebuildDays, ...Object.keys(m.rebuild ?? {}).map(Number)]);
    for (const d of rebuilds) {
      const n = await rebuild(d);
      out.rebuiltDays++;
      logger.info({ day: d, logs: n }, 'log lists of a day rebuilt after a class of its logs was dropped');
    }
    // The day the cut falls in: its logs before the cut, by id, a batch at a time.
    const purged = m.purged ?? 0;
    if (cut > purged) {
      const from = Math.max(dayOf(cut) * DAY, purged);
      let batches = 0;
      for await (const refs of index.refsBetween(from, cut)) {
        for (let i = 0; i < refs.length; i += DELETE_BATCH) {
          out.deletedRows += await rows.deleteRefs(refs.slice(i, i + DELETE_BATCH));
          if (++batches % 20 === 0) logger.info({ deleted: out.deletedRows, cut }, 'log cleanup in progress');
          // Let the consumer's writes in between batches.
          await new Promise((r) => setImmediate(r));
        }
      }
      await index.markPurged(cut);
    }
    // Queries start at the oldest day kept.
    const left = parts.filter((p) => !plan.drop.includes(p));
    if (plan.drop.length > 0 && left.length > 0) await index.raiseFirst(Math.min(...left.map((p) => p.day)));
    if (out.droppedPartitions || out.deletedRows || out.rebuiltDays) logger.info({ ...out, cut }, 'log cleanup done');
    return out;
  }

  return oneAtATime(pass, logger);
}

/**
 * Runs cleanup passes one at a time: a pass asked for while one runs resolves with the running
 * one, and one more runs after it (the ask may have come after its start).
 */
export function oneAtATime(pass: (now: number) => Promise<CleanupResult>, logger: Logger) {
  let running: Promise<CleanupResult> | null = null;
  let again = false;
  /** Runs a pass (or one more after the running one) and resolves when it is done. */
  function run(now = Math.floor(Date.now() / 1000)): Promise<CleanupResult> {
    if (running) {
      again = true;
      return running;
    }
    running = pass(now)
      .catch((err) => {
        logger.warn({ err }, 'log cleanup failed; the next pass retries');
        throw err;
      })
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          void run().catch(() => undefined);
        }
      });
    return running;
  }

  return { run };
}

export type LogCleanup = ReturnType<typeof logCleanup>;
