/**
 * Retention of task records (option TaskRetentionDays; 0, the default, keeps them forever): in
 * the background, the drawing tasks (`mj_tasks`) and async tasks (`tasks`) submitted more than
 * that many whole UTC days before today are deleted with their final-transition records
 * (`<collection>_finals`), like the log classes' retention (LogConsumeRetentionDays...).
 *
 * Only tasks that are over are deleted: final, and billed (`settled` or `refunded`). A task still
 * polled, or one whose settle or refund is still owed, stays whatever its age (a task unfinished
 * after TASKS_TIMEOUT_MS fails and is refunded, then goes with the next pass).
 *
 * Deleted a batch at a time (ids read by `{created_at}`, then deleted by `_id`), so no write of
 * the service waits long behind a pass. On MongoDB the read uses the `{created_at: 1}` index; on
 * FerretDB each batch's read is a scan of the collection (tasks are thousands a day, not millions).
 */
import type { Logger } from '@aigw/common';
import type { Collection, Connection } from 'mongoose';

const DAY = 86_400;
const BATCH = 500;

/** The first second kept: 00:00 UTC `days` whole days before `now`'s day (0 keeps everything). */
export function taskKeptFrom(days: number, now: number): number {
  if (!Number.isFinite(days) || days <= 0) return 0;
  return (Math.floor(now / DAY) - Math.floor(days)) * DAY;
}

export interface TaskRetentionResult {
  /** Deleted per collection. */
  deleted: Record<string, number>;
}

interface Expirable {
  _id: number;
  created_at: number;
  final: boolean;
  billing: string;
}

export const TASK_COLLECTIONS = ['mj_tasks', 'tasks'] as const;

/** Creates the index the retention reads by (MongoDB; FerretDB scans either way). */
export async function ensureRetentionIndexes(conn: Connection): Promise<void> {
  for (const name of TASK_COLLECTIONS) await conn.collection(name).createIndex({ created_at: 1 });
}

/** The retention pass over both task collections; one pass at a time per process. */
export function taskRetention(conn: Connection, logger: Logger, days: () => number) {
  let running: Promise<TaskRetentionResult> | null = null;

  async function purge(name: string, keptFrom: number): Promise<number> {
    const col = conn.collection(name) as unknown as Collection<Expirable>;
    const finals = conn.collection(`${name}_finals`) as unknown as Collection<{ _id: number }>;
    const over = { created_at: { $lt: keptFrom }, final: true, billing: { $in: ['settled', 'refunded'] } };
    let deleted = 0;
    for (;;) {
      const ids = (
        await col
          .find(over, { projection: { _id: 1 } })
          .limit(BATCH)
          .toArray()
      ).map((d) => d._id);
      if (ids.length === 0) return deleted;
      // The task first: a final record without its task is harmless, a task without one is not.
      deleted += (await col.deleteMany({ _id: { $in: ids }, ...over })).deletedCount;
      await finals.deleteMany({ _id: { $in: ids } });
      // Let the service's own writes in between batches.
      await new Promise((r) => setImmediate(r));
    }
  }

  async function pass(now: number): Promise<TaskRetentionResult> {
    const out: TaskRetentionResult = { deleted: {} };
    const keptFrom = taskKeptFrom(days(), now);
    if (keptFrom === 0) return out;
    for (const name of TASK_COLLECTIONS) out.deleted[name] = await purge(name, keptFrom);
    if (Object.values(out.deleted).some((n) => n > 0)) logger.info({ ...out.deleted, keptFrom }, 'old tasks deleted');
    return out;
  }

  return {
    /** Runs a pass (or joins the running one); `now` in seconds. */
    run(now = Math.floor(Date.now() / 1000)): Promise<TaskRetentionResult> {
      running ??= pass(now).finally(() => {
        running = null;
      });
      return running;
    },
  };
}

export type TaskRetention = ReturnType<typeof taskRetention>;
