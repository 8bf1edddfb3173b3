import { AppError, precondition } from '@aigw/common/errors';
import { type Funding, hold, type LedgerState, refund, settle, slicesHeld } from './ledger-state.ts';
import { normalizePreference, subscriptionActive } from './subscription-state.ts';
import { checkHoldBudget, countTokenSpend, type PeriodStarts, type TokenBudgets } from './token-budgets.ts';
import type { LedgerOp } from './wallet-ledger.ts';

/** A request's ledger operations read the operator's clock: the time zone and the current budget periods. */
export interface OpClock {
  /** The operator's time zone (option TimeZone), where subscription windows start. */
  timeZone(): string;
  /** The current day, week and month in the operator's time zone (token budgets count in them). */
  periods(): PeriodStarts;
}

/** What a pre-consume holds: the amount, the token (0 none) and its limits, the funding asked for. */
export interface HoldRequest {
  rid: string;
  amount: number;
  tokenId: number;
  tokenLimited: boolean;
  budgets: TokenBudgets | undefined;
  funding: Funding;
  leaseAgeMs: number | undefined;
  /** A relay's wallet slice (many requests drawn from one hold): the wallet only, never a subscription. */
  slice?: boolean;
  /** A slice's least size (sliceGrant). */
  sliceMin?: number;
}

/**
 * What a wallet slice is granted: `want`, or less when the balance is short: at most half of it (a
 * second relay process can still take one), never below `min` (one request's bound), and all of it
 * (up to `want`) when what would be left could not cover `min`; `want` when the balance is below
 * `min`, which the hold then refuses with 用户额度不足.
 */
export function sliceGrant(quota: number, want: number, min: number): number {
  if (quota < min) return want;
  const half = Math.min(want, Math.max(min, Math.floor(quota / 2)));
  return quota - half < min ? Math.min(want, quota) : half;
}

/** The refusal of a wallet slice for a user whose requests a subscription may pay. */
export const SLICE_REFUSED = '订阅可能支付该用户的请求，不使用钱包分片';

/** The refusal of a hold the wallet cannot cover (ledger-state.ts). */
const SHORT = '用户额度不足';

/**
 * How long a relay refused while the user's wallet slices hold the balance waits before its one
 * retry (at most): the slices' relays are asked to give them back, which takes their requests in
 * flight on them to end, then the release event's way through the usage topic.
 */
export const SLICE_REVOKE_RETRY_MS = 1_000;

/**
 * A hold refused for want of balance (用户额度不足) while wallet slices of the user hold enough that,
 * given back, it would pass: the same refusal, marked `retryAfterMs` (wallet-service.ts asks the
 * relays holding them to give them back; the refused relay retries once). Other errors unchanged.
 */
export function revocableRefusal(err: unknown, s: LedgerState, need: number): unknown {
  if (!(err instanceof AppError) || err.code !== 'FAILED_PRECONDITION' || err.message !== SHORT) return err;
  const held = slicesHeld(s).quota;
  if (held === 0 || s.quota + held < need) return err;
  return new AppError('FAILED_PRECONDITION', SHORT, { retryAfterMs: SLICE_REVOKE_RETRY_MS });
}

/**
 * The pre-consume of `rid`: holds the amount from the subscription or the wallet (chosen in the
 * same entry, ledger-state.ts) within the token's budgets; refused once the request was closed.
 */
export const holdOp = (h: HoldRequest, clock: OpClock, signal?: AbortSignal): LedgerOp => ({
  id: `hold:${h.rid}`,
  refusedBy: [`close:${h.rid}`],
  ...(signal ? { signal } : {}),
  decide: (s) => {
    checkHoldBudget(s, { tokenId: h.tokenId, amount: h.amount, budgets: h.budgets, starts: clock.periods() });
    const now = Date.now();
    if (h.slice && (subscriptionActive(s, now) || normalizePreference(s.pref) === 'subscription_only'))
      throw precondition(SLICE_REFUSED);
    const amount = h.slice ? sliceGrant(s.quota, h.amount, h.sliceMin ?? h.amount) : h.amount;
    let next: LedgerState;
    try {
      next = hold(s, {
        rid: h.rid,
        amount,
        tokenId: h.tokenId,
        tokenLimited: h.tokenLimited,
        now,
        // No model: the wallet pays (ledger-state.ts chooses a subscription only for a model).
        funding: h.slice ? { ...h.funding, model: '' } : h.funding,
        leaseAgeMs: h.leaseAgeMs,
        slice: h.slice,
      });
    } catch (err) {
      throw revocableRefusal(err, s, h.slice ? (h.sliceMin ?? h.amount) : h.amount);
    }
    const tokenRemain = h.tokenId ? (next.tokens[String(h.tokenId)]?.r ?? 0) : 0;
    return {
      kind: 'hold',
      amount,
      state: next,
      result: {
        pre_consumed: amount,
        user_quota: next.quota,
        token_remain_quota: tokenRemain,
        subscription_id: next.holds[h.rid]?.s ?? '',
      },
    };
  },
});

/**
 * A settle of `rid`: charges `actual`, giving back (or charging beyond) what its hold reserved, or
 * for a request drawn from a wallet slice (`slice`), taking it from that slice's hold first.
 */
export const settleOp = (
  rid: string,
  actual: number,
  tokenId: number,
  tokenLimited: boolean,
  clock: OpClock,
  slice?: string,
): LedgerOp => ({
  id: `close:${rid}`,
  decide: (s) => {
    const charged = s.holds[rid]?.t || tokenId;
    const now = Date.now();
    const settled = settle(s, { rid, actual, tokenId, tokenLimited, now, timeZone: clock.timeZone(), slice });
    const { delta } = settled;
    const state = countTokenSpend(settled.state, charged, actual, clock.periods());
    const result: Record<string, number | string> = { delta, user_quota: state.quota };
    if (settled.subscription) result.subscription_id = settled.subscription;
    return { kind: 'settle', amount: actual, state, result };
  },
});

/**
 * A refund of `rid`: gives its hold back (for a wallet slice, its release: what is left of it). Recorded even without a hold, so that a pre-consume
 * still on its way (its caller gave up waiting) is refused when it arrives instead of holding
 * quota for an hour.
 */
export const refundOp = (rid: string): LedgerOp => ({
  id: `close:${rid}`,
  decide: (s) => {
    const { state, refunded } = refund(s, rid);
    return { kind: 'refund', amount: refunded, state, result: { refunded } };
  },
});
