/**
 * The log list's read model (pure part). FerretDB on SQLite reads and decodes the whole logs
 * collection for any filter but `_id` (31 s per page at 100,000 rows), so the list is served from
 * documents whose `_id`s a query can compute:
 *
 * - a scope is everyone's logs (`a`), one user's (`u<id>`), or those of one model, channel, group
 *   or token name (`m<name>`, `c<id>`, `g<name>`, `k<name>`: the dimensions);
 * - per scope and UTC day a directory (`<scope>|d<day>`) counts the logs of each hour, per type,
 *   with the consumption quota and tokens of the hour (the stat);
 * - per scope and hour the logs are entries in blocks of BLOCK (`<scope>|<hour>|<k>`), at dense
 *   positions taken from the hour's count when they are written (arrival order).
 *
 * A page is newest hour first, newest position first: whole hours are skipped by their counts, and
 * only the blocks the page falls in are read (by `_id`), then the page's logs (by `_id`). A query
 * reads the scope of its filters with the fewest logs in the range (a model's, one user's, ...);
 * the filters left (a user within a model, a token within a user) are applied to the entries
 * (which hold those fields), reading that scope's blocks of the range.
 */

import { LogType } from '@aigw/proto/common/v1/common';
import type { LogDoc } from './log-record.ts';

/**
 * Entries per block. A block is rewritten whole by each update that adds to it (FerretDB updates
 * read, change and write the document), so a user's block costs more the fuller it is; 200 keeps a
 * block under about 30 KB, and a page of up to 100 still touches one or two blocks.
 */
export const BLOCK = 200;
const HOUR = 3600;
const DAY = 86_400;

/**
 * An index entry: id, event id (the log's `_id`), created_at, type, quota, tokens, username,
 * token name, model, channel, group, user id (entries written before the dimensions lack it;
 * only the dimensions' entries are filtered by it).
 */
export type Entry = [number, string, number, number, number, number, string, string, string, number, string, number?];

export type Indexable = Pick<
  LogDoc,
  | 'id'
  | 'event_id'
  | 'created_at'
  | 'type'
  | 'quota'
  | 'tokens'
  | 'user_id'
  | 'username'
  | 'token_name'
  | 'model_name'
  | 'channel'
  | 'group'
>;

export const entryOf = (l: Indexable): Entry => [
  l.id,
  l.event_id,
  l.created_at,
  l.type,
  l.quota,
  l.tokens,
  l.username,
  l.token_name,
  l.model_name,
  l.channel,
  l.group,
  l.user_id,
];

export const E = {
  id: 0,
  eventId: 1,
  createdAt: 2,
  type: 3,
  quota: 4,
  tokens: 5,
  username: 6,
  tokenName: 7,
  model: 8,
  channel: 9,
  group: 10,
  userId: 11,
} as const;

/** The counts of one hour of one scope (types as `t<type>`; q and k: consumption quota and tokens). */
export interface HourSlot {
  n: number;
  q?: number;
  k?: number;
  [type: `t${number}`]: number | undefined;
}

export const scopeAll = 'a';
export const scopeUser = (userId: number) => `u${userId}`;
export const scopeModel = (name: string) => `m${encodeURIComponent(name)}`;
export const scopeChannel = (id: number) => `c${id}`;
export const scopeGroup = (name: string) => `g${encodeURIComponent(name)}`;
export const scopeToken = (name: string) => `k${encodeURIComponent(name)}`;

/** The dimension scopes a log is listed in (none for a field it does not have). */
export function dimensionScopes(l: Pick<Indexable, 'model_name' | 'channel' | 'group' | 'token_name'>): string[] {
  const out: string[] = [];
  if (l.model_name) out.push(scopeModel(l.model_name));
  if (l.channel) out.push(scopeChannel(l.channel));
  if (l.group) out.push(scopeGroup(l.group));
  if (l.token_name) out.push(scopeToken(l.token_name));
  return out;
}

/** Which scopes a write fills: everyone's and the users' (`base`), the dimensions, or all. */
export type ScopeSet = 'base' | 'dims' | 'all';
export const hourOf = (sec: number) => Math.floor(sec / HOUR);
export const dayOf = (sec: number) => Math.floor(sec / DAY);
export const dirId = (scope: string, day: number) => `${scope}|d${day}`;
export const blockId = (scope: string, hour: number, k: number) => `${scope}|${hour}|${k}`;
/** The field of a position inside a block document. */
export const posKey = (pos: number) => `x${pos}`;

/** What the counts cannot answer: applied to entries. */
export interface EntryFilter {
  type?: number;
  user_id?: number;
  username?: string;
  token_name?: string;
  model_name?: string;
  channel?: number;
  group?: string;
}

/** True when the hour counts alone give the number of matches (no filter, or a type). */
export const countable = (f: EntryFilter) =>
  !f.user_id && !f.username && !f.token_name && !f.model_name && !f.channel && !f.group;

export function matches(e: Entry, f: EntryFilter): boolean {
  if (f.type && e[E.type] !== f.type) return false;
  if (f.user_id && e[E.userId] !== f.user_id) return false;
  if (f.username && e[E.username] !== f.username) return false;
  if (f.token_name && e[E.tokenName] !== f.token_name) return false;
  if (f.model_name && e[E.model] !== f.model_name) return false;
  if (f.channel && e[E.channel] !== f.channel) return false;
  if (f.group && e[E.group] !== f.group) return false;
  return true;
}

/** The matches an hour's counts give (countable filters only). */
export const countOf = (slot: HourSlot | undefined, f: EntryFilter) =>
  slot ? (f.type ? (slot[`t${f.type}`] ?? 0) : slot.n) : 0;

/** The hours of a range (inclusive seconds) newest first, each whole or cut by the range. */
export function hoursOf(lo: number, hi: number): { hour: number; whole: boolean }[] {
  const out: { hour: number; whole: boolean }[] = [];
  for (let h = hourOf(hi); h >= hourOf(lo); h--) {
    out.push({ hour: h, whole: h * HOUR >= lo && h * HOUR + HOUR - 1 <= hi });
  }
  return out;
}

/** The days of a range (inclusive seconds). */
export function daysOf(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let d = dayOf(lo); d <= dayOf(hi); d++) out.push(d);
  return out;
}

/**
 * Where a batch's entries go: per scope and hour, the entries (in id order) and the counts to add.
 * Hidden logs (LogConsumeEnabled off) are not listed, so not indexed.
 */
export function groupsOf(logs: Indexable[], set: ScopeSet = 'all'): Map<string, Map<number, Indexable[]>> {
  const out = new Map<string, Map<number, Indexable[]>>();
  const add = (scope: string, l: Indexable) => {
    let hours = out.get(scope);
    if (!hours) {
      hours = new Map();
      out.set(scope, hours);
    }
    const hour = hourOf(l.created_at);
    const list = hours.get(hour);
    if (list) list.push(l);
    else hours.set(hour, [l]);
  };
  for (const l of [...logs].sort((a, b) => a.id - b.id)) {
    if (set !== 'dims') {
      add(scopeAll, l);
      if (l.user_id) add(scopeUser(l.user_id), l);
    }
    if (set !== 'base') for (const scope of dimensionScopes(l)) add(scope, l);
  }
  return out;
}

/** The $inc of one hour's logs in a directory (`h.<hour of day>.…`). */
export function hourIncrement(hour: number, logs: Indexable[]): Record<string, number> {
  const h = `h.${hour - dayOf(hour * HOUR) * 24}`;
  const inc: Record<string, number> = { [`${h}.n`]: logs.length };
  for (const l of logs) {
    const t = `${h}.t${l.type}`;
    inc[t] = (inc[t] ?? 0) + 1;
    if (l.type === LogType.CONSUME) {
      inc[`${h}.q`] = (inc[`${h}.q`] ?? 0) + l.quota;
      inc[`${h}.k`] = (inc[`${h}.k`] ?? 0) + l.tokens;
    }
  }
  return inc;
}

/** The slot of an hour in its day's directory document. */
export const slotOf = (dir: { h?: Record<string, HourSlot> } | undefined, hour: number): HourSlot | undefined =>
  dir?.h?.[String(hour - dayOf(hour * HOUR) * 24)];
