/**
 * The logs themselves, one collection per class and UTC day (domain/log-partitions.ts), keyed by
 * event id: every read and delete here is by `_id` (the index MongoDB and FerretDB both keep),
 * except the scans the tests compare against and the rebuild of a day after a class was dropped.
 */
import { duplicateIndexes } from '@aigw/common';
import type { Collection, Connection } from 'mongoose';
import { classOf, dayOf, type RowsPartition, rowPartitions, rowsCollection } from '../domain/log-partitions.ts';
import type { LogDoc } from '../domain/log-record.ts';

/** A stored log: keyed by its event id. */
export type StoredLog = LogDoc & { _id: string };

/** Where a log lives: its id, time and type. */
export interface RowRef {
  eventId: string;
  createdAt: number;
  type: number;
}

const IN_CHUNK = 5_000;

/** A row an insert refused as a duplicate, with what is stored under its id. */
export interface Duplicate<R> {
  row: R;
  stored: { src?: string; id: number } | null;
}

/**
 * Inserts rows keyed by event id into one collection (unordered: a duplicate fails alone).
 * Returns the rows refused as duplicates, each with what is stored under its id (`src`, `id`).
 */
export async function insertKeyed<R extends StoredLog>(
  coll: Collection<StoredLog>,
  list: R[],
): Promise<Duplicate<R>[]> {
  const dups: Duplicate<R>[] = [];
  try {
    await coll.insertMany(list, { ordered: false });
  } catch (err) {
    const refused = duplicateIndexes(err);
    if (!refused) throw err;
    // Only redeliveries get here: a lookup per duplicate, by _id.
    for (const i of refused) {
      const row = list[i];
      if (!row) continue;
      const stored = await coll.findOne({ _id: row._id }, { projection: { src: 1, id: 1 } });
      dups.push({ row, stored });
    }
  }
  return dups;
}

const partitionOf = (r: { type: number; created_at: number }) => rowsCollection(classOf(r.type), dayOf(r.created_at));

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const t of items) {
    const k = key(t);
    const l = out.get(k);
    if (l) l.push(t);
    else out.set(k, [t]);
  }
  return out;
}

export function logRows(conn: Connection) {
  const colls = new Map<string, Collection<StoredLog>>();
  const coll = (name: string) => {
    let c = colls.get(name);
    if (!c) {
      c = conn.collection<StoredLog>(name);
      if (colls.size > 5_000) colls.clear();
      colls.set(name, c);
    }
    return c;
  };

  async function names(): Promise<string[]> {
    const db = conn.db;
    if (!db) throw new Error('logs database not connected');
    return (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
  }

  return {
    coll,
    names,
    partitions: async (): Promise<RowsPartition[]> => rowPartitions(await names()),

    /**
     * Inserts rows into their partitions (unordered: a duplicate fails alone). Returns the rows
     * refused as duplicates, each with what is stored under its id (`src`, `id`).
     */
    async insert<R extends StoredLog>(rows: R[]): Promise<Duplicate<R>[]> {
      const dups: Duplicate<R>[] = [];
      await Promise.all(
        [...groupBy(rows, partitionOf)].map(async ([name, list]) =>
          dups.push(...(await insertKeyed(coll(name), list))),
        ),
      );
      return dups;
    },

    /** The logs of some refs (one `$in` per partition), keyed by event id. */
    async byRefs(refs: RowRef[]): Promise<Map<string, LogDoc>> {
      const out = new Map<string, LogDoc>();
      const groups = groupBy(refs, (r) => partitionOf({ type: r.type, created_at: r.createdAt }));
      await Promise.all(
        [...groups].flatMap(([name, list]) => {
          const reads: Promise<void>[] = [];
          for (let i = 0; i < list.length; i += IN_CHUNK) {
            const ids = list.slice(i, i + IN_CHUNK).map((r) => r.eventId);
            reads.push(
              coll(name)
                .find({ _id: { $in: ids } })
                .toArray()
                .then((found) => {
                  for (const { _id, ...l } of found) out.set(_id, l as LogDoc);
                }),
            );
          }
          return reads;
        }),
      );
      return out;
    },

    /** Deletes some logs by id (one `deleteMany` of an `$in` per partition and chunk). */
    async deleteRefs(refs: RowRef[]): Promise<number> {
      let n = 0;
      for (const [name, list] of groupBy(refs, (r) => partitionOf({ type: r.type, created_at: r.createdAt }))) {
        const res = await coll(name).deleteMany({ _id: { $in: list.map((r) => r.eventId) } });
        n += res.deletedCount;
      }
      return n;
    },

    async drop(name: string): Promise<void> {
      await coll(name)
        .drop()
        .catch((err: { codeName?: string }) => {
          if (err.codeName !== 'NamespaceNotFound') throw err;
        });
    },

    /** Every partition's logs a filter selects (the scan the tests compare the lists with). */
    async scan(filter: Record<string, unknown>): Promise<LogDoc[]> {
      const parts = rowPartitions(await names());
      const found = await Promise.all(
        parts.map((p) =>
          coll(p.name)
            .find(filter, { projection: { _id: 0 } })
            .toArray(),
        ),
      );
      return found.flat() as LogDoc[];
    },
  };
}

export type LogRows = ReturnType<typeof logRows>;
