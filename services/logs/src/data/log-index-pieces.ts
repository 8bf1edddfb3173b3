/**
 * Walking a scope's hours in pieces (domain/log-segments.ts): an hour without a valid hour cube
 * that holds complete segments with cubes is read as its spans of positions: each segment its
 * range covers counted from its cube, each one wholly outside the range skipped, and only the
 * tail and the segments the range's edges cut walked (their blocks read by `_id`). The cubes of
 * complete segments a query walks are stored for the next one.
 */

import { type CubeRow, cubeOf, isUserScope } from '../domain/log-cubes.ts';
import { blockDocIds } from '../domain/log-index.ts';
import {
  placeOf,
  type SegmentDoc,
  type Span,
  segmentCubeId,
  segmentDoc,
  segmentOf,
  spanBlocks,
  spansOf,
} from '../domain/log-segments.ts';
import { blocksOf, byNewest, dedupe, entriesOf, type Found, type Hour, type LogIndexStore } from './log-index-store.ts';

/** An hour of a scope to walk: the whole of it, or a span of its positions. */
export interface Piece {
  hour: number;
  /** The hour's count in its directory. */
  n: number;
  span?: Span;
}

/** A piece's entries as walked: deduplicated, newest first, and whether every position was found. */
export interface Walked {
  all: Found[];
  complete: boolean;
}

/**
 * A span of an hour read by segments: `in` (its cube counts it), `out` (none of its logs lie in
 * the range), `cut` (a complete segment across an edge of the range) or `none` (the tail, or a
 * segment without a cube): the last two are walked.
 */
export interface Part {
  span: Span;
  place: 'in' | 'out' | 'cut' | 'none';
  rows?: () => CubeRow[];
}

const blocksOfPiece = (p: Piece) => (p.span ? spanBlocks(p.span) : blocksOf(p.n));
const holds = (p: Piece, pos: number) => !p.span || (pos >= p.span.from && pos < p.span.to);
const sizeOf = (p: Piece) => (p.span ? p.span.to - p.span.from : p.n);

/** The entries of some pieces of a scope's hours (one read), each piece's in the order given. */
export async function walkPieces(store: LogIndexStore, scope: string, pieces: Piece[]): Promise<Walked[]> {
  const ids = pieces.flatMap((p) => blocksOfPiece(p).flatMap((k) => blockDocIds(scope, p.hour, k, p.n)));
  const perHour = new Map<number, Found[]>();
  for (const d of ids.length ? await store.byIds(ids) : []) {
    for (const x of entriesOf(d)) {
      const l = perHour.get(x.hour);
      if (l) l.push(x);
      else perHour.set(x.hour, [x]);
    }
  }
  return pieces.map((p) => {
    const list = (perHour.get(p.hour) ?? []).filter((x) => holds(p, x.pos)).sort(byNewest);
    return { all: dedupe(list), complete: new Set(list.map((x) => x.pos)).size === sizeOf(p) };
  });
}

/**
 * The parts of the hours that hold complete segments with cubes (hour -> its spans, newest
 * first); an hour of which no segment has a cube is not in the answer (walked whole, as before
 * segments).
 */
export async function segmentParts(
  store: LogIndexStore,
  scope: string,
  hours: Hour[],
  [lo, hi]: [number, number],
): Promise<Map<number, Part[]>> {
  const big = hours.filter((h) => h.slot.n >= store.segment);
  const spans = new Map(big.map((h) => [h.hour, spansOf(h.slot.n, store.segment)]));
  const ids = big.flatMap((h) =>
    (spans.get(h.hour) ?? []).flatMap((sp) => (sp.s === undefined ? [] : [segmentCubeId(scope, h.hour, sp)])),
  );
  const docs = await store.cubes(ids);
  const out = new Map<number, Part[]>();
  for (const h of big) {
    let cubed = false;
    const parts = (spans.get(h.hour) ?? []).map((span): Part => {
      const seg = span.s === undefined ? undefined : segmentOf(docs.get(segmentCubeId(scope, h.hour, span)));
      if (!seg) return { span, place: 'none' };
      cubed = true;
      return { span, place: placeOf(seg, lo, hi), rows: seg.rows };
    });
    if (cubed) out.set(h.hour, parts);
  }
  return out;
}

/**
 * The cubes of the complete segments among walked pieces (every position of the segment found):
 * the first query that walks one stores it, as the cube job does for the current hour.
 */
export function freshSegments(scope: string, size: number, pieces: Piece[], walked: Walked[]): SegmentDoc[] {
  const out: SegmentDoc[] = [];
  pieces.forEach((p, i) => {
    const perSegment = new Map<number, Found[]>();
    for (const x of walked[i]?.all ?? []) {
      const s = Math.floor(x.pos / size);
      const l = perSegment.get(s);
      if (l) l.push(x);
      else perSegment.set(s, [x]);
    }
    for (const [s, list] of perSegment) {
      if ((s + 1) * size > p.n || list.length !== size || (p.span && p.span.s !== s)) continue;
      const entries = list.map((x) => x.e);
      const id = segmentCubeId(scope, p.hour, { from: s * size, to: (s + 1) * size });
      out.push(segmentDoc(id, entries, cubeOf(entries, isUserScope(scope))));
    }
  });
  return out;
}
