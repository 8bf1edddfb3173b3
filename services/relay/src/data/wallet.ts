/**
 * The billing side of the pipeline: WalletService calls (idempotent by request id, so retries
 * are safe) and the balance view that lets the relay skip pre-consume when balances are ample.
 */
import { AppError, type Logger, type ServiceClient } from '@aigw/common';
import type { WalletService } from '@aigw/proto/billing/v1/billing';
import { hasBudget, type TokenInfo } from '../domain/authorize.ts';
import type { BalancePort, SkipTicket, WalletPort } from '../domain/relay-request.ts';

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
      if (i < attempts - 1) await sleep(Math.min(100 * 2 ** i, 1_000));
    }
  }
  throw last;
}

/**
 * PreConsume with one retry; Refund with a few quick ones. A refund that still fails is not lost:
 * the failed request's usage event (type 5) makes billing refund it from Kafka.
 */
export function walletPort(client: ServiceClient<typeof WalletService>, logger: Logger): WalletPort {
  return {
    preConsume: (req) => retrying(() => client.preConsume(req), 2),
    async refund(requestId, userId) {
      try {
        await retrying(() => client.refund({ requestId, userId }), 3);
      } catch (err) {
        logger.warn({ err, requestId }, 'refund left to the usage event');
      }
    },
  };
}

interface Skip extends SkipTicket {
  userId: number;
  /** The limited token it was served under (0: none or unlimited). */
  tokenId: number;
  /** Upper bound while in flight, the charged quota once done. */
  amount: number;
  /** Date.now() when the request finished (0 while in flight). */
  doneAt: number;
}

/**
 * One user's skips, summed as they change: a hot user's request costs O(1) whatever its rate (a
 * walk over every skip of the horizon took 39 % of the relay's CPU at 6,000 req/s of one user).
 */
interface UserSkips {
  /** Sum of the amounts of the skips that count (in flight, or finished and not yet let go). */
  total: number;
  /** The same per limited token. */
  byToken: Map<number, number>;
  inFlight: number;
  /** Finished skips that still count, in the order they finished (`doneAt` ascending). */
  done: Skip[];
  /** Index of the oldest entry of `done` that still counts. */
  head: number;
}

/**
 * Balances as last seen (pre-consume answers, or GetWallet), and what this replica spent without
 * a pre-consume that billing may not have settled yet. `ample` holds only when settles keep up
 * (`settleBehind` is false), the seen balance is at most `ttlMs` old, and this replica's unsettled
 * skips of the user (of the token, for a limited one), with this request's upper bound, stay within
 * 1/`factor` of the seen balance (of the token's remaining quota as cached). A skip counts until a balance read more than `horizonMs` after it
 * finished (then billing has settled it); so across R replicas, what billing has not charged yet
 * never exceeds R x balance / factor. See docs/security.md ("Overspend bound").
 */
export function balanceView(opts: {
  wallet: ServiceClient<typeof WalletService>;
  ttlMs: number;
  factor: number;
  horizonMs: number;
  settleBehind(): boolean;
  spend(tokenId: number, quota: number): void;
  clock?: () => number;
}): BalancePort & { drop(userId: number): void; unsettled(userId: number, tokenId?: number): number } {
  const clock = opts.clock ?? Date.now;
  // `sub`: a subscription may pay the user's requests; only billing's pre-consume chooses it.
  const seen = new Map<number, { quota: number; at: number; sub?: boolean }>();
  const skips = new Map<number, UserSkips>();
  const loading = new Set<number>();
  const refresh = (userId: number) => {
    if (loading.has(userId)) return;
    loading.add(userId);
    // The read reflects billing no earlier than when it was sent.
    const at = clock();
    opts.wallet
      .getWallet({ userId })
      .then((r) => {
        if (r.wallet) observe(userId, r.wallet.quota, at, r.wallet.subscriptionActive);
      })
      .catch(() => undefined)
      .finally(() => loading.delete(userId));
  };
  const add = (u: UserSkips, tokenId: number, amount: number) => {
    u.total += amount;
    if (tokenId) {
      const left = (u.byToken.get(tokenId) ?? 0) + amount;
      if (left === 0) u.byToken.delete(tokenId);
      else u.byToken.set(tokenId, left);
    }
  };
  const forgetIfEmpty = (userId: number, u: UserSkips) => {
    if (u.inFlight === 0 && u.head === u.done.length) skips.delete(userId);
  };
  function observe(userId: number, quota: number, at: number, sub?: boolean) {
    const prev = seen.get(userId);
    if (prev && prev.at > at) return;
    seen.set(userId, { quota, at, ...(sub ? { sub } : {}) });
    const u = skips.get(userId);
    if (!u) return;
    // Finished in order, so the ones to let go are at the front (a clock stepping back only keeps
    // some counting a little longer: the safe side).
    while (u.head < u.done.length) {
      const s = u.done[u.head] as Skip;
      if (s.doneAt + opts.horizonMs >= at) break;
      add(u, s.tokenId, -s.amount);
      u.head++;
    }
    if (u.head > 1_024 && u.head * 2 > u.done.length) {
      u.done = u.done.slice(u.head);
      u.head = 0;
    }
    forgetIfEmpty(userId, u);
  }
  const unsettled = (userId: number, tokenId = 0) => {
    const u = skips.get(userId);
    if (!u) return 0;
    return tokenId ? (u.byToken.get(tokenId) ?? 0) : u.total;
  };
  return {
    ample(userId, token: TokenInfo | undefined, need) {
      // A period budget is counted only by billing's holds: such a token never skips them.
      if (opts.settleBehind() || hasBudget(token)) return false;
      const s = seen.get(userId);
      const now = clock();
      if (!s || now - s.at > opts.ttlMs / 2) refresh(userId);
      if (!s || now - s.at > opts.ttlMs || s.sub) return false;
      if ((unsettled(userId) + need) * opts.factor > s.quota) return false;
      if (token && !token.unlimitedQuota && (unsettled(userId, token.id) + need) * opts.factor > token.remainQuota)
        return false;
      return true;
    },
    hold(userId, amount, token) {
      const skip: Skip = { userId, tokenId: token && !token.unlimitedQuota ? token.id : 0, amount, doneAt: 0 };
      let u = skips.get(userId);
      if (!u) {
        u = { total: 0, byToken: new Map(), inFlight: 0, done: [], head: 0 };
        skips.set(userId, u);
      }
      u.inFlight++;
      add(u, skip.tokenId, amount);
      return skip;
    },
    release(ticket, charged) {
      const skip = ticket as Skip;
      const u = skips.get(skip.userId);
      if (!u || skip.doneAt) return;
      u.inFlight--;
      add(u, skip.tokenId, charged - skip.amount);
      skip.amount = charged;
      skip.doneAt = clock();
      if (charged !== 0) u.done.push(skip);
      forgetIfEmpty(skip.userId, u);
    },
    observe: (userId, userQuota, at, sub) => observe(userId, userQuota, at, sub),
    spent(token, quota) {
      if (token) opts.spend(token.id, quota);
    },
    drop: (userId) => {
      seen.delete(userId);
    },
    unsettled,
  };
}
