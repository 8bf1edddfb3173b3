/**
 * The log page's reads from the lists (domain/log-index.ts): a page and its total, the stat, the
 * count a cleanup removes and the refs it deletes. Countable filters (none, or a type) read the
 * directories and the page's blocks only; the others go through their scope's cubes
 * (log-index-filtered.ts).
 */

import { LogType } from '@aigw/proto/common/v1/common';
import { countable, E, type EntryFilter, scopeAll } from '../domain/log-index.ts';
import { countablePage, countableQuota } from './log-index-counted.ts';
import { filteredReads } from './log-index-filtered.ts';
import { type IndexQuery, planOf } from './log-index-plan.ts';
import { type Rate, recent } from './log-index-rates.ts';
import { blocksOf, dedupe, inRange, type LogIndexStore, type LogRef, refOf } from './log-index-store.ts';

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

  /** Requests and tokens of the last minute (`last`) for a filter the counts cannot answer. */
  async function recentWalked(scope: string, f: EntryFilter, last: [number, number]): Promise<Rate> {
    const hours = await store.hoursIn(scope, last[0], last[1]);
    const found = await filtered.walk(scope, f, last, hours);
    return { rpm: found.length, tpm: found.reduce((s, x) => s + x.e[E.tokens], 0) };
  }

  return {
    rangeOf,

    /** One page, newest first, and the number of matches: the logs to read, in order. */
    async page(q: IndexQuery, page: number, size: number, now = Math.floor(Date.now() / 1000)) {
      const range = await rangeOf(q, now);
      if (!range) return { refs: [] as LogRef[], total: 0 };
      const { scope, f, hours, cubes } = await planOf(store, q, range[0], range[1]);
      const skip = (page - 1) * size;
      if (countable(f)) return countablePage(store, scope, f, range, hours, skip, size);
      return filtered.page(scope, f, range, hours, skip, size, cubes);
    },

    /**
     * Consumption quota over the query's range, requests and tokens from `now - 60` (the
     * directories' recent seconds and hour sums for countable filters; others walk their scope).
     */
    async stat(q: IndexQuery, now = Math.floor(Date.now() / 1000)) {
      const range = await rangeOf(q, now);
      const consume = { ...q, type: LogType.CONSUME };
      const { scope, f, hours, cubes } = await planOf(store, consume, range?.[0] ?? now - 60, range?.[1] ?? now);
      let quota = 0;
      if (range) {
        quota = countable(f)
          ? await countableQuota(store, scope, f, range, hours)
          : await filtered.quota(scope, f, range, hours, cubes);
      }
      const last = await rangeOf({ start: now - 60 }, now);
      if (!last) return { quota, rpm: 0, tpm: 0 };
      if (countable(f)) return { quota, ...(await recent(store, scope, last[0], last[1])) };
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
          const list = await store.blockEntries(scopeAll, h.hour, blocksOf(h.slot.n), h.slot.n);
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
          const list = await store.blockEntries(scopeAll, h.hour, ks.slice(i, i + 10), h.slot.n);
          const refs = list.filter((x) => inRange(x, from, ts - 1)).map(refOf);
          if (refs.length) yield refs;
        }
      }
    },
  };
}
