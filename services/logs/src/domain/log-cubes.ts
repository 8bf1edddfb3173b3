/**
 * Counts of a scope's logs per combination of the log page's filters (pure part), so that a page
 * or stat of combined filters (a user and a model, a group, a token name and errors, ...) counts
 * whole hours and days instead of reading every entry of its scope in the range.
 *
 * A cube is one hour's or one whole UTC day's logs of one scope, summed per key: type, user id,
 * username, token name, model, channel and group (user id and username only in a user's scopes:
 * elsewhere they would make a key per user). It is computed from the scope's entries the first
 * time a query walks them, stored as one JSON text (FerretDB decodes each value of a document:
 * one string is cheap to read), and valid while the scope's directory still counts the logs it
 * was computed from (`n`: per hour, the count of the hour's slot). A log added later to that hour
 * makes the counts differ and the hour is walked (and its cube computed) again.
 */

import type { Entry, EntryFilter } from './log-index.ts';
import { E } from './log-index.ts';

/** One key of a cube and its sums: type, user id, username, token name, model, channel, group, logs, quota. */
export type CubeRow = [number, number, string, string, string, number, string, number, number];

const R = { type: 0, userId: 1, username: 2, tokenName: 3, model: 4, channel: 5, group: 6, n: 7, quota: 8 } as const;

/** A cube as stored: its hours' counts when computed (`[hour, n]` pairs) and its rows, each as JSON text. */
export interface CubeDoc {
  _id: string;
  n: string;
  c: string;
  /** Everyone's hour cubes: the other scopes the hour lists (JSON text), whose day cubes it makes. */
  s?: string;
}

/** Whether a scope is one user's (its entries share user id and, but for renames, username). */
export const isUserScope = (scope: string) => /^u\d/.test(scope);

/** The hour cube of a scope (in the hour's day collection, as the hour's blocks). */
export const hourCubeId = (scope: string, hour: number) => `${scope}|${hour}|q`;
/** The whole-day cube of a scope. */
export const dayCubeId = (scope: string, day: number) => `${scope}|d${day}|q`;

/**
 * Whether a scope's cubes can answer a filter: they hold user ids and usernames only in a user's
 * scopes.
 */
export const cubeable = (scope: string, f: EntryFilter) => isUserScope(scope) || (!f.user_id && !f.username);

/** Adds an entry to a cube's rows (keyed by their JSON text). */
export function addToCube(rows: Map<string, CubeRow>, e: Entry, userScope: boolean): void {
  const row: CubeRow = [
    e[E.type],
    userScope ? (e[E.userId] ?? 0) : 0,
    userScope ? e[E.username] : '',
    e[E.tokenName],
    e[E.model],
    e[E.channel],
    e[E.group],
    0,
    0,
  ];
  const key = JSON.stringify(row);
  const r = rows.get(key) ?? row;
  r[R.n] += 1;
  r[R.quota] += e[E.quota];
  rows.set(key, r);
}

/** The rows of some entries (already deduplicated): one per distinct key, with its count and quota. */
export function cubeOf(entries: Entry[], userScope: boolean): CubeRow[] {
  const rows = new Map<string, CubeRow>();
  for (const e of entries) addToCube(rows, e, userScope);
  return [...rows.values()];
}

/** The rows of several cubes summed per key (a day's from its hours'). */
export function mergeCubes(cubes: CubeRow[][]): CubeRow[] {
  const rows = new Map<string, CubeRow>();
  for (const cube of cubes) {
    for (const row of cube) {
      const key = JSON.stringify(row.slice(0, R.n));
      const r = rows.get(key);
      if (r) {
        r[R.n] += row[R.n];
        r[R.quota] += row[R.quota];
      } else rows.set(key, [...row] as CubeRow);
    }
  }
  return [...rows.values()];
}

/** The logs and quota of a cube's rows that match a filter (see cubeable). */
export function tally(rows: CubeRow[], f: EntryFilter): { n: number; quota: number } {
  let n = 0;
  let quota = 0;
  for (const r of rows) {
    if (f.type && r[R.type] !== f.type) continue;
    if (f.user_id && r[R.userId] !== f.user_id) continue;
    if (f.username && r[R.username] !== f.username) continue;
    if (f.token_name && r[R.tokenName] !== f.token_name) continue;
    if (f.model_name && r[R.model] !== f.model_name) continue;
    if (f.channel && r[R.channel] !== f.channel) continue;
    if (f.group && r[R.group] !== f.group) continue;
    n += r[R.n];
    quota += r[R.quota];
  }
  return { n, quota };
}

/** A cube document: the hours' counts it was computed from and its rows. */
export const cubeDoc = (id: string, counts: [number, number][], rows: CubeRow[]): CubeDoc => ({
  _id: id,
  n: JSON.stringify(counts),
  c: JSON.stringify(rows),
});

/**
 * A stored cube's rows if it still counts what the directory counts now (the same hours with the
 * same numbers of logs), else undefined.
 */
export function validRows(doc: CubeDoc | undefined, counts: [number, number][]): CubeRow[] | undefined {
  if (!doc || typeof doc.n !== 'string' || typeof doc.c !== 'string') return undefined;
  return doc.n === JSON.stringify(counts) ? (JSON.parse(doc.c) as CubeRow[]) : undefined;
}
