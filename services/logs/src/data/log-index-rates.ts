/**
 * rpm and tpm from the lists: consumption requests and tokens of a scope over the last minute,
 * from the directories' recent seconds (and older versions' seconds documents) and hour sums.
 */

import { LogType } from '@aigw/proto/common/v1/common';
import { daysOf, dirId, SLICE, secondsId, sliceOf } from '../domain/log-index.ts';
import type { LogIndexStore } from './log-index-store.ts';

const DAY_SECONDS = 86_400;
export type Rate = { rpm: number; tpm: number };

/**
 * Consumption requests and tokens of a scope from `since` to `until`: the directories' recent
 * seconds, and the seconds documents older versions wrote (read in the same `$in`).
 */
async function bySeconds(store: LogIndexStore, scope: string, since: number, until: number): Promise<Rate> {
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
export async function recent(store: LogIndexStore, scope: string, since: number, until: number): Promise<Rate> {
  const parts: Promise<Rate>[] = [];
  const firstWhole = Math.ceil(since / 3600);
  const lastWhole = Math.floor((until + 1) / 3600) - 1;
  if (firstWhole > lastWhole) return bySeconds(store, scope, since, until);
  if (since < firstWhole * 3600) parts.push(bySeconds(store, scope, since, firstWhole * 3600 - 1));
  if (until >= (lastWhole + 1) * 3600) parts.push(bySeconds(store, scope, (lastWhole + 1) * 3600, until));
  parts.push(
    store.hoursIn(scope, firstWhole * 3600, (lastWhole + 1) * 3600 - 1).then((hours) => ({
      rpm: hours.reduce((s, h) => s + (h.slot[`t${LogType.CONSUME}`] ?? 0), 0),
      tpm: hours.reduce((s, h) => s + (h.slot.k ?? 0), 0),
    })),
  );
  const all = await Promise.all(parts);
  return { rpm: all.reduce((s, x) => s + x.rpm, 0), tpm: all.reduce((s, x) => s + x.tpm, 0) };
}
