/**
 * Pages and quota of filters the hour counts cannot answer (a user and a model, a group, a token
 * name and errors, ...), read from one scope's list (log-index-plan.ts chooses it). Whole UTC days
 * and whole hours are counted from their cubes (domain/log-cubes.ts); hours without a valid cube,
 * and hours the range cuts, are walked (their blocks read, the filters applied to the entries),
 * and the cubes of the closed ones walked whole are stored for the next query. A page then reads
 * only the blocks of the hours it falls in.
 */

import {
  type CubeDoc,
  type CubeRow,
  cubeable,
  cubeDoc,
  cubeOf,
  dayCubeId,
  hourCubeId,
  isUserScope,
  mergeCubes,
  tally,
  validRows,
} from '../domain/log-cubes.ts';
import { dayOf, E, type EntryFilter, matches } from '../domain/log-index.ts';
import type { Span } from '../domain/log-segments.ts';
import { freshSegments, type Part, type Piece, segmentParts, type Walked, walkPieces } from './log-index-pieces.ts';
import { type Found, type Hour, inRange, type LogIndexStore, type LogRef, refOf } from './log-index-store.ts';

const DAY = 86_400;
const HOUR = 3_600;

/**
 * Matches of an hour (or of a span of its positions: a segment, the tail) or of a whole day of the
 * range, newest first; `found`: the entries when walked.
 */
interface Unit {
  hour?: number;
  span?: Span;
  day?: number;
  n: number;
  quota: number;
  found?: Found[];
}

const countsOf = (hours: Hour[]): [number, number][] =>
  hours.map((h): [number, number] => [h.hour, h.slot.n]).sort((a, b) => a[0] - b[0]);

const matchingUnit = (hour: number, list: Found[], f: EntryFilter, lo: number, hi: number, span?: Span): Unit => {
  const found = list.filter((x) => inRange(x, lo, hi) && matches(x.e, f));
  return { hour, span, n: found.length, quota: found.reduce((s, x) => s + x.e[E.quota], 0), found };
};

/** The store, and the time before which hours and days are closed (their cubes are kept). */
interface Ctx {
  store: LogIndexStore;
  now: () => number;
}

/** Every block of some hours of a scope, per hour (whole hours). */
async function walkHours(ctx: Ctx, scope: string, hours: Hour[]): Promise<Map<number, Walked>> {
  const walked = await walkPieces(
    ctx.store,
    scope,
    hours.map((h) => ({ hour: h.hour, n: h.slot.n })),
  );
  return new Map(hours.map((h, i) => [h.hour, walked[i] as Walked]));
}

/** Cubes read already (`null`: not stored), with the query's directories. */
type Known = Map<string, CubeDoc | null>;

/** Cubes by id: those read already, the others read now. */
async function cubesOf(ctx: Ctx, ids: string[], known: Known): Promise<Map<string, CubeDoc>> {
  const out = await ctx.store.cubes(ids.filter((id) => !known.has(id)));
  for (const id of ids) {
    const d = known.get(id);
    if (d) out.set(id, d);
  }
  return out;
}

/** Hour units of some hours: from their valid cubes, else walked (with the cubes of the closed ones). */
async function hourUnits(
  ctx: Ctx,
  scope: string,
  f: EntryFilter,
  range: [number, number],
  hours: Hour[],
  known: Known = new Map(),
) {
  const docs = await cubesOf(
    ctx,
    hours.filter((h) => h.whole).map((h) => hourCubeId(scope, h.hour)),
    known,
  );
  const rows = new Map<number, CubeRow[]>();
  for (const h of hours) {
    const r = h.whole ? validRows(docs.get(hourCubeId(scope, h.hour)), countsOf([h])) : undefined;
    if (r) rows.set(h.hour, r);
  }
  const rest = hours.filter((h) => !rows.has(h.hour));
  const parts = await segmentParts(ctx.store, scope, rest, range);
  const pieces = rest.flatMap((h) => piecesOf(h, parts.get(h.hour), ['cut', 'none']));
  const walkedList = await walkPieces(ctx.store, scope, pieces);
  const walked = new Map(pieces.map((p, i) => [pieceKey(p.hour, p.span), walkedList[i] as Walked]));
  // A walked hour's cube is kept when whole in the range, closed and every position found.
  const keepable = (h: Hour, w: Walked | undefined): w is Walked =>
    h.whole && w?.complete === true && (h.hour + 1) * HOUR <= ctx.now();
  const fresh = new Map<number, CubeRow[]>();
  const units = hours.flatMap((h): Unit[] => {
    const r = rows.get(h.hour);
    if (r) return [{ hour: h.hour, ...tally(r, f) }];
    const ps = parts.get(h.hour);
    if (ps) return ps.flatMap((p) => partUnit(h.hour, p, walked.get(pieceKey(h.hour, p.span)), f, range));
    const w = walked.get(pieceKey(h.hour));
    if (keepable(h, w))
      fresh.set(
        h.hour,
        cubeOf(
          w.all.map((x) => x.e),
          isUserScope(scope),
        ),
      );
    return [matchingUnit(h.hour, w?.all ?? [], f, range[0], range[1])];
  });
  // The complete segments walked in hours whose cube is not kept (the current hour's, cut hours'):
  // their cubes are stored for the next query.
  const open = pieces.map((p, i) => [p, walkedList[i] as Walked] as const).filter(([p]) => !fresh.has(p.hour));
  const segments = freshSegments(
    scope,
    ctx.store.segment,
    open.map(([p]) => p),
    open.map(([, w]) => w),
  );
  if (segments.length) await ctx.store.insertCubes(segments);
  return { units, rows, fresh };
}

const pieceKey = (hour: number, span?: Span) => `${hour}:${span ? span.from : 'all'}`;

/** The pieces of an hour to walk: the whole hour, or the spans of the parts in `places`. */
const piecesOf = (h: Hour, parts: Part[] | undefined, places: Part['place'][]): Piece[] =>
  parts
    ? parts.filter((p) => places.includes(p.place)).map((p) => ({ hour: h.hour, n: h.slot.n, span: p.span }))
    : [{ hour: h.hour, n: h.slot.n }];

/** A span's unit: none when outside the range, from its segment's cube when inside, else walked. */
function partUnit(hour: number, p: Part, w: Walked | undefined, f: EntryFilter, range: [number, number]): Unit[] {
  if (p.place === 'out') return [];
  if (p.place === 'in' && p.rows) return [{ hour, span: p.span, ...tally(p.rows(), f) }];
  return [matchingUnit(hour, w?.all ?? [], f, range[0], range[1], p.span)];
}

/** A range's hours per UTC day, and the days it covers whole. */
function daysIn(hours: Hour[], [lo, hi]: [number, number]) {
  const perDay = new Map<number, Hour[]>();
  for (const h of hours) {
    const l = perDay.get(dayOf(h.hour * HOUR));
    if (l) l.push(h);
    else perDay.set(dayOf(h.hour * HOUR), [h]);
  }
  const wholeDays = [...perDay.keys()].filter((d) => d * DAY >= lo && d * DAY + DAY - 1 <= hi);
  return { perDay, wholeDays };
}

/**
 * The range's units, newest first: each whole day by its cube when valid, the other hours by
 * theirs or walked. Cubes computed here are stored: a closed whole day's (when every hour of it
 * has rows), else the closed hours'.
 */
async function unitsOf(ctx: Ctx, scope: string, f: EntryFilter, range: [number, number], hours: Hour[], known: Known) {
  if (!cubeable(scope, f)) {
    const walked = await walkHours(ctx, scope, hours);
    return hours.map((h) => matchingUnit(h.hour, walked.get(h.hour)?.all ?? [], f, range[0], range[1]));
  }
  const { perDay, wholeDays } = daysIn(hours, range);
  const dayDocs = await cubesOf(
    ctx,
    wholeDays.map((d) => dayCubeId(scope, d)),
    known,
  );
  const dayUnits = new Map<number, Unit>();
  for (const d of wholeDays) {
    const r = validRows(dayDocs.get(dayCubeId(scope, d)), countsOf(perDay.get(d) ?? []));
    if (r) dayUnits.set(d, { day: d, ...tally(r, f) });
  }
  const rest = hours.filter((h) => !dayUnits.has(dayOf(h.hour * HOUR)));
  const { units, rows, fresh } = await hourUnits(ctx, scope, f, range, rest, known);
  const newDays = wholeDays.filter((d) => !dayUnits.has(d));
  await saveCubes(ctx, scope, perDay, newDays, rows, fresh);
  // An hour read by segments is several units (its spans, newest first).
  const byHour = new Map<number, Unit[]>();
  for (const u of units) byHour.set(u.hour ?? 0, [...(byHour.get(u.hour ?? 0) ?? []), u]);
  const out: Unit[] = [];
  for (const h of hours) {
    const du = dayUnits.get(dayOf(h.hour * HOUR));
    if (!du) out.push(...(byHour.get(h.hour) ?? []));
    else if (out[out.length - 1] !== du) out.push(du);
  }
  return out;
}

/**
 * Stores the cubes a walk computed: of each closed day in `days` whose every hour has rows (read
 * or computed), the day's; of the other hours computed, the hour's.
 */
async function saveCubes(
  ctx: Ctx,
  scope: string,
  perDay: Map<number, Hour[]>,
  days: number[],
  rows: Map<number, CubeRow[]>,
  fresh: Map<number, CubeRow[]>,
): Promise<void> {
  const docs = [];
  const covered = new Set<number>();
  for (const d of days) {
    const hs = perDay.get(d) ?? [];
    if ((d + 1) * DAY > ctx.now() || !hs.every((h) => rows.has(h.hour) || fresh.has(h.hour))) continue;
    const all = hs.map((h) => rows.get(h.hour) ?? (fresh.get(h.hour) as CubeRow[]));
    docs.push(cubeDoc(dayCubeId(scope, d), countsOf(hs), mergeCubes(all)));
    covered.add(d);
  }
  // An hour cube's validator is the hour's count in its directory (what a later query compares).
  const slots = new Map([...perDay.values()].flat().map((h) => [h.hour, h.slot.n]));
  for (const [hour, r] of fresh) {
    if (covered.has(dayOf(hour * HOUR))) continue;
    docs.push(cubeDoc(hourCubeId(scope, hour), [[hour, slots.get(hour) ?? 0]], r));
  }
  if (docs.length) await ctx.store.saveCubes(docs);
}

/** The units of a day a page starts in: its hours, by their cubes or walked. */
async function expandDay(ctx: Ctx, scope: string, f: EntryFilter, range: [number, number], hours: Hour[], day: number) {
  const dayHours = hours.filter((h) => dayOf(h.hour * HOUR) === day);
  const { units, fresh } = await hourUnits(ctx, scope, f, range, dayHours);
  if (fresh.size) await saveCubes(ctx, scope, new Map([[day, dayHours]]), [], new Map(), fresh);
  return units;
}

/**
 * The hour units a page of `size` after `skip` matches falls in (the days it falls in expanded to
 * their hours), and the page's offset in the first of them.
 */
async function pageHours(
  ctx: Ctx,
  scope: string,
  f: EntryFilter,
  range: [number, number],
  hours: Hour[],
  units: Unit[],
  skip: number,
  size: number,
): Promise<{ covering: Unit[]; offset: number }> {
  for (;;) {
    const covering: Unit[] = [];
    let seen = 0;
    let offset = 0;
    let day: Unit | undefined;
    for (const u of units) {
      if (seen >= skip + size) break;
      if (seen + u.n > skip) {
        if (u.day !== undefined) {
          day = u;
          break;
        }
        if (covering.length === 0) offset = skip - seen;
        covering.push(u);
      }
      seen += u.n;
    }
    if (!day) return { covering, offset };
    units.splice(units.indexOf(day), 1, ...(await expandDay(ctx, scope, f, range, hours, day.day as number)));
  }
}

/** `now`: hours and days that ended before it are closed (their cubes are kept). */
export function filteredReads(store: LogIndexStore, now: () => number) {
  const ctx: Ctx = { store, now };
  return {
    /** Every matching entry of some hours, newest first (no cubes: the last minute's rpm and tpm). */
    async walk(scope: string, f: EntryFilter, range: [number, number], hours: Hour[]): Promise<Found[]> {
      // Segments wholly outside the range are skipped; the others are walked (tokens are not in cubes).
      const parts = await segmentParts(ctx.store, scope, hours, range);
      const pieces = hours.flatMap((h) => piecesOf(h, parts.get(h.hour), ['in', 'cut', 'none']));
      const walked = await walkPieces(ctx.store, scope, pieces);
      return pieces.flatMap((p, i) => matchingUnit(p.hour, walked[i]?.all ?? [], f, range[0], range[1]).found ?? []);
    },

    /** One page of a filtered scope's list and the number of matches. */
    async page(
      scope: string,
      f: EntryFilter,
      range: [number, number],
      hours: Hour[],
      skip: number,
      size: number,
      known: Known = new Map(),
    ): Promise<{ refs: LogRef[]; total: number }> {
      const units = await unitsOf(ctx, scope, f, range, hours, known);
      const total = units.reduce((s, u) => s + u.n, 0);
      const { covering, offset } = await pageHours(ctx, scope, f, range, hours, units, skip, size);
      // The hours (or segments) the page falls in, known by their counts: their blocks read at once.
      const slotN = new Map(hours.map((h) => [h.hour, h.slot.n]));
      const toWalk = covering
        .filter((u) => !u.found)
        .map((u): Piece => ({ hour: u.hour ?? 0, n: slotN.get(u.hour ?? 0) ?? 0, span: u.span }));
      const walkedList = await walkPieces(ctx.store, scope, toWalk);
      const walked = new Map(toWalk.map((p, i) => [pieceKey(p.hour, p.span), walkedList[i]]));
      const found = covering.flatMap(
        (u) =>
          u.found ??
          matchingUnit(u.hour ?? 0, walked.get(pieceKey(u.hour ?? 0, u.span))?.all ?? [], f, range[0], range[1])
            .found ??
          [],
      );
      return { refs: found.slice(offset, offset + size).map(refOf), total };
    },

    /** The quota of a filtered scope's matches in a range. */
    async quota(
      scope: string,
      f: EntryFilter,
      range: [number, number],
      hours: Hour[],
      known: Known = new Map(),
    ): Promise<number> {
      const units = await unitsOf(ctx, scope, f, range, hours, known);
      return units.reduce((s, u) => s + u.quota, 0);
    },
  };
}

export type FilteredReads = ReturnType<typeof filteredReads>;
