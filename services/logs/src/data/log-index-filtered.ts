/**
 * Pages and quota of filters the hour counts cannot answer (a user and a model, a group, a token
 * name and errors, ...), read from one scope's list (log-index-plan.ts chooses it). Whole UTC days
 * and whole hours are counted from their cubes (domain/log-cubes.ts); hours without a valid cube,
 * and hours the range cuts, are walked (their blocks read, the filters applied to the entries),
 * and the cubes of the closed ones walked whole are stored for the next query. A page then reads
 * only the blocks of the hours it falls in.
 */

import {
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
import { blockId, dayOf, E, type EntryFilter, matches } from '../domain/log-index.ts';
import {
  blocksOf,
  byNewest,
  dedupe,
  entriesOf,
  type Found,
  type Hour,
  inRange,
  type LogIndexStore,
  type LogRef,
  refOf,
} from './log-index-store.ts';

const DAY = 86_400;
const HOUR = 3_600;

/** Matches of an hour or a whole day of the range, newest first; `found`: the hour's entries when walked. */
interface Unit {
  hour?: number;
  day?: number;
  n: number;
  quota: number;
  found?: Found[];
}

/** An hour's entries as walked: deduplicated, newest first, and whether every position was found. */
interface Walked {
  all: Found[];
  complete: boolean;
}

const countsOf = (hours: Hour[]): [number, number][] =>
  hours.map((h): [number, number] => [h.hour, h.slot.n]).sort((a, b) => a[0] - b[0]);

const matchingUnit = (hour: number, list: Found[], f: EntryFilter, lo: number, hi: number): Unit => {
  const found = list.filter((x) => inRange(x, lo, hi) && matches(x.e, f));
  return { hour, n: found.length, quota: found.reduce((s, x) => s + x.e[E.quota], 0), found };
};

/** `now`: hours and days that ended before it are closed (their cubes are stored). */
export function filteredReads(store: LogIndexStore, now: () => number) {
  /** Every block of some hours of a scope, per hour. */
  async function walkHours(scope: string, hours: Hour[]): Promise<Map<number, Walked>> {
    const ids = hours.flatMap(({ hour, slot }) => blocksOf(slot.n).map((k) => blockId(scope, hour, k)));
    const perHour = new Map<number, Found[]>();
    for (const d of ids.length ? await store.byIds(ids) : []) {
      for (const x of entriesOf(d)) {
        const l = perHour.get(x.hour);
        if (l) l.push(x);
        else perHour.set(x.hour, [x]);
      }
    }
    const out = new Map<number, Walked>();
    for (const h of hours) {
      const list = (perHour.get(h.hour) ?? []).sort(byNewest);
      out.set(h.hour, { all: dedupe(list), complete: new Set(list.map((x) => x.pos)).size === h.slot.n });
    }
    return out;
  }

  /** The cube of a walked hour, when it can be kept: whole in the range, closed, every position found. */
  const keepable = (h: Hour, w: Walked | undefined) => h.whole && w?.complete && (h.hour + 1) * HOUR <= now();

  /** Hour units of some hours: from their valid cubes, else walked (the closed ones' cubes stored). */
  async function hourUnits(scope: string, f: EntryFilter, lo: number, hi: number, hours: Hour[]) {
    const docs = await store.cubes(hours.filter((h) => h.whole).map((h) => hourCubeId(scope, h.hour)));
    const rows = new Map<number, CubeRow[]>();
    for (const h of hours) {
      const r = h.whole ? validRows(docs.get(hourCubeId(scope, h.hour)), countsOf([h])) : undefined;
      if (r) rows.set(h.hour, r);
    }
    const walked = await walkHours(
      scope,
      hours.filter((h) => !rows.has(h.hour)),
    );
    const fresh = new Map<number, CubeRow[]>();
    const units = hours.map((h): Unit => {
      const r = rows.get(h.hour);
      if (r) return { hour: h.hour, ...tally(r, f) };
      const w = walked.get(h.hour);
      if (keepable(h, w))
        fresh.set(
          h.hour,
          cubeOf(
            (w as Walked).all.map((x) => x.e),
            isUserScope(scope),
          ),
        );
      return matchingUnit(h.hour, w?.all ?? [], f, lo, hi);
    });
    return { units, rows, fresh };
  }

  /**
   * The range's units, newest first: each whole day by its cube when valid, the other hours by
   * theirs or walked. Cubes computed here are stored: a closed whole day's (when every hour of it
   * has rows), else the closed hours'.
   */
  async function unitsOf(scope: string, f: EntryFilter, lo: number, hi: number, hours: Hour[]): Promise<Unit[]> {
    if (!cubeable(scope, f)) {
      const walked = await walkHours(scope, hours);
      return hours.map((h) => matchingUnit(h.hour, walked.get(h.hour)?.all ?? [], f, lo, hi));
    }
    const perDay = new Map<number, Hour[]>();
    for (const h of hours) {
      const l = perDay.get(dayOf(h.hour * HOUR));
      if (l) l.push(h);
      else perDay.set(dayOf(h.hour * HOUR), [h]);
    }
    const wholeDays = [...perDay.keys()].filter((d) => d * DAY >= lo && d * DAY + DAY - 1 <= hi);
    const dayDocs = await store.cubes(wholeDays.map((d) => dayCubeId(scope, d)));
    const dayUnits = new Map<number, Unit>();
    for (const d of wholeDays) {
      const r = validRows(dayDocs.get(dayCubeId(scope, d)), countsOf(perDay.get(d) ?? []));
      if (r) dayUnits.set(d, { day: d, ...tally(r, f) });
    }
    const rest = hours.filter((h) => !dayUnits.has(dayOf(h.hour * HOUR)));
    const { units, rows, fresh } = await hourUnits(scope, f, lo, hi, rest);
    await saveCubes(scope, perDay, wholeDays, dayUnits, rows, fresh);
    const byHour = new Map(units.map((u) => [u.hour, u]));
    const out: Unit[] = [];
    for (const h of hours) {
      const day = dayOf(h.hour * HOUR);
      const du = dayUnits.get(day);
      if (!du) out.push(byHour.get(h.hour) as Unit);
      else if (out[out.length - 1] !== du) out.push(du);
    }
    return out;
  }

  /** Stores the cubes a walk computed (see unitsOf). */
  async function saveCubes(
    scope: string,
    perDay: Map<number, Hour[]>,
    wholeDays: number[],
    dayUnits: Map<number, Unit>,
    rows: Map<number, CubeRow[]>,
    fresh: Map<number, CubeRow[]>,
  ): Promise<void> {
    const docs = [];
    const covered = new Set<number>();
    for (const d of wholeDays) {
      const hs = perDay.get(d) ?? [];
      if (dayUnits.has(d) || (d + 1) * DAY > now() || !hs.every((h) => rows.has(h.hour) || fresh.has(h.hour))) continue;
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
    if (docs.length) await store.saveCubes(docs);
  }

  /** The matching entries of one hour, newest first. */
  async function walkHour(scope: string, f: EntryFilter, lo: number, hi: number, h: Hour): Promise<Found[]> {
    return matchingUnit(h.hour, (await walkHours(scope, [h])).get(h.hour)?.all ?? [], f, lo, hi).found ?? [];
  }

  return {
    /** Every matching entry of some hours, newest first (no cubes: the last minute's rpm and tpm). */
    async walk(scope: string, f: EntryFilter, lo: number, hi: number, hours: Hour[]): Promise<Found[]> {
      const walked = await walkHours(scope, hours);
      return hours.flatMap((h) => matchingUnit(h.hour, walked.get(h.hour)?.all ?? [], f, lo, hi).found ?? []);
    },

    /** One page of a filtered scope's list and the number of matches. */
    async page(
      scope: string,
      f: EntryFilter,
      range: [number, number],
      hours: Hour[],
      skip: number,
      size: number,
    ): Promise<{ refs: LogRef[]; total: number }> {
      const [lo, hi] = range;
      const units = await unitsOf(scope, f, lo, hi, hours);
      const total = units.reduce((s, u) => s + u.n, 0);
      const out: Found[] = [];
      let left = skip;
      for (let i = 0; i < units.length && out.length < size; i++) {
        const u = units[i] as Unit;
        if (left >= u.n) {
          left -= u.n;
          continue;
        }
        if (u.day !== undefined) {
          // The page starts in this day: its hours, by their cubes or walked.
          const dayHours = hours.filter((h) => dayOf(h.hour * HOUR) === u.day);
          const { units: hs, fresh } = await hourUnits(scope, f, lo, hi, dayHours);
          if (fresh.size) await saveCubes(scope, new Map([[u.day, dayHours]]), [], new Map(), new Map(), fresh);
          units.splice(i, 1, ...hs);
          i--;
          continue;
        }
        const found = u.found ?? (await walkHour(scope, f, lo, hi, hours.find((h) => h.hour === u.hour) as Hour));
        out.push(...found.slice(left, left + size - out.length));
        left = 0;
      }
      return { refs: out.map(refOf), total };
    },

    /** The quota of a filtered scope's matches in a range. */
    async quota(scope: string, f: EntryFilter, range: [number, number], hours: Hour[]): Promise<number> {
      const units = await unitsOf(scope, f, range[0], range[1], hours);
      return units.reduce((s, u) => s + u.quota, 0);
    },
  };
}

export type FilteredReads = ReturnType<typeof filteredReads>;
