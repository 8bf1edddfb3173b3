/**
 * The segment cubes of the current hour (domain/log-segments.ts), computed by the cube job
 * (log-cubing-job.ts) so that a query of combined filters over the current hour walks only its
 * tail: the scopes that completed a segment are recorded per hour by the consumer's writes
 * (`S|<hour>`); for each, the complete segments without a cube are read from the scope's own
 * blocks (positions are the scope's own: everyone's list cannot give them) and their cubes
 * inserted. Everyone's list is left out: its queries are counted from its directories.
 */

import { cubeOf, isUserScope } from '../domain/log-cubes.ts';
import { blockDocIds, dayOf, dirId, slotOf } from '../domain/log-index.ts';
import { type Span, segmentCubeId, segmentDoc, segmentMarkId, spanBlocks, spansOf } from '../domain/log-segments.ts';
import { dedupe, entriesOf, type LogIndexStore } from './log-index-store.ts';

const HOUR = 3_600;
/**
 * The previous hour's segments are still cubed this long into the next hour (until the job has
 * cubed the closed hour whole: CUBE_GRACE after it ends, a pass or two later when it lags).
 */
const PREVIOUS_HOUR_SECONDS = 600;

/** A segment of a scope's hour to cube. */
interface Todo {
  scope: string;
  hour: number;
  n: number;
  span: Span;
}

/** The complete segments without a cube of the scopes that recorded one in an hour. */
async function segmentsTodo(store: LogIndexStore, hour: number): Promise<Todo[]> {
  const [mark] = await store.byIds([segmentMarkId(hour)]);
  const scopes = ((mark as { s?: string[] } | undefined)?.s ?? []).filter((x) => typeof x === 'string');
  if (scopes.length === 0) return [];
  const day = dayOf(hour * HOUR);
  const wanted: Todo[] = [];
  for (const d of await store.byIds(scopes.map((scope) => dirId(scope, day)))) {
    const scope = d._id.slice(0, d._id.indexOf('|'));
    const n = slotOf(d, hour)?.n ?? 0;
    for (const span of spansOf(n, store.segment)) if (span.s !== undefined) wanted.push({ scope, hour, n, span });
  }
  const stored = await store.cubes(wanted.map((t) => segmentCubeId(t.scope, t.hour, t.span)));
  return wanted.filter((t) => !stored.has(segmentCubeId(t.scope, t.hour, t.span)));
}

/** Computes and stores one segment's cube; false when a position is missing (a batch still writing). */
async function cubeSegment(store: LogIndexStore, t: Todo): Promise<boolean> {
  const { span } = t;
  const ids = spanBlocks(span).flatMap((k) => blockDocIds(t.scope, t.hour, k, t.n));
  const found = (await store.byIds(ids)).flatMap(entriesOf).filter((x) => x.pos >= span.from && x.pos < span.to);
  if (new Set(found.map((x) => x.pos)).size !== store.segment) return false;
  const entries = dedupe(found).map((x) => x.e);
  const id = segmentCubeId(t.scope, t.hour, span);
  await store.insertCubes([segmentDoc(id, entries, cubeOf(entries, isUserScope(t.scope)))]);
  return true;
}

/**
 * One bounded pass at `now` (seconds): up to `limit` segments of the current hour (and of the
 * previous one in the first minutes of an hour), newest hour first. Returns the segments done and
 * whether some are left.
 */
export async function cubeSegments(
  store: LogIndexStore,
  now: number,
  limit: number,
): Promise<{ segments: number; more: boolean }> {
  const current = Math.floor(now / HOUR);
  const hours = now - current * HOUR < PREVIOUS_HOUR_SECONDS ? [current, current - 1] : [current];
  const todo: Todo[] = [];
  for (const hour of hours) todo.push(...(await segmentsTodo(store, hour)));
  let segments = 0;
  for (const t of todo.slice(0, limit)) if (await cubeSegment(store, t)) segments++;
  // Segments left with a position missing are not work the next pass at once could do.
  return { segments, more: todo.length > limit && segments > 0 };
}
