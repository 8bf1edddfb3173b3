/**
 * The log list's read model (pure part). FerretDB on SQLite reads and decodes the whole logs
 * collection for any filter but `_id` (31 s per page at 100,000 rows), so the list is served from
 * documents whose `_id`s a query can compute:
 *
 * - a scope is everyone's logs (`a`), one user's (`u<id>`), or those of one model, channel, group
 *   or token name (`m<name>`, `c<id>`, `g<name>`, `k<name>`), and for
 *   the rare types (all but consumption) everyone's and each user's of that type (`t<type>`,
 *   `u<id>t<type>`);
 * - per scope and UTC day a directory (`<scope>|d<day>`) counts the logs of each hour, per type,
 *   with the consumption quota and tokens of the hour (the stat's buckets);
 * - per scope and hour the logs are entries in blocks of BLOCK (`<scope>|<hour>|<k>`), at dense
 *   positions taken from the hour's count when they are written (arrival order);
 * - in the directory, the consumption requests and tokens of each second of the last minutes
 *   (`r.<second of day>`: rpm and tpm; older versions wrote them per scope and ten minutes,
 *   `<scope>|s<slice>`, still read).
 *
 * Each UTC day's documents live in that day's collection (`log_index_<yyyymmdd>`, see
 * log-partitions.ts), dropped with the day's logs.
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

/**
 * An entry as stored in its block: the entry's JSON text. FerretDB decodes and re-encodes every
 * value of a document it reads or updates; one string per entry instead of an array of twelve
 * made reading 40 full blocks and updating 40 blocks 4-7 times faster on this machine. Blocks
 * written before hold arrays (parseEntry reads both).
 */
export const storedEntry = (l: Indexable): string => JSON.stringify(entryOf(l));

/** A block's field value as an entry (JSON text, or the array older versions stored). */
export function parseEntry(v: unknown): Entry | undefined {
  if (typeof v === 'string') return JSON.parse(v) as Entry;
  return Array.isArray(v) ? (v as Entry) : undefined;
}

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

/**
 * The counts of one hour of one scope (types as `t<type>`; q and k: consumption quota and tokens).
 * Since the hour bounds: `a` and `z`, the oldest and newest `created_at` of the `w` logs listed
 * with them (`w === n`: every log of the hour; directories written before have no `w`).
 */
export interface HourSlot {
  n: number;
  q?: number;
  k?: number;
  a?: number;
  z?: number;
  w?: number;
  [type: `t${number}`]: number | undefined;
}

export const scopeAll = 'a';
export const scopeUser = (userId: number) => `u${userId}`;
export const scopeModel = (name: string) => `m${encodeURIComponent(name)}`;
export const scopeChannel = (id: number) => `c${id}`;
export const scopeGroup = (name: string) => `g${encodeURIComponent(name)}`;
export const scopeToken = (name: string) => `k${encodeURIComponent(name)}`;

/** Everyone's logs of one type, and one user's: only for the rare types (not consumption). */
export const scopeType = (type: number) => `t${type}`;
export const scopeUserType = (userId: number, type: number) => `u${userId}t${type}`;

/**
 * The scopes a log is listed in besides everyone's: its user's, its model's, channel's, group's
 * and token name's (none for a field it does not have), and for a type other
 * than consumption that type's (everyone's and its user's), so that a page of a rare type reads
 * a list of its own instead of everyone's.
 */
export function scopesOf(
  l: Pick<Indexable, 'type' | 'user_id' | 'model_name' | 'channel' | 'group' | 'token_name'>,
): string[] {
  const out: string[] = [scopeAll];
  if (l.user_id) out.push(scopeUser(l.user_id));
  if (l.model_name) out.push(scopeModel(l.model_name));
  if (l.channel) out.push(scopeChannel(l.channel));
  if (l.group) out.push(scopeGroup(l.group));
  if (l.token_name) out.push(scopeToken(l.token_name));
  if (l.type !== LogType.CONSUME) {
    out.push(scopeType(l.type));
    if (l.user_id) out.push(scopeUserType(l.user_id, l.type));
  }
  return out;
}

export const hourOf = (sec: number) => Math.floor(sec / HOUR);
export const dayOf = (sec: number) => Math.floor(sec / DAY);
/** Seconds documents cover ten minutes each (a batch of a backlog spans many minutes: fewer writes). */
export const SLICE = 600;
export const sliceOf = (sec: number) => Math.floor(sec / SLICE);
export const dirId = (scope: string, day: number) => `${scope}|d${day}`;
export const blockId = (scope: string, hour: number, k: number) => `${scope}|${hour}|${k}`;
/**
 * A part of block k: the entries one batch added to it, from position `first` on, inserted as a
 * document of its own. FerretDB commits each update statement alone (about 3 ms here) but inserts a
 * command's documents together (under 0.1 ms each), so a batch inserts its parts instead of
 * updating a block per scope and hour.
 */
export const blockPartId = (scope: string, hour: number, k: number, first: number) =>
  `${blockId(scope, hour, k)}|${first}`;
/**
 * The documents that may hold block k's entries of an hour of `n` logs: the whole block (older
 * versions, and the bench's seeding, wrote blocks whole) and a part for every position it may
 * start at (below n). Read by `_id` together: the ones not stored cost an index probe each.
 */
export function blockDocIds(scope: string, hour: number, k: number, n: number): string[] {
  const ids = [blockId(scope, hour, k)];
  for (let pos = k * BLOCK; pos < Math.min(n, (k + 1) * BLOCK); pos++) ids.push(blockPartId(scope, hour, k, pos));
  return ids;
}
/** Per scope and ten minutes: consumption requests (`c<second>`) and tokens (`k<second>`), for rpm/tpm. */
export const secondsId = (scope: string, slice: number) => `${scope}|s${slice}`;
/** The UTC day a directory, block or seconds document belongs to (its collection). */
export function dayOfDoc(id: string): number {
  const part = id.split('|')[1] ?? '';
  if (part[0] === 'd') return Number(part.slice(1));
  if (part[0] === 's') return Math.floor((Number(part.slice(1)) * SLICE) / DAY);
  return Math.floor(Number(part) / 24);
}
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

/** Whether an hour's bounds cover every log of it (see HourSlot). */
export const fullyCounted = (slot: HourSlot) => slot.w === slot.n;

/** The matches an hour's counts give (countable filters only). */
export const countOf = (slot: HourSlot | undefined, f: EntryFilter) =>
  slot ? (f.type ? (slot[`t${f.type}`] ?? 0) : slot.n) : 0;

/**
 * Whether every log of an hour lies in [lo, hi]: the range covers the hour, or the hour's logs,
 * all within its bounds, do (the range ending at "now" leaves the current hour whole).
 */
export function wholeIn(hour: number, slot: HourSlot, lo: number, hi: number): boolean {
  if (hour * HOUR >= lo && hour * HOUR + HOUR - 1 <= hi) return true;
  return fullyCounted(slot) && slot.a !== undefined && slot.z !== undefined && slot.a >= lo && slot.z <= hi;
}

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
export function groupsOf(logs: Indexable[]): Map<string, Map<number, Indexable[]>> {
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
  for (const l of [...logs].sort((a, b) => a.id - b.id)) for (const scope of scopesOf(l)) add(scope, l);
  return out;
}

/**
 * The $inc of recent consumption logs in their directory (one scope and day): requests and tokens
 * per second of the day (`r.<second>.c`, `r.<second>.k`), what rpm and tpm count. In the
 * directory, not documents of their own: the directory is updated anyway, and a batch's update
 * statements are its cost (FerretDB rewrites a document per statement).
 */
export function recentIncrement(logs: Indexable[]): Record<string, number> {
  const inc: Record<string, number> = {};
  for (const l of logs) {
    if (l.type !== LogType.CONSUME) continue;
    const r = `r.${l.created_at - dayOf(l.created_at) * DAY}`;
    inc[`${r}.c`] = (inc[`${r}.c`] ?? 0) + 1;
    inc[`${r}.k`] = (inc[`${r}.k`] ?? 0) + l.tokens;
  }
  return inc;
}

const hourField = (hour: number) => `h.${hour - dayOf(hour * HOUR) * 24}`;

/**
 * The $inc of one hour's logs in a directory (`h.<hour of day>.…`): counts, quota and tokens, and
 * the logs counted with the bounds (`w`).
 */
export function hourIncrement(hour: number, logs: Indexable[]): Record<string, number> {
  const h = hourField(hour);
  const inc: Record<string, number> = { [`${h}.n`]: logs.length, [`${h}.w`]: logs.length };
  const add = (key: string, n: number) => {
    inc[key] = (inc[key] ?? 0) + n;
  };
  for (const l of logs) {
    add(`${h}.t${l.type}`, 1);
    if (l.type === LogType.CONSUME) {
      add(`${h}.q`, l.quota);
      add(`${h}.k`, l.tokens);
    }
  }
  return inc;
}

/** The `$min` and `$max` of one hour's logs' `created_at` in a directory (`h.<hour>.a`, `.z`). */
export function hourBounds(
  hour: number,
  logs: Indexable[],
): { min: Record<string, number>; max: Record<string, number> } {
  const h = hourField(hour);
  let a = Number.POSITIVE_INFINITY;
  let z = Number.NEGATIVE_INFINITY;
  for (const l of logs) {
    a = Math.min(a, l.created_at);
    z = Math.max(z, l.created_at);
  }
  return { min: { [`${h}.a`]: a }, max: { [`${h}.z`]: z } };
}

/** The slot of an hour in its day's directory document. */
export const slotOf = (dir: { h?: Record<string, HourSlot> } | undefined, hour: number): HourSlot | undefined =>
  dir?.h?.[String(hour - dayOf(hour * HOUR) * 24)];
