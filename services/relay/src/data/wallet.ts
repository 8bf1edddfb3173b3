/**
 * The billing side of the pipeline: WalletService calls (idempotent by request id, so retries
 * are safe) and the balance view that lets the relay skip pre-consume when balances are ample.
 */
import { AppError, type Logger, type ServiceClient } from '@aigw/common';
import type { WalletService } from '@aigw/proto/billing/v1/billing';
import type { TokenInfo } from '../domain/authorize.ts';
import type { BalancePort, WalletPort } from '../domain/relay-request.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retries transient failures (UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL) with backoff. */
async function retrying<T>(fn: () => Promise<T>, attempts: number): Promise<T> {
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      return await fn();
    } catch (err) {
      last = err;
      const code = err instanceof AppError ? err.code : 'INTERNAL';
      if (code !== 'UNAVAILABLE' && code !== 'DEADLINE_EXCEEDED' && code !== 'INTERNAL') throw err;
      await sleep(Math.min(100 * 2 ** i, 5_000));
    }
  }
  throw last;
}

export function walletPort(client: ServiceClient<typeof WalletService>, logger: Logger): WalletPort {
  return {
    preConsume: (req) => retrying(() => client.preConsume(req), 2),
    async refund(requestId) {
      try {
        await retrying(() => client.refund({ requestId }), 8);
      } catch (err) {
        logger.error({ err, requestId }, 'refund failed after retries');
      }
    },
  };
}

/**
 * Balances as last seen (pre-consume answers, or GetWallet), minus what this replica
 * has in flight without a pre-consume. `ample` holds when both the user and the token (unless
 * unlimited) keep `factor` times the request's upper bound after everything in flight.
 */
export function balanceView(opts: {
  wallet: ServiceClient<typeof WalletService>;
  ttlMs: number;
  factor: number;
  spend(tokenId: number, quota: number): void;
}): BalancePort & { drop(userId: number): void } {
  const seen = new Map<number, { quota: number; at: number }>();
  const inflight = new Map<number, number>();
  const loading = new Set<number>();
  const refresh = (userId: number) => {
    if (loading.has(userId)) return;
    loading.add(userId);
    opts.wallet
      .getWallet({ userId })
      .then((r) => {
        if (r.wallet) seen.set(userId, { quota: r.wallet.quota, at: Date.now() });
      })
      .catch(() => undefined)
      .finally(() => loading.delete(userId));
  };
  return {
    ample(userId, token: TokenInfo | undefined, need) {
      const s = seen.get(userId);
      if (!s || Date.now() - s.at > opts.ttlMs) {
        refresh(userId);
        if (!s) return false;
      }
      const margin = need * opts.factor;
      if (s.quota - (inflight.get(userId) ?? 0) - need < margin) return false;
      if (token && !token.unlimitedQuota && token.remainQuota - need < margin) return false;
      return true;
    },
    hold(userId, amount) {
      inflight.set(userId, (inflight.get(userId) ?? 0) + amount);
    },
    release(userId, amount) {
      const left = (inflight.get(userId) ?? 0) - amount;
      if (left <= 0) inflight.delete(userId);
      else inflight.set(userId, left);
    },
    observe(userId, userQuota) {
      seen.set(userId, { quota: userQuota, at: Date.now() });
    },
    spent(token, quota) {
      if (token) opts.spend(token.id, quota);
    },
    drop: (userId) => {
      seen.delete(userId);
    },
  };
}
