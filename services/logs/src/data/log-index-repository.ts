/**
 * The log list's read model (see domain/log-index.ts): every read and write is by `_id` (one
 * value or an `$in` list), the only filter FerretDB on SQLite answers from an index, and the index
 * MongoDB keeps on every collection. A day's directories, blocks and cubes live in the day's
 * collection (`log_index_<yyyymmdd>`); the meta document and the partitions' watermarks in
 * `log_index`.
 *
 * Written by the consumer after a batch's logs are stored (log-index-writer.ts). A redelivered
 * batch (same partition and offsets) is indexed again only above the partition's watermark
 * (`w|<topic>|p<n>`, raised after the blocks are written): a crash in between may leave an entry
 * twice (pages drop the copy; the count keeps it) or a position empty (the page is one shorter).
 * Read by the log page's queries (log-index-query.ts).
 */

import type { Connection } from 'mongoose';
import { cubeDay } from './log-index-cubing.ts';
import { logIndexQueries } from './log-index-query.ts';
import { logIndexStore } from './log-index-store.ts';
import { logIndexWriter } from './log-index-writer.ts';

export type { IndexQuery } from './log-index-plan.ts';
export type { LogRef } from './log-index-store.ts';

/**
 * `clock`: the time (seconds) the consumer's writes compare with. Recent seconds are written
 * only for logs at most two minutes older than that (see log-index-writer.ts).
 */
export function logIndexRepository(conn: Connection, clock: () => number = () => Date.now() / 1000) {
  const store = logIndexStore(conn);
  const { main, dayColl, meta } = store;
  const writer = logIndexWriter(store, clock);
  const queries = logIndexQueries(store);

  return {
    add: writer.add,
    page: queries.page,
    stat: queries.stat,
    countBefore: queries.countBefore,
    refsBetween: queries.refsBetween,

    /** The user ids logged under a username. */
    async userIds(name: string): Promise<number[]> {
      return (await main.findOne({ _id: `n|${name}` }))?.ids ?? [];
    },

    /** The last offset of a partition the lists hold (-1: none). */
    async watermark(key: string): Promise<number> {
      return (await main.findOne({ _id: `w|${key}` }, { projection: { o: 1 } }))?.o ?? -1;
    },
    async raiseWatermark(key: string, offset: number): Promise<void> {
      await main.updateOne({ _id: `w|${key}` }, { $max: { o: offset } }, { upsert: true });
    },

    meta,
    /** Progress of the move of the logs of the single `logs` collection (null: done). */
    async markMigrated(lastId: number | null): Promise<void> {
      await main.updateOne(
        { _id: 'meta' },
        lastId === null ? { $set: { migrated: true } } : { $max: { migratedUpTo: lastId } },
        { upsert: true },
      );
    },
    async markRebuild(day: number, on: boolean): Promise<void> {
      await main.updateOne(
        { _id: 'meta' },
        on ? { $set: { [`rebuild.${day}`]: true } } : { $unset: { [`rebuild.${day}`]: '' } },
        { upsert: true },
      );
    },
    async markPurged(cut: number): Promise<void> {
      await main.updateOne({ _id: 'meta' }, { $max: { purged: cut } }, { upsert: true });
    },
    /** The day's part of the read model goes (with the day's logs, or before a rebuild). */
    async dropDay(day: number): Promise<void> {
      await main.updateOne({ _id: 'meta' }, { $unset: { [`cubed.${day}`]: '' } });
      await dayColl(day)
        .drop()
        .catch((err: { codeName?: string }) => {
          if (err.codeName !== 'NamespaceNotFound') throw err;
        });
    },

    /**
     * Computes the day cubes of the closed days (before `now`'s) not done yet, after the cut's
     * day, oldest first. Returns the days done.
     */
    async cubeClosedDays(now: number): Promise<number> {
      const m = await meta();
      if (m.first === undefined) return 0;
      let done = 0;
      const from = Math.max(m.first, m.cut ? Math.floor(m.cut / 86_400) + 1 : 0);
      for (let day = from; day < Math.floor(now / 86_400); day++) {
        if (m.cubed?.[String(day)]) continue;
        if ((await cubeDay(store, day)) === null) continue;
        await main.updateOne({ _id: 'meta' }, { $set: { [`cubed.${day}`]: true } });
        done++;
      }
      return done;
    },
    /** Queries start no earlier than `day` (nothing older is kept any more). */
    async raiseFirst(day: number): Promise<void> {
      await main.updateOne({ _id: 'meta', first: { $lt: day } }, { $set: { first: day } });
      writer.forgetFirst();
    },

    /** Lists start at `ts` from now on (logs before it are gone for every query at once). */
    async cut(ts: number): Promise<void> {
      await main.updateOne({ _id: 'meta' }, { $max: { cut: ts } }, { upsert: true });
    },
  };
}

export type LogIndexRepository = ReturnType<typeof logIndexRepository>;
