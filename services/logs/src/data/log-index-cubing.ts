/**
 * The cubes of every scope, computed in the background from everyone's list (a job of the
 * service, log-cubing-job.ts), so that no query of combined filters walks a closed hour or day
 * (domain/log-cubes.ts):
 *
 * - each hour once it has closed: the hour cube of every scope it lists, everyone's (`a`) last,
 *   which marks the hour done (a restart, or a late log that changed its count before its day was
 *   merged, cubes it again; after that, the first query that walks the hour does);
 * - each closed UTC day: the day cube of every scope, merged from its hours' cubes (everyone's
 *   hour cube lists the hour's scopes), without reading the day's entries again.
 *
 * A cube is used only while its hours' counts equal its scope's directory, as one a query
 * computed. Everything is inserted (FerretDB commits each update statement alone, a command's
 * inserts together); a cube a query stored before is replaced.
 */

import {
  addToCube,
  type CubeDoc,
  type CubeRow,
  cubeDoc,
  dayCubeId,
  hourCubeId,
  isUserScope,
  mergeCubes,
  validRows,
} from '../domain/log-cubes.ts';
import { blockDocIds, E, type Entry, scopeAll, scopesOf } from '../domain/log-index.ts';
import { blocksOf, dedupe, entriesOf, type Found, type Hour, type LogIndexStore } from './log-index-store.ts';

const DAY = 86_400;
/** Blocks of everyone's list read at once (200 entries each). */
const BLOCKS_PER_READ = 20;

/** One hour of everyone's list per scope: its logs (positions, as its directory counts them) and its cube's rows. */
type HourTally = Map<string, { n: number; rows: Map<string, CubeRow> }>;

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

/** Everyone's entries of an hour, or null when a position is missing (a batch still writing). */
async function hourEntries(store: LogIndexStore, h: Hour): Promise<Found[] | null> {
  const ks = blocksOf(h.slot.n);
  const found: Found[] = [];
  for (let i = 0; i < ks.length; i += BLOCKS_PER_READ) {
    const ids = ks.slice(i, i + BLOCKS_PER_READ).flatMap((k) => blockDocIds(scopeAll, h.hour, k, h.slot.n));
    found.push(...(await store.byIds(ids)).flatMap(entriesOf));
  }
  return new Set(found.map((x) => x.pos)).size === h.slot.n ? found : null;
}

/** Every scope's logs and cube rows of one hour of everyone's entries (everyone's own included). */
function tallyHour(found: Found[]): HourTally {
  const tally: HourTally = new Map();
  const kept = new Set(dedupe(found));
  for (const x of found) {
    for (const scope of scopesOfEntry(x.e)) {
      let t = tally.get(scope);
      if (!t) {
        t = { n: 0, rows: new Map() };
        tally.set(scope, t);
      }
      t.n++;
      if (kept.has(x)) addToCube(t.rows, x.e, isUserScope(scope));
    }
  }
  return tally;
}

/** Stores the hour cubes of a tally, everyone's after the others' (it marks the hour done). */
async function storeHour(store: LogIndexStore, hour: number, tally: HourTally): Promise<void> {
  const doc = (scope: string, t: { n: number; rows: Map<string, CubeRow> }) =>
    cubeDoc(hourCubeId(scope, hour), [[hour, t.n]], [...t.rows.values()]);
  await store.insertCubes([...tally].filter(([scope]) => scope !== scopeAll).map(([scope, t]) => doc(scope, t)));
  const all = tally.get(scopeAll);
  const scopes = [...tally.keys()].filter((scope) => scope !== scopeAll);
  if (all) await store.insertCubes([{ ...doc(scopeAll, all), s: JSON.stringify(scopes) }]);
}

/** Whether an hour's cubes were computed at its present count (everyone's cube, written last, says so). */
export const hourDone = (h: Hour, doc: CubeDoc | undefined) =>
  doc?.s !== undefined && validRows(doc, [[h.hour, h.slot.n]]) !== undefined;

/**
 * Computes and stores the hour cubes of every scope of some closed hours of everyone's list, an
 * hour at a time. Returns the hours done (an hour with a position missing is left for later).
 */
export async function cubeHours(store: LogIndexStore, hours: Hour[]): Promise<number> {
  let done = 0;
  for (const h of hours) {
    const found = await hourEntries(store, h);
    if (!found) continue;
    await storeHour(store, h.hour, tallyHour(found));
    done++;
  }
  return done;
}

/**
 * Computes and stores the day cubes of every scope of a closed day from its hour cubes (the hours
 * not done are cubed first). Returns the scopes of the day, or null when an hour of everyone's
 * list is not whole (a position missing: no day cube stored).
 */
export async function cubeDay(store: LogIndexStore, day: number): Promise<number | null> {
  const hours = await store.hoursIn(scopeAll, day * DAY, day * DAY + DAY - 1);
  const markIds = hours.map((h) => hourCubeId(scopeAll, h.hour));
  let marks = await store.cubes(markIds);
  const todo = hours.filter((h) => !hourDone(h, marks.get(hourCubeId(scopeAll, h.hour))));
  if ((await cubeHours(store, todo)) < todo.length) return null;
  if (todo.length) marks = await store.cubes(markIds);
  const scopes = new Set<string>();
  for (const m of marks.values()) for (const scope of JSON.parse(m.s ?? '[]') as string[]) scopes.add(scope);
  const perScope = new Map<string, { counts: [number, number][]; rows: CubeRow[][] }>();
  const ids = [...scopes].flatMap((scope) => hours.map((h) => hourCubeId(scope, h.hour)));
  for (const [id, doc] of await store.cubes(ids)) {
    const scope = id.slice(0, id.indexOf('|'));
    const s = perScope.get(scope) ?? { counts: [], rows: [] };
    s.counts.push(...(JSON.parse(doc.n) as [number, number][]));
    s.rows.push(JSON.parse(doc.c) as CubeRow[]);
    perScope.set(scope, s);
  }
  const docs = [...perScope].map(([scope, s]) =>
    cubeDoc(
      dayCubeId(scope, day),
      s.counts.sort((a, b) => a[0] - b[0]),
      mergeCubes(s.rows),
    ),
  );
  await store.insertCubes(docs);
  return docs.length;
}
