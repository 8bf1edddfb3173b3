/**
 * The log page's reads from the lists (domain/log-index.ts): a page and its total, the stat, the
 * count a cleanup removes and the refs it deletes. Countable filters (none, or a type) read the
 * directories and the page's blocks only; the others go through their scope's cubes
 * (log-index-filtered.ts).
 */

import { LogType } from '@aigw/proto/common/v1/common';
import {
  BLOCK,
  countable,
  countOf,
  daysOf,
  dirId,
  E,
  type EntryFilter,
  matches,
  SLICE,
  scopeAll,
  secondsId,
  sliceOf,
} from '../domain/log-index.ts';
import { filteredReads } from './log-index-filtered.ts';
import { type IndexQuery, planOf } from './log-index-plan.ts';
import {
  blocksOf,
  dedupe,
  type Found,
  type Hour,
  inRange,
  type LogIndexStore,
  type LogRef,
  refOf,
} from './log-index-store.ts';

type Rate = { rpm: number; tpm: number };
const DAY_SECONDS = 86_400;

export function logIndexQueries(store: LogIndexStore) {
  const filtered = filteredReads(store, () => Date.now() / 1000);

  /** The range a query covers after cleanup, or null when nothing is logged in it. */
  async function rangeOf(q: IndexQuery, now: number): Promise<[number, number] | null> {
    const m = await store.meta();
    if (m.first === undefined) return null;
    const lo = Math.max(q.start ?? 0, m.cut ?? 0, m.first * DAY_SECONDS);
    // Nothing is logged after now (a day of slack for clocks): a far end_timestamp must not make
    // the walk step through millions of empty hours (the fuzzing test ran the process out of heap).
    const hi = Math.min(q.end || now + DAY_SECONDS, now + DAY_SECONDS);
    return lo > hi ? null : [lo, hi];
  }

  /** Every log of the hours a range cuts that lies in it and matches, per hour (newest first). */
  async function cutHours(scope: string, f: EntryFilter, lo: number, hi: number, hours: Hour[]) {
    const cut = new Map<number, Found[]>();
    await Promise.all(
      hours
        .filter((h) => !h.whole)
        .map(async (h) => {
          const list = await store.blockEntries(scope, h.hour, blocksOf(h.slot.n));
          cut.set(h.hour, dedupe(list.filter((x) => inRange(x, lo, hi) && matches(x.e, f))));
        }),
    );
    return cut;
  }

  /** Positions n-1 .. 0 of an hour: the page's positions are known, read their blocks only. */
  async function byPosition(scope: string, h: Hour, left: number, want: number): Promise<Found[]> {
    const top = h.slot.n - 1 - left;
    const bottom = Math.max(0, top - want + 1);
    const ks = [];
    for (let k = Math.floor(bottom / BLOCK); k <= Math.floor(top / BLOCK); k++) ks.push(k);
    const list = await store.blockEntries(scope, h.hour, ks);
    return dedupe(list.filter((x) => x.pos <= top && x.pos >= bottom));
  }

  /**
   * A type mixed with others in a scope's hour (consumption in everyone's): blocks from the newest
   * down until the page is full, as many at once as the type's share suggests.
   */
  async function byType(scope: string, f: EntryFilter, h: Hour, left: number, want: number): Promise<Found[]> {
    const out: Found[] = [];
    const share = Math.max(countOf(h.slot, f) / h.slot.n, 0.01);
    const step = Math.max(1, Math.ceil((left + want) / share / BLOCK));
    let seen = 0;
    for (let k = Math.floor((h.slot.n - 1) / BLOCK); k >= 0 && out.length < want; k -= step) {
      const ks = [];
      for (let j = k; j > k - step && j >= 0; j--) ks.push(j);
      for (const x of dedupe(await store.blockEntries(scope, h.hour, ks))) {
        if (!matches(x.e, f)) continue;
        if (seen++ < left) continue;
        if (out.length < want) out.push(x);
      }
    }
    return out;
  }

  /** A page of a countable filter: whole hours skipped by their counts, the page's blocks read. */
  async function countablePage(
    scope: string,
    f: EntryFilter,
    range: [number, number],
    hours: Hour[],
    skip: number,
    size: number,
  ) {
    const cut = await cutHours(scope, f, range[0], range[1], hours);
    const countIn = (h: Hour) => (h.whole ? countOf(h.slot, f) : (cut.get(h.hour)?.length ?? 0));
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
      if (listed) out.push(...listed.slice(left, left + size - out.length));
      else if (!f.type) out.push(...(await byPosition(scope, h, left, size - out.length)));
      else out.push(...(await byType(scope, f, h, left, size - out.length)));
      left = 0;
    }
    return { refs: out.map(refOf), total };
  }

  /** The consumption quota of a countable filter: whole hours' sums, cut hours' entries. */
  async function countableQuota(scope: string, f: EntryFilter, range: [number, number], hours: Hour[]) {
    let quota = 0;
    for (const h of hours) {
      if (h.whole) quota += h.slot.q ?? 0;
      else {
        const list = await store.blockEntries(scope, h.hour, blocksOf(h.slot.n));
        for (const x of dedupe(list)) if (inRange(x, range[0], range[1]) && matches(x.e, f)) quota += x.e[E.quota];
      }
    }
    return quota;
  }

  /**
   * Consumption requests and tokens of a scope from `since` to `until`: the directories' recent
   * seconds, and the seconds documents older versions wrote (read in the same `$in`).
   */
  async function bySeconds(scope: string, since: number, until: number): Promise<Rate> {
    const ids: string[] = daysOf(since, until).map((day) => dirId(scope, day));
    for (let m = sliceOf(since); m <= sliceOf(until); m++) ids.push(secondsId(scope, m));
    const rate = { rpm: 0, tpm: 0 };
    const add = (at: number, c: number, k: number) => {
      if (at < since || at > until) return;
      rate.rpm += c;
      rate.tpm += k;
    };
    for (const d of await store.byIds(ids)) {
      if (d.day !== undefined) {
        for (const [sod, v] of Object.entries(d.r ?? {})) add(d.day * DAY_SECONDS + Number(sod), v.c ?? 0, v.k ?? 0);
        continue;
      }
      if (!d._id.includes('|s')) continue;
      const slice = Number(d._id.slice(d._id.lastIndexOf('|s') + 2));
      for (const [key, v] of Object.entries(d)) {
        if ((key[0] !== 'c' && key[0] !== 'k') || typeof v !== 'number') continue;
        const at = slice * SLICE + Number(key.slice(1));
        if (key[0] === 'c') add(at, v, 0);
        else add(at, 0, v);
      }
    }
    return rate;
  }

  /**
   * Consumption requests and tokens of a scope from `since` to `until`: the seconds of the hours
   * the range cuts, the directories' hour sums for the whole hours between.
   */
  async function recent(scope: string, since: number, until: number): Promise<Rate> {
    const parts: Promise<Rate>[] = [];
    const firstWhole = Math.ceil(since / 3600);
    const lastWhole = Math.floor((until + 1) / 3600) - 1;
    if (firstWhole > lastWhole) return bySeconds(scope, since, until);
    if (since < firstWhole * 3600) parts.push(bySeconds(scope, since, firstWhole * 3600 - 1));
    if (until >= (lastWhole + 1) * 3600) parts.push(bySeconds(scope, (lastWhole + 1) * 3600, until));
    parts.push(
      store.hoursIn(scope, firstWhole * 3600, (lastWhole + 1) * 3600 - 1).then((hours) => ({
        rpm: hours.reduce((s, h) => s + (h.slot[`t${LogType.CONSUME}`] ?? 0), 0),
        tpm: hours.reduce((s, h) => s + (h.slot.k ?? 0), 0),
      })),
    );
    const all = await Promise.all(parts);
    return { rpm: all.reduce((s, x) => s + x.rpm, 0), tpm: all.reduce((s, x) => s + x.tpm, 0) };
  }

  /** Requests and tokens of the last minute (`last`) for a filter the counts cannot answer. */
  async function recentWalked(scope: string, f: EntryFilter, last: [number, number]): Promise<Rate> {
    const hours = await store.hoursIn(scope, last[0], last[1]);
    const found = await filtered.walk(scope, f, last[0], last[1], hours);
    return { rpm: found.length, tpm: found.reduce((s, x) => s + x.e[E.tokens], 0) };
  }

  return {
    rangeOf,

    /** One page, newest first, and the number of matches: the logs to read, in order. */
    async page(q: IndexQuery, page: number, size: number, now = Math.floor(Date.now() / 1000)) {
      const range = await rangeOf(q, now);
      if (!range) return { refs: [] as LogRef[], total: 0 };
      const { scope, f, hours } = await planOf(store, q, range[0], range[1]);
      const skip = (page - 1) * size;
      if (countable(f)) return countablePage(scope, f, range, hours, skip, size);
      return filtered.page(scope, f, range, hours, skip, size);
    },

    /**
     * Consumption quota over the query's range, requests and tokens from `now - 60` (the
     * directories' recent seconds and hour sums for countable filters; others walk their scope).
     */
    async stat(q: IndexQuery, now = Math.floor(Date.now() / 1000)) {
      const range = await rangeOf(q, now);
      const consume = { ...q, type: LogType.CONSUME };
      const { scope, f, hours } = await planOf(store, consume, range?.[0] ?? now - 60, range?.[1] ?? now);
      let quota = 0;
      if (range) {
        quota = countable(f)
          ? await countableQuota(scope, f, range, hours)
          : await filtered.quota(scope, f, range, hours);
      }
      const last = await rangeOf({ start: now - 60 }, now);
      if (!last) return { quota, rpm: 0, tpm: 0 };
      if (countable(f)) return { quota, ...(await recent(scope, last[0], last[1])) };
      return { quota, ...(await recentWalked(scope, f, last)) };
    },

    /** The number of listed logs from the current cut up to `ts` (what a cleanup to `ts` removes). */
    async countBefore(ts: number, now = Math.floor(Date.now() / 1000)): Promise<number> {
      const range = await rangeOf({}, now);
      if (!range || ts - 1 < range[0]) return 0;
      const [lo] = range;
      const hi = Math.min(ts - 1, range[1]);
      let n = 0;
      for (const h of await store.hoursIn(scopeAll, lo, hi)) {
        if (h.whole) n += h.slot.n;
        else {
          const list = await store.blockEntries(scopeAll, h.hour, blocksOf(h.slot.n));
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
      const hours = (await store.hoursIn(scopeAll, from, ts - 1)).reverse();
      for (const h of hours) {
        const ks = blocksOf(h.slot.n);
        for (let i = 0; i < ks.length; i += 10) {
          const list = await store.blockEntries(scopeAll, h.hour, ks.slice(i, i + 10));
          const refs = list.filter((x) => inRange(x, from, ts - 1)).map(refOf);
          if (refs.length) yield refs;
        }
      }
    },
  };
}
