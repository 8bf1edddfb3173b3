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
import { hourCubeId } from '../domain/log-cubes.ts';
import { scopeAll } from '../domain/log-index.ts';
import { SEGMENT } from '../domain/log-segments.ts';
import { cubeDay, cubeHours, hourDone } from './log-index-cubing.ts';
import { logIndexQueries } from './log-index-query.ts';
import type { Hour } from './log-index-store.ts';
import { logIndexStore } from './log-index-store.ts';
import { logIndexWriter } from './log-index-writer.ts';
import { cubeSegments } from './log-segment-cubing.ts';

export type { IndexQuery } from './log-index-plan.ts';

const DAY = 86_400;
const HOUR = 3_600;
/** An hour is cubed this long after it ends: a log of it still in a batch then would make it walked again. */
export const CUBE_GRACE = 60;
export type { LogRef } from './log-index-store.ts';

/**
 * `clock`: the time (seconds) the consumer's writes compare with. Recent seconds are written
 * only for logs at most two minutes older than that (see log-index-writer.ts).
 */
export function logIndexRepository(
  conn: Connection,
  clock: () => number = () => Date.now() / 1000,
  segment: number = SEGMENT,
) {
  const store = logIndexStore(conn, segment);
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
      await main.updateOne({ _id: 'meta' }, { $unset: { [`cubed.${day}`]: '', [`hcubed.${day}`]: '' } });
      await dayColl(day)
        .drop()
        .catch((err: { codeName?: string }) => {
          if (err.codeName !== 'NamespaceNotFound') throw err;
        });
    },

    /**
     * Computes the day cubes of the closed days (before `now`'s) not done yet, and their hours'
     * cubes, after the cut's day, oldest first, at most `limit` days. Returns the days done.
     */
    async cubeClosedDays(now: number, limit = Number.POSITIVE_INFINITY): Promise<number> {
      const m = await meta();
      if (m.first === undefined) return 0;
      let done = 0;
      const from = Math.max(m.first, m.cut ? Math.floor(m.cut / DAY) + 1 : 0);
      for (let day = from; day < Math.floor(now / DAY) && done < limit; day++) {
        if (m.hcubed?.[String(day)]) continue;
        if ((await cubeDay(store, day)) === null) continue;
        await main.updateOne({ _id: 'meta' }, { $set: { [`hcubed.${day}`]: true } });
        done++;
      }
      return done;
    },

    /**
     * Computes the hour cubes of the hours closed at least CUBE_GRACE seconds before `now`, after
     * the cut, of the days whose cubes are not all done, whose everyone's cube does not count what
     * its directory counts now; at most `limit`, oldest first. Returns the hours done and whether
     * some are left.
     */
    async cubeClosedHours(now: number, limit: number): Promise<{ hours: number; more: boolean }> {
      const m = await meta();
      if (m.first === undefined) return { hours: 0, more: false };
      const hi = Math.floor((now - CUBE_GRACE) / HOUR) * HOUR - 1;
      const todo: Hour[] = [];
      for (let day = m.first; day * DAY <= hi && todo.length <= limit; day++) {
        if (m.hcubed?.[String(day)]) continue;
        const lo = Math.max(day * DAY, m.cut ?? 0);
        if (lo > Math.min(hi, day * DAY + DAY - 1)) continue;
        const hours = (await store.hoursIn(scopeAll, lo, Math.min(hi, day * DAY + DAY - 1))).filter((h) => h.whole);
        const marks = await store.cubes(hours.map((h) => hourCubeId(scopeAll, h.hour)));
        todo.push(...hours.filter((h) => !hourDone(h, marks.get(hourCubeId(scopeAll, h.hour)))).reverse());
      }
      return { hours: await cubeHours(store, todo.slice(0, limit)), more: todo.length > limit };
    },

    /**
     * Computes the cubes of the current hour's complete segments not done yet (log-segment-cubing.ts),
     * at most `limit`. Returns the segments done and whether some are left.
     */
    cubeSegments(now: number, limit: number): Promise<{ segments: number; more: boolean }> {
      return cubeSegments(store, now, limit);
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
