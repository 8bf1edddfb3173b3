/**
 * Pages and quota of countable filters (none, or a type) from the lists: whole hours by their
 * directories' counts and sums, the hours a range cuts by their entries, and only the page's
 * blocks read.
 */

import { BLOCK, countOf, E, type EntryFilter, matches } from '../domain/log-index.ts';
import { blocksOf, dedupe, type Found, type Hour, inRange, type LogIndexStore, refOf } from './log-index-store.ts';

/** Every log of the hours a range cuts that lies in it and matches, per hour (newest first). */
async function cutHours(store: LogIndexStore, scope: string, f: EntryFilter, lo: number, hi: number, hours: Hour[]) {
  const cut = new Map<number, Found[]>();
  await Promise.all(
    hours
      .filter((h) => !h.whole)
      .map(async (h) => {
        const list = await store.blockEntries(scope, h.hour, blocksOf(h.slot.n), h.slot.n);
        cut.set(h.hour, dedupe(list.filter((x) => inRange(x, lo, hi) && matches(x.e, f))));
      }),
  );
  return cut;
}

/** Positions n-1 .. 0 of an hour: the page's positions are known, read their blocks only. */
async function byPosition(store: LogIndexStore, scope: string, h: Hour, left: number, want: number): Promise<Found[]> {
  const top = h.slot.n - 1 - left;
  const bottom = Math.max(0, top - want + 1);
  const ks = [];
  for (let k = Math.floor(bottom / BLOCK); k <= Math.floor(top / BLOCK); k++) ks.push(k);
  const list = await store.blockEntries(scope, h.hour, ks, h.slot.n);
  return dedupe(list.filter((x) => x.pos <= top && x.pos >= bottom));
}

/**
 * A type mixed with others in a scope's hour (consumption in everyone's): blocks from the newest
 * down until the page is full, as many at once as the type's share suggests.
 */
async function byType(
  store: LogIndexStore,
  scope: string,
  f: EntryFilter,
  h: Hour,
  left: number,
  want: number,
): Promise<Found[]> {
  const out: Found[] = [];
  const share = Math.max(countOf(h.slot, f) / h.slot.n, 0.01);
  const step = Math.max(1, Math.ceil((left + want) / share / BLOCK));
  let seen = 0;
  for (let k = Math.floor((h.slot.n - 1) / BLOCK); k >= 0 && out.length < want; k -= step) {
    const ks = [];
    for (let j = k; j > k - step && j >= 0; j--) ks.push(j);
    for (const x of dedupe(await store.blockEntries(scope, h.hour, ks, h.slot.n))) {
      if (!matches(x.e, f)) continue;
      if (seen++ < left) continue;
      if (out.length < want) out.push(x);
    }
  }
  return out;
}

/** A page of a countable filter: whole hours skipped by their counts, the page's blocks read. */
export async function countablePage(
  store: LogIndexStore,
  scope: string,
  f: EntryFilter,
  range: [number, number],
  hours: Hour[],
  skip: number,
  size: number,
) {
  const cut = await cutHours(store, scope, f, range[0], range[1], hours);
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
    else if (!f.type) out.push(...(await byPosition(store, scope, h, left, size - out.length)));
    else out.push(...(await byType(store, scope, f, h, left, size - out.length)));
    left = 0;
  }
  return { refs: out.map(refOf), total };
}

/** The consumption quota of a countable filter: whole hours' sums, cut hours' entries. */
export async function countableQuota(
  store: LogIndexStore,
  scope: string,
  f: EntryFilter,
  range: [number, number],
  hours: Hour[],
) {
  let quota = 0;
  for (const h of hours) {
    if (h.whole) quota += h.slot.q ?? 0;
    else {
      const list = await store.blockEntries(scope, h.hour, blocksOf(h.slot.n), h.slot.n);
      for (const x of dedupe(list)) if (inRange(x, range[0], range[1]) && matches(x.e, f)) quota += x.e[E.quota];
    }
  }
  return quota;
}
