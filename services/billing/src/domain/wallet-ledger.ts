import { AppError } from '@aigw/common/errors';
import {
  HEAD_CHECK_AGE_MS,
  type LedgerEntry,
  type LedgerRepository,
  type OpRecord,
} from '../data/ledger-repository.ts';
import { answer, groupByUser, type Head, lookupIds, type Pending, type Plan, planRound } from './ledger-round.ts';
import { emptyState, type Hold, type LedgerState } from './ledger-state.ts';
import type { Sub } from './subscription-state.ts';

/** What an operation decides from the current state. */
export interface Change {
  kind: string;
  amount: number;
  state: LedgerState;
  result: OpRecord['result'];
}

/** One operation on a user's money state, recorded at most once under `id`. */
export interface LedgerOp {
  id: string;
  /** Operation ids whose record refuses this one (a hold whose request was already closed). */
  refusedBy?: string[];
  /** Decides the change from the state; throws an AppError to refuse (nothing is recorded). */
  decide(state: LedgerState): Change;
  /**
   * The caller's interest (a gRPC call's signal): an operation still queued when it is aborted
   * (the caller's deadline passed) is dropped unrecorded, so a saturated ledger spends its rounds
   * on callers still waiting (a relay that gave up on a pre-consume refunds it anyway).
   */
  signal?: AbortSignal;
}

/** The answer of a ledger operation; `replayed` when its id had been recorded before. */
export interface Applied {
  op: OpRecord;
  /** The state right after this operation (the current state for a replay). */
  state: LedgerState;
  replayed: boolean;
}

const CACHE_LIMIT = 5_000;
/** Operations per round (one lookup and two inserts for all of them). */
const ROUND_LIMIT = 2_000;
const MAX_ATTEMPTS = 30;
/** Reads answer from the cached head for this long after it was known to be the newest. */
const READ_STALENESS_MS = 1_000;

/**
 * Whether a cached head was last known to be the newest so long ago that the fold (ledger-fold.ts)
 * may have deleted entries appended after it: appending on it could then reuse a deleted seq, so
 * it is probed first (the probe reads the head's folded seq).
 */
const outlived = (head: Head, now: number): boolean => now - head.checkedAt >= HEAD_CHECK_AGE_MS;

/** The newest entry of each recently seen user (at most CACHE_LIMIT, the least recent dropped first). */
function headCache(repo: LedgerRepository, clock: () => number) {
  const cache = new Map<number, Head>();

  const remember = (userId: number, head: Head) => {
    cache.delete(userId);
    cache.set(userId, head);
    if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value as number);
  };

  /** The user's head: the cached one, or (fresh, or none cached) probed forward from it in the database. */
  async function headOf(userId: number, fresh: boolean): Promise<Head> {
    const cached = cache.get(userId);
    if (cached && !fresh && !outlived(cached, clock())) return cached;
    const checkedAt = clock();
    const latest = await repo.latest(userId, cached?.entry ?? null);
    const head = latest && latest === cached?.entry ? cached : { entry: latest, marked: !latest, checkedAt };
    head.checkedAt = checkedAt;
    remember(userId, head);
    return head;
  }

  /** The heads of a round's users, with the markers of any head read from the database rewritten first. */
  async function marked(users: number[], fresh: Set<number>): Promise<Head[]> {
    const heads = await Promise.all(users.map((u) => headOf(u, fresh.has(u))));
    const unmarked = heads.filter((h) => h.entry && !h.marked);
    if (unmarked.length > 0) {
      await repo.mark(unmarked.map((h) => h.entry as LedgerEntry));
      for (const h of unmarked) h.marked = true;
    }
    return heads;
  }

  return { cached: (userId: number) => cache.get(userId), remember, headOf, marked };
}

type HeadCache = ReturnType<typeof headCache>;

/**
 * Appends the planned entries (one insert), marks and answers those written; returns the users
 * whose entry lost its seq or op_id and are decided again on a fresh head.
 */
async function writePlans(
  repo: LedgerRepository,
  heads: HeadCache,
  clock: () => number,
  writes: Plan[],
): Promise<number[]> {
  const retry: number[] = [];
  const outcomes = await repo.appendMany(writes.map((w) => w.entry as LedgerEntry));
  const ok = writes.filter((_, i) => outcomes[i] === 'ok');
  const written: Head[] = ok.map((w) => ({ entry: w.entry, marked: false, checkedAt: clock() }));
  for (const [i, w] of ok.entries()) heads.remember(w.userId, written[i] as Head);
  if (ok.length > 0) {
    // The entries are durable: a failure here only leaves markers for the next round to rewrite.
    await repo.mark(ok.map((w) => w.entry as LedgerEntry)).then(
      () => {
        for (const h of written) h.marked = true;
      },
      () => undefined,
    );
  }
  // Answered after the markers, not as soon as the entries are durable: a settle or refund that
  // names no user finds it by the `hold:` marker (holderOf), so a refund sent right after its
  // pre-consume's answer would find no holder and refund nothing (billing-wallet test).
  for (const w of ok) answer(w);
  for (const [i, w] of writes.entries()) {
    const outcome = outcomes[i];
    if (outcome === 'ok' || outcome === undefined) continue;
    if (outcome.occupant) {
      // The seq is taken: decide again on top of the entry there (probing forward from it).
      // It is newer than anything this replica marked, so the next attempt writes its markers
      // first and its operations answer as replays: after a lost reply (the database went
      // away mid-round) the same operations are not applied twice, and no scan is needed.
      heads.remember(w.userId, { entry: outcome.occupant, marked: false, checkedAt: clock() });
    } else {
      // A duplicate op_id below the head: an entry written before group commit whose marker
      // is missing; finding it by op_id (a scan) rewrites its marker, so the next lookup
      // answers it as a replay.
      await repo.findOp((w.entry as LedgerEntry).op_id, true);
    }
    retry.push(w.userId);
  }
  return retry;
}

/**
 * Applies operations to users' money states exactly once per operation id, in group commits.
 *
 * Operations queue while a round is written; the next round takes everything queued (up to
 * ROUND_LIMIT, any users): one lookup of the recorded operation ids, then for each user the
 * operations are decided in arrival order on the running state and appended as ONE entry
 * seq+1 (`_id` `<user>:<seq>`, unique: a lost race with another replica fails instead of
 * overwriting; we reload and decide again), all users' entries in one insert, then the markers
 * of every recorded operation in one insert. Answers are given only after the entry is durable.
 *
 * Exactly once: markers are written after their entry, so a crash can leave the newest entry of
 * a user without markers, never an older one: a writer appends seq+1 only on top of a head whose
 * markers it wrote or rewrote (a head read from the database is re-marked first). The lookup
 * therefore sees every operation recorded below the entry being appended, and the unique `_id`
 * guarantees nothing was appended in between. Nothing here needs transactions, change streams or
 * atomic read-modify-write updates.
 */
export function walletLedger(
  repo: LedgerRepository,
  clock: () => number = Date.now,
  /**
   * `heldAt`: billing's clock when the hold was placed; `leaseAgeMs`: the relay's lease age when it
   * sent it (relay-leases in @aigw/common: a hold sent by a relay still alive past its fence stays).
   */
  opts: { lapsed?: (rid: string, heldAt: number, leaseAgeMs: number | undefined) => boolean } = {},
) {
  const lapsed = opts.lapsed;
  const lapsedHold = lapsed && ((rid: string, h: Hold) => lapsed(rid, h.at, h.g));
  const pending: Pending[] = [];
  let running = false;

  const heads = headCache(repo, clock);

  async function round(batch: Pending[]): Promise<void> {
    const byUser = groupByUser(batch);
    let users = [...byUser.keys()];
    const fresh = new Set<number>();
    for (let attempt = 0; attempt < MAX_ATTEMPTS && users.length > 0; attempt++) {
      const found = await heads.marked(users, fresh);
      const recorded = await repo.recorded(lookupIds(users, byUser));
      const plans = users.map((u, i) =>
        planRound(u, found[i] as Head, byUser.get(u) ?? [], recorded, fresh.has(u), clock(), lapsedHold),
      );
      const retry: number[] = [];
      const writes: Plan[] = [];
      for (const pl of plans) {
        if (pl.entry) writes.push(pl);
        else if (pl.unproven) {
          // Refused on a cached state that another replica may have moved: decide once more on a fresh one.
          fresh.add(pl.userId);
          retry.push(pl.userId);
        } else answer(pl);
      }
      if (writes.length > 0) {
        for (const u of await writePlans(repo, heads, clock, writes)) {
          fresh.add(u);
          retry.push(u);
        }
      }
      users = retry;
    }
    for (const u of users) {
      for (const p of byUser.get(u) ?? []) p.reject(new AppError('UNAVAILABLE', '账户繁忙，请稍后重试'));
    }
  }

  async function pump(): Promise<void> {
    try {
      while (pending.length > 0) {
        const batch = pending.splice(0, ROUND_LIMIT).filter((p) => {
          if (!p.op.signal?.aborted) return true;
          p.reject(new AppError('DEADLINE_EXCEEDED', '账户繁忙，请稍后重试'));
          return false;
        });
        if (batch.length === 0) continue;
        await round(batch).catch((err) => {
          for (const p of batch) p.reject(err);
        });
      }
    } finally {
      running = false;
    }
  }

  function submit(userId: number, op: LedgerOp): Promise<Applied> {
    return new Promise<Applied>((resolve, reject) => {
      pending.push({ userId, op, resolve, reject });
      if (running) return;
      running = true;
      // Operations submitted in the same turn of the event loop share the first round.
      setImmediate(() => void pump());
    });
  }

  return {
    submit,
    /**
     * Runs `decide` on the user's current state and records its change under `opId`. `decide` may
     * throw (insufficient quota...): unless `opId` was recorded before, the error propagates.
     */
    apply(userId: number, opId: string, decide: (state: LedgerState) => Change): Promise<Applied> {
      return submit(userId, { id: opId, decide });
    },
    /**
     * The user's state (an empty one for users without entries). Fresh reads probe the database
     * for entries other replicas appended, unless this replica wrote or probed the head within
     * READ_STALENESS_MS (a probe that finds nothing scans on the local server: a burst of wallet
     * reads must not turn into a burst of scans).
     */
    async state(userId: number, opts: { fresh?: boolean } = {}): Promise<LedgerState> {
      const cached = heads.cached(userId);
      const recent = cached !== undefined && clock() - cached.checkedAt < READ_STALENESS_MS;
      const head = await heads.headOf(userId, (opts.fresh ?? true) && !recent);
      return head.entry?.state ?? emptyState();
    },
    /** The entry of a recorded operation (fast lookup; null when unknown). */
    findOp: (opId: string) => repo.findOp(opId),
    /** The user's subscriptions that ended and left the state (id -> the subscription as it ended). */
    endedSubscriptions: (userId: number): Promise<Record<string, Sub>> => repo.endedSubscriptions(userId),
  };
}

export type WalletLedger = ReturnType<typeof walletLedger>;
