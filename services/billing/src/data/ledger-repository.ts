import { duplicateIndexes } from '@aigw/common';
import type { Collection, Connection } from 'mongoose';
import type { LedgerState } from '../domain/ledger-state.ts';
import type { Sub } from '../domain/subscription-state.ts';

/** One operation recorded in a ledger entry, with what it answered (replays answer the same). */
export interface OpRecord {
  id: string;
  kind: string;
  amount: number;
  result: Record<string, number | string | boolean>;
}

/**
 * One change of a user's money state: the state after one or more operations (group commit:
 * operations of a user that queued while the previous entry was written share the next one).
 * `_id` is `<user>:<seq>`: appending seq+1 is the compare-and-swap (a unique insert is atomic on
 * every MongoDB-compatible server, unlike read-modify-write updates). `op_id` (unique) is the
 * first operation's id; `ops` lists them all (entries written before group commit have none:
 * their one operation is `op_id`/`kind`/`amount`/`result`).
 */
export interface LedgerEntry {
  _id: string;
  user_id: number;
  seq: number;
  op_id: string;
  kind: string;
  amount: number;
  result: Record<string, number | string | boolean>;
  ops?: OpRecord[];
  state: LedgerState;
  /** Holds given back by this change because they expired. */
  expired?: string[];
  /** Subscriptions that ended and left the state with this change (archived in subscription_history). */
  ended_subs?: Record<string, Sub>;
  at: number;
}

/** A subscription that ended and left its user's ledger state: the user's history still lists it. */
interface EndedSubscription {
  _id: string;
  user_id: number;
  sub: Sub;
  at: number;
}

/**
 * A cached pointer to the newest entry (best effort: may lag, never leads), and the last seq the
 * fold deleted or is deleting (ledger-fold.ts): written before any entry goes, so a reader that
 * stops at an old entry learns that the entries after it were folded, not never written.
 */
export interface WalletHead {
  _id: number;
  seq?: number;
  quota?: number;
  used_quota?: number;
  request_count?: number;
  folded?: number;
}

/**
 * Where an operation was recorded, `_id`-keyed by the operation id (the local server only looks
 * documents up by `_id`), with its answer so that a replay needs no second read. Markers written
 * before group commit carry no `kind`: their answer is read from the entry.
 */
interface OpMarker {
  _id: string;
  user_id: number;
  seq: number;
  kind?: string;
  amount?: number;
  result?: OpRecord['result'];
}

/** A recorded operation: its entry's position and its answer. */
export interface RecordedOp extends OpRecord {
  userId: number;
  seq: number;
}

/** The head pointer is rewritten every HEAD_EVERY entries. */
export const HEAD_EVERY = 8;

/**
 * An entry younger than this cannot be followed by a folded one (the fold's horizon is longer), so
 * a probe that stops at it has found the newest; one that stops at an older entry reads the head's
 * `folded` seq first. Also how long a replica may append on a cached head without probing.
 */
export const HEAD_CHECK_AGE_MS = 60 * 60 * 1000;

/**
 * An append that did not happen: the seq was taken (`occupant`: the entry there, written by another
 * replica, or by this one in a round whose reply was lost when the database went away), or, with
 * no occupant, the first operation's id was recorded in another entry (`op_id` is unique).
 */
export type AppendOutcome = 'ok' | { occupant: LedgerEntry | null };

/** The operations of an entry (one for entries written before group commit). */
export const opsOf = (e: LedgerEntry): OpRecord[] =>
  e.ops ?? [{ id: e.op_id, kind: e.kind, amount: e.amount, result: e.result }];

export interface LedgerRepository {
  ensureIndexes(): Promise<void>;
  /** The newest entry of a user, probing forward from `from` when given (null: no entry yet). */
  latest(userId: number, from?: LedgerEntry | null): Promise<LedgerEntry | null>;
  /**
   * Inserts entries (one per user); one outcome per entry, in order. The subscriptions an entry
   * takes out of the state (`ended_subs`) are archived first, so none is lost between the two
   * writes (an entry that then loses its race leaves a record its state still has: readers prefer
   * the state).
   */
  appendMany(entries: LedgerEntry[]): Promise<AppendOutcome[]>;
  /** The archived subscriptions of a user (id -> the subscription as it ended). */
  endedSubscriptions(userId: number): Promise<Record<string, Sub>>;
  /** Writes the markers of entries' operations (existing ones are kept): one insert for all. */
  mark(entries: LedgerEntry[]): Promise<void>;
  /** The recorded operations among `opIds` (one read). */
  recorded(opIds: string[]): Promise<Map<string, RecordedOp>>;
  /**
   * The entry of an operation. `thorough` also searches by op_id when the marker is missing (an
   * entry written before group commit whose writer died before its marker); without it only the
   * `_id` lookup runs.
   */
  findOp(opId: string, thorough?: boolean): Promise<LedgerEntry | null>;
}

/** The markers of an entry's operations, each with its answer. */
const markersOf = (e: LedgerEntry): OpMarker[] =>
  opsOf(e).map((o) => ({
    _id: o.id,
    user_id: e.user_id,
    seq: e.seq,
    kind: o.kind,
    amount: o.amount,
    result: o.result,
  }));

/** Inserts documents, unordered; the indexes of those refused as duplicates (other errors throw). */
async function insertIgnoringDuplicates<T extends { _id: unknown }>(
  coll: Collection<T>,
  docs: T[],
): Promise<Set<number>> {
  const failed = new Set<number>();
  if (docs.length === 0) return failed;
  try {
    await coll.insertMany(docs as never[], { ordered: false });
  } catch (err) {
    const refused = duplicateIndexes(err);
    if (!refused) throw err;
    for (const i of refused) failed.add(i);
  }
  return failed;
}

/** The subscription_history upserts that archive the subscriptions entries take out of the state. */
const archiveWrites = (list: LedgerEntry[]) =>
  list.flatMap((e) =>
    Object.entries(e.ended_subs ?? {}).map(([id, sub]) => ({
      replaceOne: { filter: { _id: id }, replacement: { user_id: e.user_id, sub, at: e.at }, upsert: true },
    })),
  );

/** The wallet head updates that point at appended entries. */
const headWrites = (moved: LedgerEntry[]) =>
  moved.map((e) => ({
    updateOne: {
      filter: { _id: e.user_id },
      update: {
        $set: {
          seq: e.seq,
          quota: e.state.quota,
          used_quota: e.state.used_quota,
          request_count: e.state.request_count,
        },
      },
      upsert: true,
    },
  }));

/** A marker's recorded operation when it carries its answer (markers written before group commit do not). */
const answeredOp = (m: OpMarker): RecordedOp | undefined =>
  m.kind === undefined
    ? undefined
    : { id: m._id, userId: m.user_id, seq: m.seq, kind: m.kind, amount: m.amount ?? 0, result: m.result ?? {} };

/** Where a probe starts from a head: its pointer, or the first entry the fold kept when the pointer lags below it. */
export const probeStart = (head: WalletHead | null): number => Math.max(head?.seq ?? 0, (head?.folded ?? 0) + 1);

/**
 * The newest entry of a user, probing forward from `found` (or from the head when none), and
 * reading the head again whenever the probe stops at an entry older than HEAD_CHECK_AGE_MS: if the
 * fold has gone past it, the entries after it were deleted, and the probe starts again from the
 * first entry the fold kept (never folded: the newest is always kept).
 */
async function probeLatest(
  byId: (userId: number, seq: number) => Promise<LedgerEntry | null>,
  headOf: (userId: number) => Promise<WalletHead | null>,
  now: () => number,
  userId: number,
  from: LedgerEntry | null,
): Promise<LedgerEntry | null> {
  let found = from;
  let start = 0;
  if (!found) {
    const head = await headOf(userId);
    start = probeStart(head);
    found = head ? await byId(userId, start) : null;
  }
  // Each restart follows a fold pass that moved meanwhile: a few at most.
  for (let restarts = 0; restarts < 10; restarts++) {
    let seq = found?.seq ?? 0;
    // Probe forward: the head may lag behind concurrent appends.
    for (;;) {
      const next = await byId(userId, seq + 1);
      if (!next) break;
      found = next;
      seq += 1;
    }
    if (found && now() - found.at < HEAD_CHECK_AGE_MS) return found;
    if (!found && start <= 1) return null;
    const head = await headOf(userId);
    const folded = head?.folded ?? 0;
    if (found && folded < found.seq) return found;
    if (!found && folded === 0) return null;
    // The fold went past what we found: the newest entry is above its folded seq.
    start = probeStart(head);
    found = await byId(userId, start);
  }
  throw new Error(`ledger of user ${userId}: the fold kept moving past the probe`);
}

/** The ledger over `ledger_entries`, `ledger_ops`, `wallets` (heads) and `subscription_history`. */
export function ledgerRepository(conn: Connection, opts: { clock?: () => number } = {}): LedgerRepository {
  const clock = opts.clock ?? Date.now;
  const entries = conn.collection<LedgerEntry>('ledger_entries') as unknown as Collection<LedgerEntry>;
  const heads = conn.collection<WalletHead>('wallets') as unknown as Collection<WalletHead>;
  const markers = conn.collection<OpMarker>('ledger_ops') as unknown as Collection<OpMarker>;
  const history = conn.collection<EndedSubscription>(
    'subscription_history',
  ) as unknown as Collection<EndedSubscription>;
  const byId = (userId: number, seq: number) => entries.findOne({ _id: `${userId}:${seq}` });
  return {
    async ensureIndexes() {
      await entries.createIndex({ op_id: 1 }, { unique: true });
      await history.createIndex({ user_id: 1 });
    },
    latest: (userId, from) => probeLatest(byId, (u) => heads.findOne({ _id: u }), clock, userId, from ?? null),
    async appendMany(list) {
      const archived = archiveWrites(list);
      if (archived.length > 0) await history.bulkWrite(archived as never, { ordered: false });
      const failed = await insertIgnoringDuplicates(entries, list);
      const outcomes: AppendOutcome[] = [];
      for (const [i, entry] of list.entries()) {
        if (!failed.has(i)) {
          outcomes.push('ok');
          continue;
        }
        // Either seq was taken (another writer won the race, or our own write landed and its reply
        // was lost) or op_id was recorded before.
        outcomes.push({ occupant: await byId(entry.user_id, entry.seq) });
      }
      const moved = list.filter((e, i) => !failed.has(i) && e.seq % HEAD_EVERY === 1);
      if (moved.length > 0) {
        // Best effort, not awaited, and only every few entries: readers probe forward from a
        // lagging head, so this only bounds how far a cold read has to probe.
        heads.bulkWrite(headWrites(moved) as never, { ordered: false }).catch(() => undefined);
      }
      return outcomes;
    },
    async mark(list) {
      await insertIgnoringDuplicates(markers, list.flatMap(markersOf));
    },
    async recorded(opIds) {
      const found = new Map<string, RecordedOp>();
      if (opIds.length === 0) return found;
      const docs = await markers.find({ _id: { $in: opIds } }).toArray();
      for (const m of docs) {
        const answered = answeredOp(m);
        if (answered) {
          found.set(m._id, answered);
          continue;
        }
        const entry = await byId(m.user_id, m.seq);
        const op = entry && opsOf(entry).find((o) => o.id === m._id);
        if (op) found.set(m._id, { ...op, userId: m.user_id, seq: m.seq });
      }
      return found;
    },
    async endedSubscriptions(userId) {
      const docs = await history.find({ user_id: userId }).toArray();
      return Object.fromEntries(docs.map((d) => [d._id, d.sub]));
    },
    async findOp(opId, thorough = false) {
      const marker = await markers.findOne({ _id: opId });
      if (marker) return byId(marker.user_id, marker.seq);
      if (!thorough) return null;
      const found = await entries.findOne({ op_id: opId });
      if (found) await insertIgnoringDuplicates(markers, markersOf(found));
      return found;
    },
  };
}
