/**
 * The benchmarks' read of the logs service's stored rows, straight from its database, through the
 * service's own partition map (services/logs/src/data/log-rows.ts): every day partition of the
 * classes the filter's log types live in. The scripts check the accounting against these rows.
 */
import type { Connection } from 'mongoose';
import { logRows as serviceRows } from '../services/logs/src/data/log-rows.ts';
import { classOf, type LogClass } from '../services/logs/src/domain/log-partitions.ts';

async function partitionsOf(db: Connection, types: number[]) {
  const classes = new Set<LogClass>(types.map(classOf));
  const rows = serviceRows(db);
  return { rows, names: (await rows.partitions()).filter((p) => classes.has(p.cls)).map((p) => p.name) };
}

/** Rows of the given log types matching `filter`, with only `fields`, from every partition. */
export async function* logRows(
  db: Connection,
  types: number[],
  filter: Record<string, unknown>,
  fields: string[],
): AsyncGenerator<Record<string, unknown>> {
  const projection = Object.fromEntries(fields.map((f) => [f, 1]));
  const { rows, names } = await partitionsOf(db, types);
  for (const name of names) yield* rows.coll(name).find({ ...filter, type: { $in: types } }, { projection });
}

/** How many rows of the given log types match `filter`, over every partition. */
export async function countLogRows(db: Connection, types: number[], filter: Record<string, unknown>): Promise<number> {
  const { rows, names } = await partitionsOf(db, types);
  let n = 0;
  for (const name of names) n += await rows.coll(name).countDocuments({ ...filter, type: { $in: types } });
  return n;
}
