/**
 * The log list's read model (see domain/log-index.ts): every read and write here is by `_id`
 * (one value or an `$in` list), the only filter FerretDB on SQLite answers from an index.
 *
 * Written by the consumer after a batch's logs are stored, per scope and day one directory update
 * (the hour counts, returned after the $inc, give the new entries' positions) and per hour one
 * update per block. A redelivered batch (same partition and offsets) is indexed again only above
 * the partition's watermark (`w|<topic>|p<n>`, raised after the blocks are written): a crash in
 * between may leave an entry twice (pages drop the copy; the count keeps it) or a position
 * empty (the page is one shorter).
 */

import { LogType } from '@aigw/proto/common/v1/common';
import type { Collection, Connection, mongo } from 'mongoose';
import {
  BLOCK,
  blockId,
  countable,
  countOf,
  dayOf,
  daysOf,
  dirId,
  E,
  type Entry,
  type EntryFilter,
  entryOf,
  groupsOf,
  type HourSlot,
  hourIncrement,
  hourOf,
  hoursOf,
  type Indexable,
  matches,
  posKey,
  type ScopeSet,
  scopeAll,
  scopeChannel,
  scopeGroup,
  scopeModel,
  scopeToken,
  scopeUser,
  slotOf,
} from '../domain/log-index.ts';

const DAY = 86_400;
/** `$in` lists FerretDB pushes down hold up to 10,000 ids (deploy/local/infra/ferretdb). */
const IN_CHUNK = 5_000;

interface IndexDoc {
  _id: string;
  /** Directories: the UTC day; blocks: the hour (for cleanup). */
  day?: number;
  hour?: number;
  h?: Record<string, HourSlot>;
  /** Blocks: `x<position>` -> an entry. */
  /** Names: the user ids logged under a username. */
  ids?: number[];
  /** Meta: the first day logged, the cleanup cut, backfill progress (base scopes, dimensions). */
  first?: number;
  cut?: number;
  built?: boolean;
  backfilled?: number;
  dims?: boolean;
  dimsBackfilled?: number;
  /** Watermarks: the last offset indexed. */
  o?: number;
}

export interface IndexQuery extends EntryFilter {
  user_id?: number;
  start?: number;
  end?: number;
}

/** The scopes a query reads and the filters left to apply to their entries. */
interface Plan {
  scopes: string[];
  f: EntryFilter;
}

/** An entry as read: with its hour and position (the order of a scope's list). */
interface Found {
  e: Entry;
  hour: number;
  pos: number;
}

const byNewest = (a: Found, b: Found) => b.hour - a.hour || b.pos - a.pos || b.e[E.id] - a.e[E.id];

export function logIndexRepository(conn: Connection) {
  const ix: Collection<IndexDoc> = conn.collection<IndexDoc>('log_index');
  const knownNames = new Set<string>();
  let knownFirst = Number.POSITIVE_INFINITY;
  /** Whether the dimensions hold every listed log (checked until they do; then for good). */
  let dimsReady = false;

  async function byIds(ids: string[]): Promise<IndexDoc[]> {
    const out: IndexDoc[] = [];
    for (let i = 0; i < ids.length; i += IN_CHUNK) {
      out.push(...(await ix.find({ _id: { $in: ids.slice(i, i + IN_CHUNK) } }).toArray()));
    }
    return out;
  }

  const meta = async () => (await ix.findOne({ _id: 'meta' })) ?? ({ _id: 'meta' } as IndexDoc);

  /** The entries of some blocks of one scope's hour, newest first. */
  async function blockEntries(scope: string, hour: number, ks: number[]): Promise<Found[]> {
    const docs = await byIds(ks.map((k) => blockId(scope, hour, k)));
    const out: Found[] = [];
    for (const d of docs) {
      for (const [key, v] of Object.entries(d)) {
        if (key[0] === 'x' && Array.isArray(v)) out.push({ e: v as Entry, hour, pos: Number(key.slice(1)) });
      }
    }
    return out.sort(byNewest);
  }

  const blocksOf = (n: number) => Array.from({ length: Math.ceil(n / BLOCK) }, (_, k) => k);

  /** Directories of a scope over a range: hour -> slot, newest hour first, empty hours left out. */
  async function hoursIn(scope: string, lo: number, hi: number) {
    const dirs = new Map<number, IndexDoc>();
    for (const d of await byIds(daysOf(lo, hi).map((day) => dirId(scope, day)))) dirs.set(d.day ?? -1, d);
    return hoursOf(lo, hi)
      .map(({ hour, whole }) => ({ hour, whole, slot: slotOf(dirs.get(dayOf(hour * 3600)), hour) }))
      .filter((h): h is { hour: number; whole: boolean; slot: HourSlot } => (h.slot?.n ?? 0) > 0);
  }

  /**
   * The scopes a query reads and the filters left for their entries (no scopes: no user by that
   * name). Everyone's logs, one user's or a username's; once the dimensions are built, also the
   * model's, channel's, group's or token name's, whichever holds the fewest logs in the range.
   */
  async function planOf(q: IndexQuery, lo: number, hi: number): Promise<Plan> {
    const rest: EntryFilter = {
      type: q.type,
      username: q.username,
      token_name: q.token_name,
      model_name: q.model_name,
      channel: q.channel,
      group: q.group,
    };
    let base: Plan;
    if (q.user_id) base = { scopes: [scopeUser(q.user_id)], f: rest };
    else if (q.username) {
      const names = await ix.findOne({ _id: `n|${q.username}` });
      base = { scopes: (names?.ids ?? []).map(scopeUser), f: rest };
    } else base = { scopes: [scopeAll], f: rest };
    if (base.scopes.length === 0) return base;
    const dims: Plan[] = [];
    const all: EntryFilter = { ...rest, user_id: q.user_id };
    if (q.model_name) dims.push({ scopes: [scopeModel(q.model_name)], f: { ...all, model_name: undefined } });
    if (q.channel) dims.push({ scopes: [scopeChannel(q.channel)], f: { ...all, channel: undefined } });
    if (q.group) dims.push({ scopes: [scopeGroup(q.group)], f: { ...all, group: undefined } });
    if (q.token_name) dims.push({ scopes: [scopeToken(q.token_name)], f: { ...all, token_name: undefined } });
    if (dims.length === 0) return base;
    if (!dimsReady) dimsReady = (await meta()).dims === true;
    if (!dimsReady) return base;
    // Everyone's logs hold at least any dimension's; otherwise count (one directory read each).
    const candidates = base.scopes[0] === scopeAll ? dims : [base, ...dims];
    let best: Plan | undefined;
    let fewest = Number.POSITIVE_INFINITY;
    for (const plan of candidates) {
      let n = 0;
      for (const scope of plan.scopes) for (const h of await hoursIn(scope, lo, hi)) n += h.slot.n;
      if (n < fewest) {
        fewest = n;
        best = plan;
      }
    }
    return best ?? base;
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
  async function walk(scopes: string[], f: EntryFilter, lo: number, hi: number): Promise<Found[]> {
    const all: Found[] = [];
    for (const scope of scopes) {
      const hours = await hoursIn(scope, lo, hi);
      const ids = hours.flatMap(({ hour, slot }) => blocksOf(slot.n).map((k) => blockId(scope, hour, k)));
      for (const d of await byIds(ids)) {
        const hour = d.hour ?? 0;
        for (const [key, v] of Object.entries(d)) {
          if (key[0] !== 'x' || !Array.isArray(v)) continue;
          const found = { e: v as Entry, hour, pos: Number(key.slice(1)) };
          if (inRange(found, lo, hi) && matches(found.e, f)) all.push(found);
        }
      }
    }
    // Several scopes (a username logged under more than one user id): newest id first per hour.
    return scopes.length > 1
      ? all.sort((a, b) => b.hour - a.hour || b.e[E.id] - a.e[E.id])
      : dedupe(all.sort(byNewest));
  }

  return {
    /** Adds stored logs to the lists (in id order within a batch). */
    async add(logs: Indexable[], set: ScopeSet = 'all'): Promise<void> {
      if (logs.length === 0) return;
      const groups = groupsOf(logs, set);
      const writes: Promise<unknown>[] = [];
      const dirWrites: Promise<void>[] = [];
      // Block and name updates need no answer: one bulk write (one command, not hundreds).
      const bulk: mongo.AnyBulkWriteOperation<IndexDoc>[] = [];
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
              for (const [hour, list] of hourLists) Object.assign(inc, hourIncrement(hour, list));
              const after = await ix.findOneAndUpdate(
                { _id: dirId(scope, day) },
                { $inc: inc, $setOnInsert: { day } } as mongo.UpdateFilter<IndexDoc>,
                { upsert: true, returnDocument: 'after' },
              );
              for (const [hour, list] of hourLists) {
                const end = slotOf(after ?? undefined, hour)?.n ?? list.length;
                const perBlock = new Map<number, Record<string, Entry>>();
                list.forEach((l, i) => {
                  const pos = end - list.length + i;
                  const k = Math.floor(pos / BLOCK);
                  const set = perBlock.get(k) ?? {};
                  set[posKey(pos)] = entryOf(l);
                  perBlock.set(k, set);
                });
                for (const [k, set] of perBlock) {
                  bulk.push({
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
      const names = new Map<string, number>();
      for (const l of logs)
        if (set !== 'dims' && l.username && !knownNames.has(`${l.username}|${l.user_id}`))
          names.set(l.username, l.user_id);
      for (const [name, id] of names) {
        bulk.push({ updateOne: { filter: { _id: `n|${name}` }, update: { $addToSet: { ids: id } }, upsert: true } });
      }
      const first = Math.min(...logs.map((l) => dayOf(l.created_at)));
      if (set !== 'dims' && first < knownFirst) {
        writes.push(
          ix
            .findOneAndUpdate({ _id: 'meta' }, { $min: { first } }, { upsert: true, returnDocument: 'after' })
            .then((m) => {
              knownFirst = m?.first ?? first;
            }),
        );
      }
      await Promise.all(dirWrites);
      if (bulk.length) await ix.bulkWrite(bulk, { ordered: false });
      for (const [name, id] of names) knownNames.add(`${name}|${id}`);
      await Promise.all(writes);
    },

    /** The last offset of a partition the lists hold (-1: none). */
    async watermark(key: string): Promise<number> {
      return (await ix.findOne({ _id: `w|${key}` }, { projection: { o: 1 } }))?.o ?? -1;
    },
    async raiseWatermark(key: string, offset: number): Promise<void> {
      await ix.updateOne({ _id: `w|${key}` }, { $max: { o: offset } }, { upsert: true });
    },

    /** True once the logs stored before the lists existed are in them (backfill). */
    async built(): Promise<boolean> {
      return (await meta()).built === true;
    },
    meta,
    async markBuilt(lastId: number | null): Promise<void> {
      await ix.updateOne(
        { _id: 'meta' },
        lastId === null ? { $set: { built: true } } : { $max: { backfilled: lastId } },
        { upsert: true },
      );
    },
    /** Backfill progress of the dimensions (null: done, queries may read them). */
    async markDims(lastId: number | null): Promise<void> {
      await ix.updateOne(
        { _id: 'meta' },
        lastId === null ? { $set: { dims: true } } : { $max: { dimsBackfilled: lastId } },
        { upsert: true },
      );
    },

    /**
     * One page, newest first, and the number of matches: the event ids to read, in order. With
     * countable filters only the directories and the page's blocks are read.
     */
    async page(q: IndexQuery, page: number, size: number, now = Math.floor(Date.now() / 1000)) {
      const none = { eventIds: [] as string[], total: 0 };
      const range = await rangeOf(q, now);
      if (!range) return none;
      const [lo, hi] = range;
      const { scopes, f } = await planOf(q, lo, hi);
      if (scopes.length === 0) return none;
      const skip = (page - 1) * size;
      const [scope] = scopes;
      if (scopes.length > 1 || !scope || !countable(f)) {
        const all = await walk(scopes, f, lo, hi);
        return { eventIds: all.slice(skip, skip + size).map((x) => x.e[E.eventId]), total: all.length };
      }
      const hours = await hoursIn(scope, lo, hi);
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
          // A type: blocks from the newest down until the page is full.
          let seen = 0;
          for (let k = Math.floor((h.slot.n - 1) / BLOCK); k >= 0 && out.length < size; k--) {
            for (const x of dedupe(await blockEntries(scope, h.hour, [k]))) {
              if (!matches(x.e, f)) continue;
              if (seen++ < left) continue;
              if (out.length < size) out.push(x);
            }
          }
        }
        left = 0;
      }
      return { eventIds: out.map((x) => x.e[E.eventId]), total };
    },

    /** Consumption quota over the query's range; requests and tokens since `now - 60`. */
    async stat(q: IndexQuery, now = Math.floor(Date.now() / 1000)) {
      const zero = { quota: 0, rpm: 0, tpm: 0 };
      const range = await rangeOf(q, now);
      // The range's plan also serves the last minute (which lies in it or after it).
      const { scopes, f: rest } = await planOf(q, range?.[0] ?? now - 60, range?.[1] ?? now);
      const f: EntryFilter = { ...rest, type: LogType.CONSUME };
      if (scopes.length === 0) return zero;
      let quota = 0;
      const [scope] = scopes;
      if (range) {
        const [lo, hi] = range;
        if (scopes.length > 1 || !scope || !countable(f)) {
          for (const x of await walk(scopes, f, lo, hi)) quota += x.e[E.quota];
        } else {
          for (const h of await hoursIn(scope, lo, hi)) {
            if (h.whole) quota += h.slot.q ?? 0;
            else {
              const list = await blockEntries(scope, h.hour, blocksOf(h.slot.n));
              for (const x of dedupe(list)) if (inRange(x, lo, hi) && matches(x.e, f)) quota += x.e[E.quota];
            }
          }
        }
      }
      // The last minute: blocks from the newest down, until one is wholly a minute older than that.
      const recent = await rangeOf({ start: now - 60 }, now);
      let rpm = 0;
      let tpm = 0;
      if (recent) {
        const since = recent[0];
        for (const s of scopes) {
          scan: for (const h of await hoursIn(s, recent[0], recent[1])) {
            for (let k = Math.floor((h.slot.n - 1) / BLOCK); k >= 0; k--) {
              const list = dedupe(await blockEntries(s, h.hour, [k]));
              for (const x of list) {
                if (x.e[E.createdAt] >= since && matches(x.e, f)) {
                  rpm++;
                  tpm += x.e[E.tokens];
                }
              }
              if (list.length > 0 && list.every((x) => x.e[E.createdAt] < since - 60)) break scan;
            }
          }
        }
      }
      return { quota, rpm, tpm };
    },

    /** After logs before `ts` are deleted: lists start there, and what is wholly before goes. */
    async cut(ts: number): Promise<void> {
      await ix.updateOne({ _id: 'meta' }, { $max: { cut: ts } }, { upsert: true });
      await ix.deleteMany({ hour: { $lt: hourOf(ts) } });
      await ix.deleteMany({ day: { $lt: dayOf(ts) } });
    },
  };
}

/** An entry indexed twice (a crash between the blocks and the watermark) is listed once. */
function dedupe(list: Found[]): Found[] {
  const seen = new Set<string>();
  return list.filter((x) => !seen.has(x.e[E.eventId]) && seen.add(x.e[E.eventId]) !== undefined);
}

export type LogIndexRepository = ReturnType<typeof logIndexRepository>;
