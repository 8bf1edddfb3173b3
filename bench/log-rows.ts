/**
 * The benchmarks' read of the logs service's stored rows, straight from its database: every
 * partition (`logs_<class>_<yyyymmdd>`, services/logs/src/domain/log-partitions.ts) of the classes
 * the filter's log types live in. The scripts check the accounting against these rows.
 */
import type { Connection } from 'mongoose';
import { classOf, type LogClass, rowPartitions } from '../services/logs/src/domain/log-partitions.ts';

async function partitionNames(db: Connection, types: number[]): Promise<string[]> {
  const classes = new Set<LogClass>(types.map(classOf));
  const names = (await db.db?.listCollections({}, { nameOnly: true }).toArray())?.map((c) => c.name) ?? [];
  return rowPartitions(names)
    .filter((p) => classes.has(p.cls))
    .map((p) => p.name);
}

/** Rows of the given log types matching `filter`, with only `fields`, from every partition. */
export async function* logRows(
  db: Connection,
  types: number[],
  filter: Record<string, unknown>,
  fields: string[],
): AsyncGenerator<Record<string, unknown>> {
  const projection = Object.fromEntries(fields.map((f) => [f, 1]));
  for (const name of await partitionNames(db, types)) {
    yield* db.collection(name).find({ ...filter, type: { $in: types } }, { projection });
  }
}

/** How many rows of the given log types match `filter`, over every partition. */
export async function countLogRows(db: Connection, types: number[], filter: Record<string, unknown>): Promise<number> {
  let n = 0;
  for (const name of await partitionNames(db, types))
    n += await db.collection(name).countDocuments({ ...filter, type: { $in: types } });
  return n;
}
