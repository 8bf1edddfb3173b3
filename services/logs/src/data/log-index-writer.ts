/**
 * Adding a batch's logs to the lists (domain/log-index.ts): per scope and day one directory update
 * (the hour counts, returned after the $inc, give the new entries' positions), then one bulk write
 * per day for the blocks; the usernames and user ids not recorded yet; the first day logged.
 */

import type { mongo } from 'mongoose';
import {
  BLOCK,
  blockId,
  dayOf,
  dirId,
  groupsOf,
  hourBounds,
  hourIncrement,
  type Indexable,
  posKey,
  recentIncrement,
  slotOf,
  storedEntry,
} from '../domain/log-index.ts';
import { IN_CHUNK, type IndexDoc, type LogIndexStore } from './log-index-store.ts';

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
    $inc: inc,
    $min: min,
    $max: max,
    $setOnInsert: { day },
    ...(Object.keys(unset).length ? { $unset: unset } : {}),
  } as mongo.UpdateFilter<IndexDoc>;
}

/** The block writes of one scope's hour: its new entries at the positions below the hour's count `end`. */
function blockWrites(scope: string, hour: number, list: Indexable[], end: number): Op[] {
  const perBlock = new Map<number, Record<string, string>>();
  list.forEach((l, i) => {
    const pos = end - list.length + i;
    const k = Math.floor(pos / BLOCK);
    const set = perBlock.get(k) ?? {};
    set[posKey(pos)] = storedEntry(l);
    perBlock.set(k, set);
  });
  return [...perBlock].map(([k, set]) => ({
    updateOne: {
      filter: { _id: blockId(scope, hour, k) },
      update: { $set: set, $setOnInsert: { hour } } as mongo.UpdateFilter<IndexDoc>,
      upsert: true,
    },
  }));
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

  /** Updates a directory and returns its blocks' writes (positions from its answer). */
  async function writeDirectory(scope: string, day: number, hourLists: [number, Indexable[]][], since: number) {
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
    return hourLists.flatMap(([hour, list]) =>
      blockWrites(scope, hour, list, slotOf(after ?? undefined, hour)?.n ?? list.length),
    );
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
      const dirWrites: Promise<[number, Op[]]>[] = [];
      for (const [scope, hours] of groupsOf(logs)) {
        for (const [day, hourLists] of perDayOf(hours)) {
          dirWrites.push(writeDirectory(scope, day, hourLists, since).then((ops): [number, Op[]] => [day, ops]));
        }
      }
      const names = await nameWrites(logs);
      const firstWrite = recordFirst(logs);
      // Block updates need no answer: one bulk write per day (not hundreds of commands).
      const bulk = new Map<number, Op[]>();
      for (const [day, ops] of await Promise.all(dirWrites)) {
        const l = bulk.get(day);
        if (l) l.push(...ops);
        else bulk.set(day, ops);
      }
      await Promise.all([
        ...[...bulk].map(([day, ops]) => store.dayColl(day).bulkWrite(ops, { ordered: false })),
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
