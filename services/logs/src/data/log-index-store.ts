/**
 * Reading the log list's read model (see domain/log-index.ts), every read by `_id` (one value or
 * an `$in` list): the only filter FerretDB on SQLite answers from an index. A day's directories,
 * blocks and cubes live in the day's collection (`log_index_<yyyymmdd>`); the meta document, the
 * partitions' watermarks and the names in `log_index`.
 */

import { duplicateIndexes } from '@aigw/common';
import type { Collection, Connection } from 'mongoose';
import { type CubeDoc, dayCubeId, hourCubeId } from '../domain/log-cubes.ts';
import {
  BLOCK,
  blockDocIds,
  dayOf,
  dayOfDoc,
  daysOf,
  dirId,
  E,
  type Entry,
  type HourSlot,
  hourOf,
  hoursOf,
  parseEntry,
  slotOf,
  wholeIn,
} from '../domain/log-index.ts';
import { indexCollection } from '../domain/log-partitions.ts';
import { SEGMENT, type SegmentDoc } from '../domain/log-segments.ts';

/** `$in` lists FerretDB pushes down hold up to 10,000 ids (deploy/local/infra/ferretdb). */
export const IN_CHUNK = 5_000;
const DAY = 86_400;

export interface IndexDoc {
  _id: string;
  /** Directories: the UTC day; blocks: the hour. */
  day?: number;
  hour?: number;
  h?: Record<string, HourSlot>;
  /** Directories: consumption requests and tokens per second of the day, for the last minutes only. */
  r?: Record<string, { c?: number; k?: number }>;
  /** Blocks: `x<position>` -> an entry; seconds: `c<s>`, `k<s>`. */
  /** Meta: the first day logged, the cleanup cut, the migration of the logs of one collection. */
  first?: number;
  cut?: number;
  /** Meta: the cut up to which the logs of its day were deleted. */
  purged?: number;
  migrated?: boolean;
  migratedUpTo?: number;
  /** Meta (the plain store): older versions' pending logs are all folded into their buckets. */
  pendingFolded?: boolean;
  /** Meta: days whose read model is being rebuilt (a class of their logs dropped). */
  rebuild?: Record<string, boolean>;
  /** Meta: days whose day cubes were computed for every scope (older versions: no hour cubes). */
  cubed?: Record<string, boolean>;
  /** Meta: days whose day and hour cubes were computed for every scope (log-index-cubing.ts). */
  hcubed?: Record<string, boolean>;
  /** Watermarks: the last offset indexed. */
  o?: number;
  /** Names (`n|<username>`): the user ids logged under it; users (`i|<id>`): their usernames. */
  ids?: number[];
  names?: string[];
}

/** An hour of a scope with logs in a range: its counts, and whether all of them lie in the range. */
export interface Hour {
  hour: number;
  whole: boolean;
  slot: HourSlot;
}

/** What a page lists: the log's `_id` (event id), time and type (which give its partition). */
export interface LogRef {
  eventId: string;
  createdAt: number;
  type: number;
}

/** An entry as read: with its hour and position (the order of a scope's list). */
export interface Found {
  e: Entry;
  hour: number;
  pos: number;
}

export const byNewest = (a: Found, b: Found) => b.hour - a.hour || b.pos - a.pos || b.e[E.id] - a.e[E.id];
export const refOf = (x: Found): LogRef => ({
  eventId: x.e[E.eventId],
  createdAt: x.e[E.createdAt],
  type: x.e[E.type],
});
export const inRange = (f: Found, lo: number, hi: number) => f.e[E.createdAt] >= lo && f.e[E.createdAt] <= hi;
/** The block numbers of an hour of n logs. */
export const blocksOf = (n: number) => Array.from({ length: Math.ceil(n / BLOCK) }, (_, k) => k);

/** An entry indexed twice (a crash between the blocks and the watermark) is listed once. */
export function dedupe(list: Found[]): Found[] {
  const seen = new Set<string>();
  return list.filter((x) => !seen.has(x.e[E.eventId]) && seen.add(x.e[E.eventId]) !== undefined);
}

/** A block's entries with their hour and position. */
export function entriesOf(d: IndexDoc): Found[] {
  const out: Found[] = [];
  const hour = d.hour ?? 0;
  for (const [key, v] of Object.entries(d)) {
    if (key[0] !== 'x') continue;
    const e = parseEntry(v);
    if (e) out.push({ e, hour, pos: Number(key.slice(1)) });
  }
  return out;
}

/** Cubes by `_id` from their days' collections: read, replaced (a query's) and inserted (the job's). */
function cubeStore(dayColl: (day: number) => Collection<IndexDoc>, byIds: (ids: string[]) => Promise<IndexDoc[]>) {
  /** Cubes by `_id` (domain/log-cubes.ts), from their days' collections. */
  async function cubes(ids: string[]): Promise<Map<string, CubeDoc>> {
    if (ids.length === 0) return new Map();
    return new Map((await byIds(ids)).map((d) => [d._id, d as unknown as CubeDoc]));
  }

  /** Stores cubes (whole documents: each replaces what an earlier walk stored). */
  async function saveCubes(docs: (CubeDoc | SegmentDoc)[]): Promise<void> {
    const perDay = new Map<number, (CubeDoc | SegmentDoc)[]>();
    for (const d of docs) {
      const day = dayOfDoc(d._id);
      const l = perDay.get(day);
      if (l) l.push(d);
      else perDay.set(day, [d]);
    }
    await Promise.all(
      [...perDay].map(([day, list]) =>
        dayColl(day).bulkWrite(
          list.map((d) => ({
            replaceOne: { filter: { _id: d._id }, replacement: d as unknown as IndexDoc, upsert: true },
          })),
          { ordered: false },
        ),
      ),
    );
  }

  /**
   * Stores cubes computed in the background: inserted (one command per day and 500 cubes, under
   * 0.1 ms each), and those stored before (by a query's walk) replaced.
   */
  async function insertCubes(docs: (CubeDoc | SegmentDoc)[]): Promise<void> {
    for (let i = 0; i < docs.length; i += 500) {
      const chunk = docs.slice(i, i + 500);
      const perDay = new Map<number, (CubeDoc | SegmentDoc)[]>();
      for (const d of chunk) {
        const l = perDay.get(dayOfDoc(d._id));
        if (l) l.push(d);
        else perDay.set(dayOfDoc(d._id), [d]);
      }
      for (const [day, list] of perDay) {
        try {
          await dayColl(day).insertMany(list as unknown as IndexDoc[], { ordered: false });
        } catch (err) {
          const refused = duplicateIndexes(err);
          if (!refused) throw err;
          // Replaced 50 at a time: a replace is an update statement (about 3 ms), and the
          // consumer's writes wait for the whole command.
          const stored = refused.map((j) => list[j]).filter((d) => d !== undefined);
          for (let j = 0; j < stored.length; j += 50) await saveCubes(stored.slice(j, j + 50));
        }
      }
    }
  }

  return { cubes, saveCubes, insertCubes };
}

/**
 * The read model's collections and its reads by `_id`. `segment`: positions per segment of an
 * hour (domain/log-segments.ts; tests make it small).
 */
export function logIndexStore(conn: Connection, segment = SEGMENT) {
  const main: Collection<IndexDoc> = conn.collection<IndexDoc>('log_index');
  const days = new Map<number, Collection<IndexDoc>>();
  const dayColl = (day: number) => {
    let c = days.get(day);
    if (!c) {
      c = conn.collection<IndexDoc>(indexCollection(day));
      if (days.size > 2_000) days.clear();
      days.set(day, c);
    }
    return c;
  };

  /** Documents by `_id`, each read from its day's collection (one `$in` per day). */
  async function byIds(ids: string[]): Promise<IndexDoc[]> {
    const perDay = new Map<number, string[]>();
    for (const id of ids) {
      const d = dayOfDoc(id);
      const l = perDay.get(d);
      if (l) l.push(id);
      else perDay.set(d, [id]);
    }
    const reads: Promise<IndexDoc[]>[] = [];
    for (const [day, list] of perDay) {
      for (let i = 0; i < list.length; i += IN_CHUNK) {
        reads.push(
          dayColl(day)
            .find({ _id: { $in: list.slice(i, i + IN_CHUNK) } })
            .toArray(),
        );
      }
    }
    return (await Promise.all(reads)).flat();
  }

  /** The entries of some blocks of one scope's hour of `n` logs, newest first. */
  async function blockEntries(scope: string, hour: number, ks: number[], n: number): Promise<Found[]> {
    const docs = await byIds(ks.flatMap((k) => blockDocIds(scope, hour, k, n)));
    return docs.flatMap(entriesOf).sort(byNewest);
  }

  /**
   * A scope's hours with logs in a range (newest first, from its directories) and, when asked, in
   * the same commands (one per day) the cubes that may count them: each day's, and the hours' of
   * the days the range cuts (`null`: asked, not stored).
   */
  async function scopeRange(scope: string, lo: number, hi: number, withCubes: boolean) {
    const ids: string[] = [];
    for (const day of daysOf(lo, hi)) {
      ids.push(dirId(scope, day));
      if (!withCubes) continue;
      ids.push(dayCubeId(scope, day));
      if (day * DAY >= lo && day * DAY + DAY - 1 <= hi) continue;
      for (let h = Math.max(day * 24, hourOf(lo)); h <= Math.min(day * 24 + 23, hourOf(hi)); h++) {
        ids.push(hourCubeId(scope, h));
      }
    }
    const dirs = new Map<number, IndexDoc>();
    const cubes = new Map<string, CubeDoc | null>(withCubes ? ids.map((id) => [id, null]) : []);
    for (const d of await byIds(ids)) {
      if (d._id.endsWith('|q')) cubes.set(d._id, d as unknown as CubeDoc);
      else dirs.set(d.day ?? -1, d);
    }
    const hours: Hour[] = [];
    for (const { hour } of hoursOf(lo, hi)) {
      const slot = slotOf(dirs.get(dayOf(hour * 3600)), hour);
      if (slot && slot.n > 0) hours.push({ hour, slot, whole: wholeIn(hour, slot, lo, hi) });
    }
    return { hours, cubes };
  }

  /** Directories of a scope over a range: hour -> slot, newest hour first, empty hours left out. */
  async function hoursIn(scope: string, lo: number, hi: number): Promise<Hour[]> {
    return (await scopeRange(scope, lo, hi, false)).hours;
  }

  const meta = async () => (await main.findOne({ _id: 'meta' })) ?? ({ _id: 'meta' } as IndexDoc);

  return { main, dayColl, byIds, blockEntries, hoursIn, scopeRange, ...cubeStore(dayColl, byIds), meta, segment };
}

export type LogIndexStore = ReturnType<typeof logIndexStore>;
