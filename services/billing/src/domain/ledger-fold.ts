import { type LedgerEntry, opsOf } from '../data/ledger-repository.ts';

/** Per operation kind, how many were folded and the sum of their amounts. */
export type KindTotals = Record<string, { count: number; sum: number }>;

/**
 * What the fold keeps of a user's entries `from`..`seq` (and of every earlier checkpoint): the
 * history totals. `_id` is `<user>:ck<seq>`; `done` once the entries it folded are deleted.
 */
export interface LedgerCheckpoint {
  _id: string;
  user_id: number;
  /** The last folded seq (the head's `folded` once this checkpoint is the user's current one). */
  seq: number;
  /** The first seq this pass folded (the entries after the previous checkpoint). */
  from: number;
  entries: number;
  kinds: KindTotals;
  done: boolean;
  at: number;
}

/**
 * The fold's storage steps, in the order a pass runs them for a user; each is idempotent, so a
 * pass that dies after any of them is finished by the next (data/ledger-fold-store.ts).
 */
export interface FoldStore {
  /** Users with a head (`wallets`), by id after `after`, at most `limit`. */
  users(after: number, limit: number): Promise<number[]>;
  /** The user's head: its pointer and the last folded seq (0: never folded). */
  head(userId: number): Promise<{ seq: number; folded: number }>;
  checkpoint(userId: number, seq: number): Promise<LedgerCheckpoint | null>;
  /** The user's entries at these seqs that exist, by seq. */
  entries(userId: number, seqs: number[]): Promise<LedgerEntry[]>;
  /** Step 1: writes (or rewrites) a checkpoint. */
  writeCheckpoint(ck: LedgerCheckpoint): Promise<void>;
  /** Step 2: records in the head that entries up to `folded` are going (before any goes). */
  moveHead(userId: number, folded: number): Promise<void>;
  /** Step 3: every kept operation of the entries gets a marker carrying its answer. */
  keepMarkers(entries: LedgerEntry[]): Promise<void>;
  /** Step 4: deletes the request operations' markers, then the entries; the BSON bytes freed. */
  dropEntries(entries: LedgerEntry[]): Promise<{ markers: number; bytes: number }>;
  /** Step 5: marks the checkpoint done and deletes the user's checkpoints below it. */
  finishCheckpoint(ck: LedgerCheckpoint): Promise<void>;
}

/**
 * Request operations (a relay's pre-consume, a settle or refund): their markers go with their
 * entry, since none can arrive again after the horizon. Every other kind (credits, adjustments,
 * subscriptions, token operations) may be sent again at any time: their markers stay for ever.
 */
export const isRequestOp = (opId: string): boolean => opId.startsWith('hold:') || opId.startsWith('close:');

/** `from`, `from`+1, ... `to` (empty when to < from). */
export const seqRange = (from: number, to: number): number[] =>
  to < from ? [] : Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * The entries to fold among `read` (a user's entries from `from` on, by seq): the unbroken run from
 * `from` of entries written before `cutoff` that have a successor in `read` (the newest one read
 * is never folded, so neither is the user's newest).
 */
export function foldable(read: LedgerEntry[], from: number, cutoff: number): LedgerEntry[] {
  const bySeq = new Map(read.map((e) => [e.seq, e]));
  const out: LedgerEntry[] = [];
  for (let seq = from; ; seq++) {
    const e = bySeq.get(seq);
    if (!e || e.at >= cutoff || !bySeq.has(seq + 1)) return out;
    out.push(e);
  }
}

/** `kinds` plus the operations of `entries`. */
export function addTotals(kinds: KindTotals, entries: LedgerEntry[]): KindTotals {
  const out: KindTotals = Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, { ...v }]));
  for (const e of entries) {
    for (const op of opsOf(e)) {
      const t = out[op.kind] ?? { count: 0, sum: 0 };
      t.count += 1;
      t.sum += op.amount;
      out[op.kind] = t;
    }
  }
  return out;
}

/** The checkpoint after folding `entries` (a run following `prev`'s seq) into `prev`. */
export function nextCheckpoint(
  userId: number,
  prev: LedgerCheckpoint | null,
  entries: LedgerEntry[],
  now: number,
): LedgerCheckpoint {
  const seq = (entries.at(-1) as LedgerEntry).seq;
  return {
    _id: `${userId}:ck${seq}`,
    user_id: userId,
    seq,
    from: (entries[0] as LedgerEntry).seq,
    entries: (prev?.entries ?? 0) + entries.length,
    kinds: addTotals(prev?.kinds ?? {}, entries),
    done: false,
    at: now,
  };
}

/** What one pass did. */
export interface FoldStats {
  users: number;
  entries: number;
  markers: number;
  bytes: number;
  /** Users left alone: their head names a folded seq whose checkpoint is missing. */
  skipped: number;
}

export const emptyStats = (): FoldStats => ({ users: 0, entries: 0, markers: 0, bytes: 0, skipped: 0 });

/** Steps 3-5 for a written checkpoint whose head has moved: its entries (those still there) go. */
async function finish(store: FoldStore, ck: LedgerCheckpoint, read: LedgerEntry[] | null, stats: FoldStats) {
  const list = read ?? (await store.entries(ck.user_id, seqRange(ck.from, ck.seq)));
  await store.keepMarkers(list);
  const dropped = await store.dropEntries(list);
  await store.finishCheckpoint(ck);
  stats.entries += list.length;
  stats.markers += dropped.markers;
  stats.bytes += dropped.bytes;
}

/**
 * Folds a user's entries written before `cutoff`, `batch` at a time: checkpoint, head, markers,
 * entries. A pass that died after moving the head (entries half deleted) is finished first.
 */
export async function foldUser(
  store: FoldStore,
  userId: number,
  opts: { cutoff: number; batch: number; now: number },
  stats: FoldStats,
): Promise<void> {
  const head = await store.head(userId);
  let ck = head.folded > 0 ? await store.checkpoint(userId, head.folded) : null;
  if (head.folded > 0 && !ck) {
    stats.skipped += 1;
    return;
  }
  if (ck && !ck.done) await finish(store, ck, null, stats);
  for (;;) {
    const from = head.folded + 1;
    const to = Math.min(from + opts.batch, head.seq);
    // A user written within the horizon (most, each pass) costs one read of one entry.
    const [first] = from < to ? await store.entries(userId, [from]) : [];
    if (!first || first.at >= opts.cutoff) return;
    // Read no further than the head's pointer (that entry exists): no read of a missing _id.
    const read = await store.entries(userId, seqRange(from, to));
    const run = foldable(read, from, opts.cutoff);
    if (run.length === 0) return;
    const next = nextCheckpoint(userId, ck, run, opts.now);
    await store.writeCheckpoint(next);
    await store.moveHead(userId, next.seq);
    head.folded = next.seq;
    await finish(store, next, run, stats);
    ck = next;
    if (run.length < opts.batch) return;
  }
}

/** One pass over every user with a head, `page` users at a time; folds entries older than `horizonMs`. */
export async function foldPass(
  store: FoldStore,
  opts: { horizonMs: number; now: number; batch?: number; page?: number; signal?: AbortSignal },
): Promise<FoldStats> {
  const stats = emptyStats();
  const page = opts.page ?? 100;
  const step = { cutoff: opts.now - opts.horizonMs, batch: opts.batch ?? 100, now: opts.now };
  let after = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const users = await store.users(after, page);
    for (const u of users) {
      if (opts.signal?.aborted) return stats;
      await foldUser(store, u, step, stats);
      stats.users += 1;
    }
    if (users.length < page) return stats;
    after = users.at(-1) as number;
  }
}
