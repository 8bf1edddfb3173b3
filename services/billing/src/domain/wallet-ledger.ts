import { AppError } from '@aigw/common/errors';
import type { LedgerEntry, LedgerRepository } from '../data/ledger-repository.ts';
import { keyedMutex } from './keyed-mutex.ts';
import { emptyState, expireHolds, type LedgerState } from './ledger-state.ts';

/** What an operation decides from the current state. */
export interface Change {
  kind: string;
  amount: number;
  state: LedgerState;
  result: LedgerEntry['result'];
}

/** The answer of a ledger operation; `replayed` when `opId` had been recorded before. */
export interface Applied {
  entry: LedgerEntry;
  replayed: boolean;
}

const CACHE_LIMIT = 5_000;

/**
 * Applies operations to users' money states exactly once per operation id.
 *
 * Each change appends entry seq+1 of the user; the unique `_id` (`<user>:<seq>`) makes a lost
 * race fail instead of overwriting (we reload and decide again), and the unique `op_id` makes a
 * replayed operation fail instead of applying twice (we answer the recorded result). Nothing here
 * needs transactions, change streams or atomic read-modify-write updates.
 */
export function walletLedger(repo: LedgerRepository, clock: () => number = Date.now) {
  const lock = keyedMutex();
  const cache = new Map<number, LedgerEntry>();

  const remember = (entry: LedgerEntry) => {
    cache.delete(entry.user_id);
    cache.set(entry.user_id, entry);
    if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value as number);
  };

  async function current(userId: number, fresh: boolean): Promise<LedgerEntry | null> {
    const cached = cache.get(userId) ?? null;
    if (cached && !fresh) return cached;
    const latest = await repo.latest(userId, cached);
    if (latest) remember(latest);
    return latest;
  }

  return {
    /**
     * Runs `decide` on the user's current state and records its change under `opId`. `decide` may
     * throw (insufficient quota...): unless `opId` was recorded before, the error propagates.
     */
    apply(userId: number, opId: string, decide: (state: LedgerState) => Change): Promise<Applied> {
      return lock(String(userId), async () => {
        for (let attempt = 0; attempt < 100; attempt++) {
          const fromCache = attempt === 0 && cache.has(userId);
          const head = await current(userId, attempt > 0);
          const now = clock();
          const { state, expired } = expireHolds(head?.state ?? emptyState(), now);
          let change: Change;
          try {
            change = decide(state);
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            const recorded = await repo.findOp(opId);
            if (recorded) return { entry: recorded, replayed: true };
            // A cached state may be stale when other replicas write too: decide once more on a fresh one.
            if (fromCache) continue;
            throw err;
          }
          const seq = (head?.seq ?? 0) + 1;
          const entry: LedgerEntry = {
            _id: `${userId}:${seq}`,
            user_id: userId,
            seq,
            op_id: opId,
            kind: change.kind,
            amount: change.amount,
            result: change.result,
            state: change.state,
            ...(expired.length > 0 ? { expired } : {}),
            at: now,
          };
          const outcome = await repo.append(entry);
          if (outcome === 'ok') {
            remember(entry);
            return { entry, replayed: false };
          }
          if (outcome === 'duplicate') {
            const recorded = await repo.findOp(opId, true);
            if (recorded) return { entry: recorded, replayed: true };
          }
          // conflict: another replica appended first; reload and decide again.
        }
        throw new AppError('UNAVAILABLE', '账户繁忙，请稍后重试');
      });
    },
    /** The user's current state (an empty one for users without entries). */
    async state(userId: number, opts: { fresh?: boolean } = {}): Promise<LedgerState> {
      const head = await current(userId, opts.fresh ?? true);
      return head?.state ?? emptyState();
    },
    /** The entry of a recorded operation (fast lookup; null when unknown). */
    findOp: (opId: string) => repo.findOp(opId),
  };
}

export type WalletLedger = ReturnType<typeof walletLedger>;
