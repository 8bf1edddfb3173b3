/**
 * The export of logs (GET /api/log/export): every log a filter selects, read partition by
 * partition with a cursor each, in chunks. Nothing holds more than a chunk and the cursor's batch:
 * the consumer (the gRPC stream, paced by its flow control) pulls the next chunk when it has
 * written the last, so a million rows cost what a thousand do.
 *
 * Order: the days of the window oldest first, and within a day the classes one after the other in
 * the order their rows were stored. A sort would make the database hold a whole day (FerretDB
 * answers only `_id` from an index), which is what the export must not do.
 */
import type { mongo } from 'mongoose';
import { classOf, dayOf, LOG_CLASSES, type RowsPartition } from '../domain/log-partitions.ts';
import type { LogDoc } from '../domain/log-record.ts';
import { type LogQuery, toFilter } from './log-filter.ts';
import type { ListsRepository } from './log-repository.ts';

/** How long an export may stream (the gRPC server lets a call in flight run that long). */
export const EXPORT_MAX_MS = 60 * 60_000;

/** Rows per chunk yielded, and per batch the cursors fetch. */
export const EXPORT_CHUNK = 500;

/** The partitions an export of `q` reads: its classes, the days of its window, oldest first. */
export function exportPartitions(parts: RowsPartition[], q: LogQuery, cut: number, now: number): RowsPartition[] {
  const from = dayOf(Math.max(q.start ?? 0, cut));
  const to = dayOf(q.end || now);
  const classes = q.type ? [classOf(q.type)] : LOG_CLASSES;
  return parts
    .filter((p) => p.day >= from && p.day <= to && classes.includes(p.cls))
    .sort((a, b) => a.day - b.day || LOG_CLASSES.indexOf(a.cls) - LOG_CLASSES.indexOf(b.cls));
}

/** Every log `q` selects (its window already bounded), in chunks of at most `chunk`. */
export async function* exportLogs(
  repo: ListsRepository,
  q: LogQuery,
  opts: { chunk?: number; now?: number } = {},
): AsyncGenerator<LogDoc[]> {
  const size = opts.chunk ?? EXPORT_CHUNK;
  const cut = (await repo.index.meta()).cut ?? 0;
  const filter = toFilter(q, cut);
  const parts = exportPartitions(await repo.rows.partitions(), q, cut, opts.now ?? Math.floor(Date.now() / 1000));
  for (const p of parts) {
    yield* chunked(repo.rows.coll(p.name).find(filter, { projection: { _id: 0, src: 0, agg: 0, hidden: 0 } }), size);
  }
}

/** A cursor's rows in chunks of at most `size` (its batches that size); closed at the end or on a stop. */
export async function* chunked(cursor: mongo.FindCursor<unknown>, size: number): AsyncGenerator<LogDoc[]> {
  cursor.batchSize(size);
  try {
    let chunk: LogDoc[] = [];
    for await (const row of cursor) {
      chunk.push(row as LogDoc);
      if (chunk.length >= size) {
        yield chunk;
        chunk = [];
      }
    }
    if (chunk.length > 0) yield chunk;
  } finally {
    await cursor.close();
  }
}
