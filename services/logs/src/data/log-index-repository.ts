/**
 * The log list's read model (see domain/log-index.ts): every read and write here is by `_id`
 * (one value or an `$in` list), the only filter FerretDB on SQLite answers from an index, and the
 * index MongoDB keeps on every collection. A day's directories, blocks and seconds live in the
 * day's collection (`log_index_<yyyymmdd>`); the meta document and the partitions' watermarks in
 * `log_index`.
 *
 * Written by the consumer after a batch's logs are stored, per scope and day one directory update
 * (the hour counts, returned after the $inc, give the new entries' positions), then one bulk write
 * per day for the blocks and seconds. A redelivered batch (same partition and offsets) is indexed
 * again only above the partition's watermark (`w|<topic>|p<n>`, raised after the blocks are
 * written): a crash in between may leave an entry twice (pages drop the copy; the count keeps it)
 * or a position empty (the page is one shorter).
 */

import { LogType } from '@aigw/proto/common/v1/common';
import type { Collection, Connection, mongo } from 'mongoose';
import {
  BLOCK,
  blockId,
  countable,
  countOf,
  dayOf,
  dayOfDoc,
  daysOf,
  dirId,
  E,
  type Entry,
  type EntryFilter,
  groupsOf,
  type HourSlot,
  hourBounds,
  hourIncrement,
  hoursOf,
  type Indexable,
  matches,
  parseEntry,
  posKey,
  recentIncrement,
  SLICE,
  scopeAll,
  scopeChannel,
  scopeGroup,
  scopeModel,
  scopeToken,
  scopeType,
  scopeUser,
  scopeUserType,
  secondsId,
  sliceOf,
  slotOf,
  storedEntry,
  wholeIn,
} from '../domain/log-index.ts';
import { indexCollection } from '../domain/log-partitions.ts';

const DAY = 86_400;
/** `$in` lists FerretDB pushes down hold up to 10,000 ids (deploy/local/infra/ferretdb). */
const IN_CHUNK = 5_000;

interface IndexDoc {
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
  /** Meta: days whose read model is being rebuilt (a class of their logs dropped). */
  rebuild?: Record<string, boolean>;
  /** Watermarks: the last offset indexed. */
  o?: number;
  /** Names (`n|<username>`): the user ids logged under it; users (`i|<id>`): their usernames. */
  ids?: number[];
  names?: string[];
}

/** An hour of a scope with logs in a range: its counts, and whether all of them lie in the range. */
interface Hour {
  hour: number;
  whole: boolean;
  slot: HourSlot;
}

export interface IndexQuery extends EntryFilter {
  user_id?: number;
  start?: number;
  end?: number;
}

/** What a page lists: the log's `_id` (event id), time and type (which give its partition). */
export interface LogRef {
  eventId: string;
  createdAt: number;
  type: number;
}

/** The scope a query reads and the filters left to apply to its entries. */
interface Plan {
  scope: string;
  f: EntryFilter;
}

/** An entry as read: with its hour and position (the order of a scope's list). */
interface Found {
  e: Entry;
  hour: number;
  pos: number;
}

const byNewest = (a: Found, b: Found) => b.hour - a.hour || b.pos - a.pos || b.e[E.id] - a.e[E.id];
const refOf = (x: Found): LogRef => ({ eventId: x.e[E.eventId], createdAt: x.e[E.createdAt], type: x.e[E.type] });

/**
 * `clock`: the time (seconds) the consumer's writes compare with. Seconds documents are written
 * only for logs at most two minutes older than that: rpm and tpm count from `now - 60`, and a log
 * older than that when it is stored can never be counted (a backlog writes none).
 */
export function logIndexRepository(conn: Connection, clock: () => number = () => Date.now() / 1000) {
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
  let knownFirst = Number.POSITIVE_INFINITY;
  /** `<username>|<user id>` pairs recorded in the names documents. */
  const knownNames = new Set<string>();
  /** Per directory: the seconds of the day its last answer held (`r.<second>`), to drop when old. */
  const recentKeys = new Map<string, number[]>();

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

  const meta = async () => (await main.findOne({ _id: 'meta' })) ?? ({ _id: 'meta' } as IndexDoc);

  const entriesOf = (d: IndexDoc): Found[] => {
    const out: Found[] = [];
    const hour = d.hour ?? 0;
    for (const [key, v] of Object.entries(d)) {
      if (key[0] !== 'x') continue;
      const e = parseEntry(v);
      if (e) out.push({ e, hour, pos: Number(key.slice(1)) });
    }
    return out;
  };

  /** The entries of some blocks of one scope's hour, newest first. */
  async function blockEntries(scope: string, hour: number, ks: number[]): Promise<Found[]> {
    const docs = await byIds(ks.map((k) => blockId(scope, hour, k)));
    return docs.flatMap(entriesOf).sort(byNewest);
  }

  const blocksOf = (n: number) => Array.from({ length: Math.ceil(n / BLOCK) }, (_, k) => k);

  /** Directories of a scope over a range: hour -> slot, newest hour first, empty hours left out. */
  async function hoursIn(scope: string, lo: number, hi: number) {
    const dirs = new Map<number, IndexDoc>();
    for (const d of await byIds(daysOf(lo, hi).map((day) => dirId(scope, day)))) dirs.set(d.day ?? -1, d);
    const out: Hour[] = [];
    for (const { hour } of hoursOf(lo, hi)) {
      const slot = slotOf(dirs.get(dayOf(hour * 3600)), hour);
      if (slot && slot.n > 0) out.push({ hour, slot, whole: wholeIn(hour, slot, lo, hi) });
    }
    return out;
  }

  /**
   * The scope a query reads and the filters left for its entries: of the scopes its filters name
   * (a user's, a username's, a model's, ..., a rare type's), the one with the fewest logs in the
   * range; everyone's when it names none.
   */
  async function planOf(q: IndexQuery, lo: number, hi: number): Promise<Plan> {
    const all: EntryFilter = {
      type: q.type,
      user_id: q.user_id,
      username: q.username,
      token_name: q.token_name,
      model_name: q.model_name,
      channel: q.channel,
      group: q.group,
    };
    const without = (...keys: (keyof EntryFilter)[]) => {
      const f = { ...all };
      for (const k of keys) delete f[k];
      return f;
    };
    const candidates: Plan[] = [];
    const rare = q.type && q.type !== LogType.CONSUME ? q.type : 0;
    if (q.user_id && rare) candidates.push({ scope: scopeUserType(q.user_id, rare), f: without('user_id', 'type') });
    else if (rare) candidates.push({ scope: scopeType(rare), f: without('type') });
    if (q.user_id) candidates.push({ scope: scopeUser(q.user_id), f: without('user_id') });
    if (q.username) {
      // A username is its user's list; the filter is left to the entries only when the user logged
      // under other names too (a rename). A name several users had walks everyone's logs.
      const ids = (await main.findOne({ _id: `n|${q.username}` }))?.ids ?? [];
      const [id] = ids;
      if (id === undefined || (q.user_id && !ids.includes(q.user_id))) return { scope: scopeUser(0), f: all };
      if (ids.length === 1) {
        const names = (await main.findOne({ _id: `i|${id}` }))?.names ?? [];
        const only = names.length === 1 && names[0] === q.username;
        candidates.push({ scope: scopeUser(id), f: only ? without('username', 'user_id') : without('user_id') });
        if (rare) {
          const f = only ? without('username', 'user_id', 'type') : without('user_id', 'type');
          candidates.push({ scope: scopeUserType(id, rare), f });
        }
      }
    }
    if (q.model_name) candidates.push({ scope: scopeModel(q.model_name), f: without('model_name') });
    if (q.channel) candidates.push({ scope: scopeChannel(q.channel), f: without('channel') });
    if (q.group) candidates.push({ scope: scopeGroup(q.group), f: without('group') });
    if (q.token_name) candidates.push({ scope: scopeToken(q.token_name), f: without('token_name') });
    if (candidates.length === 0) return { scope: scopeAll, f: all };
    if (candidates.length === 1) return candidates[0] as Plan;
    // A countable plan reads its directories and the page's blocks only, whatever its size: the
    // smallest of those; else the smallest scope to walk (one directory read per candidate and day).
    const sizes = await Promise.all(
      candidates.map(async (p) => (await hoursIn(p.scope, lo, hi)).reduce((s, h) => s + h.slot.n, 0)),
    );
    const rank = (i: number) => (countable((candidates[i] as Plan).f) ? 0 : 1);
    let best = 0;
    for (let i = 1; i < candidates.length; i++) {
      const better = rank(i) - rank(best) || (sizes[i] as number) - (sizes[best] as number);
      if (better < 0) best = i;
    }
    return candidates[best] as Plan;
  }

  /** The range a query covers after cleanup, or null when nothing is logged in it. */
  async function rangeOf(q: IndexQuery, now: number): Promise<[number, number] | null> {
    const m = await meta();
    if (m.first === undefined) return null;
    const lo = Math.max(q.start ?? 0, m.cut ?? 0, m.first * DAY);
    // Nothing is logged after now (a day of slack for clocks): a far end_timestamp must not make
    // the walk step through millions of empty hours (the fuzzing test ran the process out of heap).
    const hi = Math.min(q.end || now + DAY, now + DAY);
    return lo > hi ? null : [lo, hi];
  }

  const inRange = (f: Found, lo: number, hi: number) => f.e[E.createdAt] >= lo && f.e[E.createdAt] <= hi;

  /** Every matching entry of the range, newest first (filters the counts cannot answer). */
  async function walk(scope: string, f: EntryFilter, lo: number, hi: number, known?: Hour[]): Promise<Found[]> {
    const hours = known ?? (await hoursIn(scope, lo, hi));
    const ids = hours.flatMap(({ hour, slot }) => blocksOf(slot.n).map((k) => blockId(scope, hour, k)));
    const all: Found[] = [];
    for (const d of await byIds(ids)) {
      for (const found of entriesOf(d)) if (inRange(found, lo, hi) && matches(found.e, f)) all.push(found);
    }
    return dedupe(all.sort(byNewest));
  }

  /**
   * Consumption requests and tokens of a scope from `since` to `until`: the directories' recent
   * seconds, and the seconds documents older versions wrote (read in the same `$in`).
   */
  async function bySeconds(scope: string, since: number, until: number): Promise<{ rpm: number; tpm: number }> {
    const ids: string[] = daysOf(since, until).map((day) => dirId(scope, day));
    for (let m = sliceOf(since); m <= sliceOf(until); m++) ids.push(secondsId(scope, m));
    let rpm = 0;
    let tpm = 0;
    for (const d of await byIds(ids)) {
      if (d.day !== undefined) {
        for (const [sod, v] of Object.entries(d.r ?? {})) {
          const at = (d.day ?? 0) * DAY + Number(sod);
          if (at < since || at > until) continue;
          rpm += v.c ?? 0;
          tpm += v.k ?? 0;
        }
        continue;
      }
      if (!d._id.includes('|s')) continue;
      const slice = Number(d._id.slice(d._id.lastIndexOf('|s') + 2));
      for (const [key, v] of Object.entries(d)) {
        if ((key[0] !== 'c' && key[0] !== 'k') || typeof v !== 'number') continue;
        const at = slice * SLICE + Number(key.slice(1));
        if (at < since || at > until) continue;
        if (key[0] === 'c') rpm += v;
        else tpm += v;
      }
    }
    return { rpm, tpm };
  }

  /**
   * Consumption requests and tokens of a scope from `since` to `until`: the seconds documents of
   * the hours the range cuts, the directories' hour sums for the whole hours between.
   */
  async function recent(scope: string, since: number, until: number): Promise<{ rpm: number; tpm: number }> {
    const parts: Promise<{ rpm: number; tpm: number }>[] = [];
    const firstWhole = Math.ceil(since / 3600);
    const lastWhole = Math.floor((until + 1) / 3600) - 1;
    if (firstWhole > lastWhole) return bySeconds(scope, since, until);
    if (since < firstWhole * 3600) parts.push(bySeconds(scope, since, firstWhole * 3600 - 1));
    if (until >= (lastWhole + 1) * 3600) parts.push(bySeconds(scope, (lastWhole + 1) * 3600, until));
    parts.push(
      hoursIn(scope, firstWhole * 3600, (lastWhole + 1) * 3600 - 1).then((hours) => ({
        rpm: hours.reduce((s, h) => s + (h.slot[`t${LogType.CONSUME}`] ?? 0), 0),
        tpm: hours.reduce((s, h) => s + (h.slot.k ?? 0), 0),
      })),
    );
    const all = await Promise.all(parts);
    return { rpm: all.reduce((s, x) => s + x.rpm, 0), tpm: all.reduce((s, x) => s + x.tpm, 0) };
  }

  return {
    /** Adds stored logs to the lists (in id order within a batch). */
    async add(logs: Indexable[]): Promise<void> {
      if (logs.length === 0) return;
      const groups = groupsOf(logs);
      const since = clock() - 120;
      const dirWrites: Promise<void>[] = [];
      // Block and seconds updates need no answer: one bulk write per day (not hundreds of commands).
      const bulk = new Map<number, mongo.AnyBulkWriteOperation<IndexDoc>[]>();
      const push = (day: number, op: mongo.AnyBulkWriteOperation<IndexDoc>) => {
        const l = bulk.get(day);
        if (l) l.push(op);
        else bulk.set(day, [op]);
      };
      for (const [scope, hours] of groups) {
        const perDay = new Map<number, [number, Indexable[]][]>();
        for (const [hour, list] of hours) {
          const day = dayOf(hour * 3600);
          const l = perDay.get(day);
          if (l) l.push([hour, list]);
          else perDay.set(day, [[hour, list]]);
        }
        for (const [day, hourLists] of perDay) {
          dirWrites.push(
            (async () => {
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
              const id = dirId(scope, day);
              // The seconds older than rpm/tpm can count (seen in this directory's last answer) go.
              const unset: Record<string, ''> = {};
              for (const sod of recentKeys.get(id) ?? []) if (day * DAY + sod < since - 60) unset[`r.${sod}`] = '';
              const after = await dayColl(day).findOneAndUpdate(
                { _id: id },
                {
                  $inc: inc,
                  $min: min,
                  $max: max,
                  $setOnInsert: { day },
                  ...(Object.keys(unset).length ? { $unset: unset } : {}),
                } as mongo.UpdateFilter<IndexDoc>,
                { upsert: true, returnDocument: 'after' },
              );
              if (recentKeys.size > 100_000) recentKeys.clear();
              const keys = Object.keys(after?.r ?? {}).map(Number);
              if (keys.length) recentKeys.set(id, keys);
              else recentKeys.delete(id);
              for (const [hour, list] of hourLists) {
                const end = slotOf(after ?? undefined, hour)?.n ?? list.length;
                const perBlock = new Map<number, Record<string, string>>();
                list.forEach((l, i) => {
                  const pos = end - list.length + i;
                  const k = Math.floor(pos / BLOCK);
                  const set = perBlock.get(k) ?? {};
                  set[posKey(pos)] = storedEntry(l);
                  perBlock.set(k, set);
                });
                for (const [k, set] of perBlock) {
                  push(day, {
                    updateOne: {
                      filter: { _id: blockId(scope, hour, k) },
                      update: { $set: set, $setOnInsert: { hour } } as mongo.UpdateFilter<IndexDoc>,
                      upsert: true,
                    },
                  });
                }
              }
            })(),
          );
        }
      }
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
          for (const d of await main.find({ _id: { $in: ids.slice(i, i + IN_CHUNK) } }).toArray()) found.set(d._id, d);
        }
        for (const [key, [name, id]] of names) {
          if (found.get(`n|${name}`)?.ids?.includes(id) && found.get(`i|${id}`)?.names?.includes(name)) {
            names.delete(key);
            knownNames.add(key);
          }
        }
      }
      const nameWrites = [...names.values()].flatMap(([name, id]): mongo.AnyBulkWriteOperation<IndexDoc>[] => [
        { updateOne: { filter: { _id: `n|${name}` }, update: { $addToSet: { ids: id } }, upsert: true } },
        { updateOne: { filter: { _id: `i|${id}` }, update: { $addToSet: { names: name } }, upsert: true } },
      ]);
      const first = Math.min(...logs.map((l) => dayOf(l.created_at)));
      const firstWrite =
        first < knownFirst
          ? main
              .findOneAndUpdate({ _id: 'meta' }, { $min: { first } }, { upsert: true, returnDocument: 'after' })
              .then((m) => {
                knownFirst = m?.first ?? first;
              })
          : Promise.resolve();
      await Promise.all(dirWrites);
      await Promise.all([
        ...[...bulk].map(([day, ops]) => dayColl(day).bulkWrite(ops, { ordered: false })),
        nameWrites.length ? main.bulkWrite(nameWrites, { ordered: false }) : undefined,
      ]);
      for (const key of names.keys()) knownNames.add(key);
      await firstWrite;
    },

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
      await dayColl(day)
        .drop()
        .catch((err: { codeName?: string }) => {
          if (err.codeName !== 'NamespaceNotFound') throw err;
        });
    },
    /** Queries start no earlier than `day` (nothing older is kept any more). */
    async raiseFirst(day: number): Promise<void> {
      await main.updateOne({ _id: 'meta', first: { $lt: day } }, { $set: { first: day } });
      knownFirst = Number.POSITIVE_INFINITY;
    },

    /**
     * One page, newest first, and the number of matches: the logs to read, in order. With
     * countable filters only the directories and the page's blocks are read.
     */
    async page(q: IndexQuery, page: number, size: number, now = Math.floor(Date.now() / 1000)) {
      const none = { refs: [] as LogRef[], total: 0 };
      const range = await rangeOf(q, now);
      if (!range) return none;
      const [lo, hi] = range;
      const { scope, f } = await planOf(q, lo, hi);
      const skip = (page - 1) * size;
      const hours = await hoursIn(scope, lo, hi);
      if (!countable(f)) {
        const all = await walk(scope, f, lo, hi, hours);
        return { refs: all.slice(skip, skip + size).map(refOf), total: all.length };
      }
      // Hours cut by the range: their entries, exactly.
      const cut = new Map<number, Found[]>();
      await Promise.all(
        hours
          .filter((h) => !h.whole)
          .map(async (h) => {
            const list = await blockEntries(scope, h.hour, blocksOf(h.slot.n));
            cut.set(h.hour, dedupe(list.filter((x) => inRange(x, lo, hi) && matches(x.e, f))));
          }),
      );
      const countIn = (h: (typeof hours)[number]) => (h.whole ? countOf(h.slot, f) : (cut.get(h.hour)?.length ?? 0));
      const total = hours.reduce((s, h) => s + countIn(h), 0);
      const out: Found[] = [];
      let left = skip;
      for (const h of hours) {
        if (out.length >= size) break;
        const n = countIn(h);
        if (left >= n) {
          left -= n;
          continue;
        }
        const listed = cut.get(h.hour);
        if (listed) {
          out.push(...listed.slice(left, left + size - out.length));
        } else if (!f.type) {
          // Positions n-1 .. 0: the page's positions are known, read their blocks only.
          const top = h.slot.n - 1 - left;
          const bottom = Math.max(0, top - (size - out.length) + 1);
          const ks = [];
          for (let k = Math.floor(bottom / BLOCK); k <= Math.floor(top / BLOCK); k++) ks.push(k);
          const list = await blockEntries(scope, h.hour, ks);
          out.push(...dedupe(list.filter((x) => x.pos <= top && x.pos >= bottom)));
        } else {
          // A type mixed with others in this scope (consumption in everyone's): blocks from the
          // newest down until the page is full, as many at once as the type's share suggests.
          const share = Math.max(countOf(h.slot, f) / h.slot.n, 0.01);
          const step = Math.max(1, Math.ceil((left + size - out.length) / share / BLOCK));
          let seen = 0;
          for (let k = Math.floor((h.slot.n - 1) / BLOCK); k >= 0 && out.length < size; k -= step) {
            const ks = [];
            for (let j = k; j > k - step && j >= 0; j--) ks.push(j);
            for (const x of dedupe(await blockEntries(scope, h.hour, ks))) {
              if (!matches(x.e, f)) continue;
              if (seen++ < left) continue;
              if (out.length < size) out.push(x);
            }
          }
        }
        left = 0;
      }
      return { refs: out.map(refOf), total };
    },

    /**
     * Consumption quota over the query's range (the directories' hour sums), requests and tokens
     * from `now - 60` (the seconds documents and hour sums), for countable filters; others walk
     * their scope.
     */
    async stat(q: IndexQuery, now = Math.floor(Date.now() / 1000)) {
      const zero = { quota: 0, rpm: 0, tpm: 0 };
      const range = await rangeOf(q, now);
      const consume = { ...q, type: LogType.CONSUME };
      const { scope, f } = await planOf(consume, range?.[0] ?? now - 60, range?.[1] ?? now);
      let quota = 0;
      if (range) {
        const [lo, hi] = range;
        const hours = await hoursIn(scope, lo, hi);
        if (!countable(f)) {
          for (const x of await walk(scope, f, lo, hi, hours)) quota += x.e[E.quota];
        } else {
          for (const h of hours) {
            if (h.whole) quota += h.slot.q ?? 0;
            else {
              const list = await blockEntries(scope, h.hour, blocksOf(h.slot.n));
              for (const x of dedupe(list)) if (inRange(x, lo, hi) && matches(x.e, f)) quota += x.e[E.quota];
            }
          }
        }
      }
      const last = await rangeOf({ start: now - 60 }, now);
      if (!last) return { ...zero, quota };
      if (countable(f)) return { quota, ...(await recent(scope, last[0], last[1])) };
      let rpm = 0;
      let tpm = 0;
      for (const x of await walk(scope, f, last[0], last[1])) {
        rpm++;
        tpm += x.e[E.tokens];
      }
      return { quota, rpm, tpm };
    },

    /** The number of listed logs from the current cut up to `ts` (what a cleanup to `ts` removes). */
    async countBefore(ts: number, now = Math.floor(Date.now() / 1000)): Promise<number> {
      const range = await rangeOf({}, now);
      if (!range || ts - 1 < range[0]) return 0;
      const [lo] = range;
      const hi = Math.min(ts - 1, range[1]);
      let n = 0;
      for (const h of await hoursIn(scopeAll, lo, hi)) {
        if (h.whole) n += h.slot.n;
        else {
          const list = await blockEntries(scopeAll, h.hour, blocksOf(h.slot.n));
          n += dedupe(list).filter((x) => inRange(x, lo, hi)).length;
        }
      }
      return n;
    },

    /**
     * Everyone's entries from `from` to `ts` (exclusive), a few blocks at a time, oldest hour first:
     * the rows a cleanup deletes from a day it cuts.
     */
    async *refsBetween(from: number, ts: number): AsyncGenerator<LogRef[]> {
      if (ts <= from) return;
      const hours = (await hoursIn(scopeAll, from, ts - 1)).reverse();
      for (const h of hours) {
        const ks = blocksOf(h.slot.n);
        for (let i = 0; i < ks.length; i += 10) {
          const list = await blockEntries(scopeAll, h.hour, ks.slice(i, i + 10));
          const refs = list.filter((x) => inRange(x, from, ts - 1)).map(refOf);
          if (refs.length) yield refs;
        }
      }
    },

    /** Lists start at `ts` from now on (logs before it are gone for every query at once). */
    async cut(ts: number): Promise<void> {
      await main.updateOne({ _id: 'meta' }, { $max: { cut: ts } }, { upsert: true });
    },
  };
}

/** An entry indexed twice (a crash between the blocks and the watermark) is listed once. */
function dedupe(list: Found[]): Found[] {
  const seen = new Set<string>();
  return list.filter((x) => !seen.has(x.e[E.eventId]) && seen.add(x.e[E.eventId]) !== undefined);
}

export type LogIndexRepository = ReturnType<typeof logIndexRepository>;
