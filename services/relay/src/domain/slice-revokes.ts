/**
 * The refused side of a wallet-slice revoke (common/slice-signals.ts): billing refuses a
 * pre-consume with 用户额度不足 marked `retryAfterMs` when the user's balance sits in wallet slices
 * (of this or another relay process) and asks their relays to give them back; this process waits
 * until billing says a slice of the user was released, or the bound, then asks once more. The
 * second answer is final (a refusal then reaches the client as before).
 */
import type { WalletPort } from './relay-request.ts';

/** The longest a refused pre-consume waits for a release before its one retry. */
export const REVOKE_WAIT_MAX_MS = 1_000;

/** Requests waiting for a release of their user's slices, woken by billing's `released` signal. */
export function releaseWaiters() {
  const waiting = new Map<number, Set<() => void>>();
  return {
    /** Resolves when a slice of the user is released, or after `ms`. */
    wait(userId: number, ms: number): Promise<void> {
      return new Promise<void>((resolve) => {
        let set = waiting.get(userId);
        if (!set) {
          set = new Set();
          waiting.set(userId, set);
        }
        const mine = set;
        const done = () => {
          clearTimeout(timer);
          mine.delete(done);
          if (mine.size === 0 && waiting.get(userId) === mine) waiting.delete(userId);
          resolve();
        };
        const timer = setTimeout(done, ms);
        mine.add(done);
      });
    },
    /** A slice of the user was released: every request waiting for one retries. */
    released(userId: number): void {
      for (const done of [...(waiting.get(userId) ?? [])]) done();
    },
    /** Requests waiting (tests, metrics). */
    size(): number {
      let n = 0;
      for (const set of waiting.values()) n += set.size;
      return n;
    },
  };
}

/** Whether billing marked a refusal as one a revoke of wallet slices may clear. */
const retryAfterOf = (err: unknown): number | undefined => {
  const e = err as { code?: string; retryAfterMs?: number };
  return e.code === 'FAILED_PRECONDITION' && typeof e.retryAfterMs === 'number' ? e.retryAfterMs : undefined;
};

/**
 * The wallet whose request pre-consumes, refused while slices hold the balance, wait for a release
 * (at most `maxWaitMs`) and are asked once more. A slice's own take is not retried: its request
 * then pre-consumes on its own, and that one waits.
 */
export function retryWhenRevoked(
  wallet: WalletPort,
  wait: (userId: number, ms: number) => Promise<void>,
  maxWaitMs = REVOKE_WAIT_MAX_MS,
): WalletPort {
  return {
    async preConsume(req) {
      try {
        return await wallet.preConsume(req);
      } catch (err) {
        const after = retryAfterOf(err);
        if (req.walletSlice || after === undefined) throw err;
        await wait(req.userId, Math.min(after, maxWaitMs));
        return wallet.preConsume(req);
      }
    },
    refund: (requestId, userId) => wallet.refund(requestId, userId),
  };
}
