/**
 * The day cubes of every scope of a closed UTC day, computed in the background (a pass of
 * log-cleanup.ts) from everyone's list of the day, so that the first query of combined filters
 * over a range counts its whole days instead of walking them (domain/log-cubes.ts). A cube is
 * used only while its hours' counts equal its scope's directory, as one a query computed.
 */

import { addToCube, type CubeDoc, type CubeRow, cubeDoc, dayCubeId, isUserScope } from '../domain/log-cubes.ts';
import { blockDocIds, E, type Entry, scopeAll, scopesOf } from '../domain/log-index.ts';
import { blocksOf, dedupe, entriesOf, type Found, type LogIndexStore } from './log-index-store.ts';

const DAY = 86_400;
/** Blocks of everyone's list read at once (200 entries each). */
const BLOCKS_PER_READ = 20;

/** Per scope: its logs per hour (positions, as its directory counts them) and its cube's rows. */
type Tally = Map<string, { counts: Map<number, number>; rows: Map<string, CubeRow> }>;

/** The scopes an entry is listed in (as domain/log-index.ts lists a log). */
const scopesOfEntry = (e: Entry) =>
  scopesOf({
    type: e[E.type],
    user_id: e[E.userId] ?? 0,
    model_name: e[E.model],
    channel: e[E.channel],
    group: e[E.group],
    token_name: e[E.tokenName],
  });

/** Adds one hour of everyone's entries (every position) to the other scopes' tallies. */
function tallyHour(tally: Tally, hour: number, found: Found[]): void {
  const kept = new Set(dedupe(found));
  for (const x of found) {
    for (const scope of scopesOfEntry(x.e)) {
      if (scope === scopeAll) continue;
      let t = tally.get(scope);
      if (!t) {
        t = { counts: new Map(), rows: new Map() };
        tally.set(scope, t);
      }
      t.counts.set(hour, (t.counts.get(hour) ?? 0) + 1);
      if (kept.has(x)) addToCube(t.rows, x.e, isUserScope(scope));
    }
  }
}

/**
 * Computes and stores the day cubes of every scope of a day. Returns the scopes stored, or null
 * when everyone's list of the day is not whole (a position missing: nothing stored).
 */
export async function cubeDay(store: LogIndexStore, day: number): Promise<number | null> {
  const tally: Tally = new Map();
  for (const h of await store.hoursIn(scopeAll, day * DAY, day * DAY + DAY - 1)) {
    const ks = blocksOf(h.slot.n);
    const found: Found[] = [];
    for (let i = 0; i < ks.length; i += BLOCKS_PER_READ) {
      const ids = ks.slice(i, i + BLOCKS_PER_READ).flatMap((k) => blockDocIds(scopeAll, h.hour, k, h.slot.n));
      const docs = await store.byIds(ids);
      found.push(...docs.flatMap(entriesOf));
    }
    if (new Set(found.map((x) => x.pos)).size !== h.slot.n) return null;
    tallyHour(tally, h.hour, found);
  }
  const docs: CubeDoc[] = [...tally].map(([scope, t]) =>
    cubeDoc(
      dayCubeId(scope, day),
      [...t.counts].sort((a, b) => a[0] - b[0]),
      [...t.rows.values()],
    ),
  );
  for (let i = 0; i < docs.length; i += 1_000) await store.saveCubes(docs.slice(i, i + 1_000));
  return docs.length;
}
