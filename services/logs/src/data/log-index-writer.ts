/**
 * Adding a batch's logs to the lists (domain/log-index.ts): per scope and day one directory update
 * (the hour counts, returned after the $inc, give the new entries' positions), then one insert per
 * day of the blocks' new parts; the usernames and user ids not recorded yet; the first day logged.
 */

import { duplicateIndexes } from '@aigw/common';
import type { mongo } from 'mongoose';
import {
  BLOCK,
  blockPartId,
  dayOf,
  dirId,
  groupsOf,
  hourBounds,
  hourIncrement,
  type Indexable,
  posKey,
  recentIncrement,
  scopeAll,
  slotOf,
  storedEntry,
} from '../domain/log-index.ts';
import { segmentMarkId, segmentsCompleted } from '../domain/log-segments.ts';
import { IN_CHUNK, type IndexDoc, type LogIndexStore } from './log-index-store.ts';
import { wideSums } from './wide-sums.ts';

const DAY = 86_400;
type Op = mongo.AnyBulkWriteOperation<IndexDoc>;

/** The directory update of one scope and day: hour counts, bounds and the recent seconds. */
function directoryUpdate(day: number, hourLists: [number, Indexable[]][], since: number, old: number[]) {
  const inc: Record<string, number> = {};
  const min: Record<string, number> = {};
  const max: Record<string, number> = {};
  for (const [hour, list] of hourLists) {
    Object.assign(inc, hourIncrement(hour, list));
    Object.assign(inc, recentIncrement(list.filter((l) => l.created_at >= since)));
    const b = hourBounds(hour, list);
    Object.assign(min, b.min);
    Object.assign(max, b.max);
  }
  // The seconds older than rpm/tpm can count (seen in this directory's last answer) go.
  const unset: Record<string, ''> = {};
  for (const sod of old) if (day * DAY + sod < since - 60) unset[`r.${sod}`] = '';
  return {
    $inc: wideSums(inc),
    $min: min,
    $max: max,
    $setOnInsert: { day },
    ...(Object.keys(unset).length ? { $unset: unset } : {}),
  } as mongo.UpdateFilter<IndexDoc>;
}

/** A block part to insert (see blockPartId): its entries at their positions. */
type BlockPart = { _id: string; hour: number } & Record<string, string | number>;

/**
 * The block parts of one scope's hour: its new entries at the positions below the hour's count
 * `end`, one part per block they fall in, keyed by its first position. `text`: each log's stored
 * entry, made once per log rather than once per scope.
 */
function blockParts(scope: string, hour: number, list: Indexable[], end: number, text: (l: Indexable) => string) {
  const parts = new Map<number, BlockPart>();
  list.forEach((l, i) => {
    const pos = end - list.length + i;
    const k = Math.floor(pos / BLOCK);
    let part = parts.get(k);
    if (!part) {
      part = { _id: blockPartId(scope, hour, k, pos), hour };
      parts.set(k, part);
    }
    part[posKey(pos)] = text(l);
  });
  return [...parts.values()];
}

/**
 * Inserts a day's block parts in one command. Positions come from the directories' counts, so no
 * two writes make the same part; a part refused as a duplicate (a retried insert that had reached
 * the server) gets its entries set instead.
 */
async function insertParts(store: LogIndexStore, day: number, parts: BlockPart[]): Promise<void> {
  const coll = store.dayColl(day);
  try {
    await coll.insertMany(parts as unknown as IndexDoc[], { ordered: false });
  } catch (err) {
    const refused = duplicateIndexes(err);
    if (!refused) throw err;
    const ops: Op[] = refused.flatMap((i) => {
      const part = parts[i];
      if (!part) return [];
      const { _id, hour, ...set } = part;
      const update = { $set: set, $setOnInsert: { hour } } as mongo.UpdateFilter<IndexDoc>;
      return [{ updateOne: { filter: { _id }, update, upsert: true } }];
    });
    if (ops.length) await coll.bulkWrite(ops, { ordered: false });
  }
}

/**
 * Records the scopes that completed a segment, per hour (one update per day and batch, only when
 * one did: every SEGMENT logs of a scope), for the cube job (log-segment-cubing.ts).
 */
async function markSegments(store: LogIndexStore, day: number, marks: Map<number, Set<string>>): Promise<void> {
  if (marks.size === 0) return;
  await store.dayColl(day).bulkWrite(
    [...marks].map(([hour, scopes]): Op => {
      const update = { $addToSet: { s: { $each: [...scopes] } }, $setOnInsert: { hour } };
      return { updateOne: { filter: { _id: segmentMarkId(hour) }, update: update as never, upsert: true } };
    }),
    { ordered: false },
  );
}

/** What a batch's directory writes answered: its block parts per day, and per day and hour the scopes that completed a segment. */
type Written = [day: number, parts: BlockPart[], scope: string, completed: number[]];

/** The parts to insert and the segment marks to record, per day. */
function perDayWrites(written: Written[]) {
  const parts = new Map<number, BlockPart[]>();
  const marks = new Map<number, Map<number, Set<string>>>();
  for (const [day, list, scope, completed] of written) {
    const l = parts.get(day);
    if (l) l.push(...list);
    else parts.set(day, list);
    for (const hour of completed) {
      const m = marks.get(day) ?? new Map<number, Set<string>>();
      m.set(hour, (m.get(hour) ?? new Set()).add(scope));
      marks.set(day, m);
    }
  }
  return { parts, marks };
}

/** A scope's hours of a batch, per UTC day. */
function perDayOf(hours: Map<number, Indexable[]>): Map<number, [number, Indexable[]][]> {
  const perDay = new Map<number, [number, Indexable[]][]>();
  for (const [hour, list] of hours) {
    const day = dayOf(hour * 3600);
    const l = perDay.get(day);
    if (l) l.push([hour, list]);
    else perDay.set(day, [[hour, list]]);
  }
  return perDay;
}

/**
 * `clock`: the time (seconds) the writes compare with. The recent seconds are written only for
 * logs at most two minutes older than that: rpm and tpm count from `now - 60`, and a log older
 * than that when it is stored can never be counted (a backlog writes none).
 */
export function logIndexWriter(store: LogIndexStore, clock: () => number) {
  let knownFirst = Number.POSITIVE_INFINITY;
  /** `<username>|<user id>` pairs recorded in the names documents. */
  const knownNames = new Set<string>();
  /** Per directory: the seconds of the day its last answer held (`r.<second>`), to drop when old. */
  const recentKeys = new Map<string, number[]>();

  /** Updates a directory and returns its blocks' parts (positions from its answer). */
  async function writeDirectory(
    scope: string,
    day: number,
    hourLists: [number, Indexable[]][],
    since: number,
    text: (l: Indexable) => string,
  ) {
    const id = dirId(scope, day);
    const after = await store
      .dayColl(day)
      .findOneAndUpdate({ _id: id }, directoryUpdate(day, hourLists, since, recentKeys.get(id) ?? []), {
        upsert: true,
        returnDocument: 'after',
      });
    if (recentKeys.size > 100_000) recentKeys.clear();
    const keys = Object.keys(after?.r ?? {}).map(Number);
    if (keys.length) recentKeys.set(id, keys);
    else recentKeys.delete(id);
    const parts: BlockPart[] = [];
    /** The hours in which this batch completed a segment of the scope's list (the cube job's work). */
    const completed: number[] = [];
    for (const [hour, list] of hourLists) {
      const end = slotOf(after ?? undefined, hour)?.n ?? list.length;
      parts.push(...blockParts(scope, hour, list, end, text));
      if (scope !== scopeAll && segmentsCompleted(end - list.length, end, store.segment).length) completed.push(hour);
    }
    return { parts, completed };
  }

  /** The names documents' writes for the batch's (username, user id) pairs not recorded yet. */
  async function nameWrites(logs: Indexable[]): Promise<{ ops: Op[]; keys: string[] }> {
    const names = new Map<string, [string, number]>();
    for (const l of logs) {
      const key = `${l.username}|${l.user_id}`;
      if (l.username && l.user_id && !knownNames.has(key)) names.set(key, [l.username, l.user_id]);
    }
    // Pairs recorded before (by another process, or before a restart) need no update: one read.
    if (names.size > 0) {
      const ids = [...names.values()].flatMap(([name, id]) => [`n|${name}`, `i|${id}`]);
      const found = new Map<string, IndexDoc>();
      for (let i = 0; i < ids.length; i += IN_CHUNK) {
        const docs = await store.main.find({ _id: { $in: ids.slice(i, i + IN_CHUNK) } }).toArray();
        for (const d of docs) found.set(d._id, d);
      }
      for (const [key, [name, id]] of names) {
        if (found.get(`n|${name}`)?.ids?.includes(id) && found.get(`i|${id}`)?.names?.includes(name)) {
          names.delete(key);
          knownNames.add(key);
        }
      }
    }
    const ops = [...names.values()].flatMap(([name, id]): Op[] => [
      { updateOne: { filter: { _id: `n|${name}` }, update: { $addToSet: { ids: id } }, upsert: true } },
      { updateOne: { filter: { _id: `i|${id}` }, update: { $addToSet: { names: name } }, upsert: true } },
    ]);
    return { ops, keys: [...names.keys()] };
  }

  /** Lowers the meta document's first day to the batch's oldest (once per older day seen). */
  async function recordFirst(logs: Indexable[]): Promise<void> {
    const first = Math.min(...logs.map((l) => dayOf(l.created_at)));
    if (first >= knownFirst) return;
    const m = await store.main.findOneAndUpdate(
      { _id: 'meta' },
      { $min: { first } },
      { upsert: true, returnDocument: 'after' },
    );
    knownFirst = m?.first ?? first;
  }

  return {
    /** Adds stored logs to the lists (in id order within a batch). */
    async add(logs: Indexable[]): Promise<void> {
      if (logs.length === 0) return;
      const since = clock() - 120;
      const texts = new Map<Indexable, string>();
      const text = (l: Indexable) => {
        let t = texts.get(l);
        if (t === undefined) {
          t = storedEntry(l);
          texts.set(l, t);
        }
        return t;
      };
      const dirWrites: Promise<Written>[] = [];
      for (const [scope, hours] of groupsOf(logs)) {
        for (const [day, hourLists] of perDayOf(hours)) {
          dirWrites.push(
            writeDirectory(scope, day, hourLists, since, text).then((w): Written => [day, w.parts, scope, w.completed]),
          );
        }
      }
      const names = await nameWrites(logs);
      const firstWrite = recordFirst(logs);
      // Blocks need no answer: one insert per day of the parts (not an update per scope and hour).
      const { parts: perDay, marks } = perDayWrites(await Promise.all(dirWrites));
      await Promise.all([
        ...[...perDay].map(([day, parts]) => insertParts(store, day, parts)),
        ...[...marks].map(([day, m]) => markSegments(store, day, m)),
        names.ops.length ? store.main.bulkWrite(names.ops, { ordered: false }) : undefined,
      ]);
      for (const key of names.keys) knownNames.add(key);
      await firstWrite;
    },

    /** Queries start no earlier than a day raised by retention: the first day is read again. */
    forgetFirst(): void {
      knownFirst = Number.POSITIVE_INFINITY;
    },
  };
}
