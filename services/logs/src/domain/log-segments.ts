/**
 * Segments of an hour (pure part): so that no query of combined filters walks the current hour
 * whole (it has no hour cube until it closes: at 1,000 requests/s it holds 3.6 million logs),
 * a scope's hour is cut into segments of SEGMENT positions of its list, and each complete
 * segment gets a cube of its own (domain/log-cubes.ts rows) with the oldest and newest time of
 * its logs.
 *
 * Positions, not minutes: a scope's positions are taken from its hour count when a batch is
 * listed and never change, so a complete segment's cube never goes stale (a late log takes a
 * new position, in the tail) and needs no count to check it against. A query of an hour without
 * a valid hour cube counts its complete segments from their cubes (a segment the range covers)
 * or skips them (a segment wholly outside it), and walks only the tail (the positions after the
 * last complete segment: fewer than SEGMENT logs) and the segments its range's edges cut.
 */

import type { CubeRow } from './log-cubes.ts';
import { BLOCK, E, type Entry } from './log-index.ts';

/**
 * Positions per segment (a multiple of BLOCK). Walking one costs about 9 µs per entry here, so a
 * query walks at most about 0.1 s of tail; a current hour of 3.6 million logs of a scope is 360
 * segment cubes.
 */
export const SEGMENT = 10_000;

/**
 * A complete segment's cube, keyed by its positions (`q<from>-<to>`, to exclusive): a version with
 * another SEGMENT reads none of the cubes of this one as its own.
 */
export const segmentCubeId = (scope: string, hour: number, span: { from: number; to: number }) =>
  `${scope}|${hour}|q${span.from}-${span.to}`;

/**
 * The scopes of an hour whose lists completed a segment (the cube job's work list, in the hour's
 * day collection; `S` is no scope's first letter).
 */
export const segmentMarkId = (hour: number) => `S|${hour}`;

/** A span of positions of an hour: [from, to), and its segment when it is a whole one. */
export interface Span {
  from: number;
  to: number;
  s?: number;
}

/** The spans of an hour of `n` logs, newest first: the tail, then each complete segment. */
export function spansOf(n: number, size = SEGMENT): Span[] {
  const full = Math.floor(n / size);
  const out: Span[] = [];
  if (n > full * size) out.push({ from: full * size, to: n });
  for (let s = full - 1; s >= 0; s--) out.push({ from: s * size, to: (s + 1) * size, s });
  return out;
}

/** The block numbers a span of positions falls in. */
export function spanBlocks(span: Span): number[] {
  const out: number[] = [];
  for (let k = Math.floor(span.from / BLOCK); k * BLOCK < span.to; k++) out.push(k);
  return out;
}

/** The segments a listing of positions [before, after) of a scope's hour completed. */
export function segmentsCompleted(before: number, after: number, size = SEGMENT): number[] {
  const out: number[] = [];
  for (let s = Math.floor(before / size); (s + 1) * size <= after; s++) out.push(s);
  return out;
}

/** A segment's cube as stored: its rows (JSON text), its logs and the oldest and newest time. */
export interface SegmentDoc {
  _id: string;
  c: string;
  n: number;
  a: number;
  z: number;
}

/** A segment's cube from its entries (deduplicated). */
export function segmentDoc(id: string, entries: Entry[], rows: CubeRow[]): SegmentDoc {
  let a = Number.POSITIVE_INFINITY;
  let z = Number.NEGATIVE_INFINITY;
  for (const e of entries) {
    a = Math.min(a, e[E.createdAt]);
    z = Math.max(z, e[E.createdAt]);
  }
  return { _id: id, c: JSON.stringify(rows), n: entries.length, a, z };
}

/** A stored segment cube's parts, or undefined when the document is not one. */
export function segmentOf(doc: unknown): { rows: () => CubeRow[]; a: number; z: number } | undefined {
  const d = doc as Partial<SegmentDoc> | undefined;
  if (!d || typeof d.c !== 'string' || typeof d.a !== 'number' || typeof d.z !== 'number') return undefined;
  const c = d.c;
  return { rows: () => JSON.parse(c) as CubeRow[], a: d.a, z: d.z };
}

/** Where a segment's logs lie against a range: all inside, all outside, or across an edge. */
export function placeOf(seg: { a: number; z: number }, lo: number, hi: number): 'in' | 'out' | 'cut' {
  if (seg.a >= lo && seg.z <= hi) return 'in';
  if (seg.z < lo || seg.a > hi) return 'out';
  return 'cut';
}
