import { invalid, precondition } from '@aigw/common/errors';
import {
  chargeSubscription,
  normalizePreference,
  payingSubscription,
  releaseSubscription,
  type Sub,
} from './subscription-state.ts';
import type { PeriodSpend } from './token-budgets.ts';

/**
 * The money state of one user: the wallet plus the balances of the user's tokens and the
 * reservations (holds) of requests in flight. One state per ledger entry; every change appends a
 * new entry (see wallet-ledger.ts), so the wallet and a token always change together, atomically.
 */
export interface LedgerState {
  quota: number;
  used_quota: number;
  request_count: number;
  /** token id -> remain (r) and used (u) quota. */
  tokens: Record<string, TokenBalance>;
  /** request id -> what its pre-consume reserved. */
  holds: Record<string, Hold>;
  /** Subscription id -> subscription (subscription-state.ts); missing for users who never had one. */
  subs?: Record<string, Sub>;
  /** new-api's billing_preference (missing: subscription_first). */
  pref?: string;
  /** Plan id -> subscriptions of it that ended and left `subs` (pruneEnded): purchase limits count them. */
  subs_ended?: Record<string, number>;
}

export interface TokenBalance {
  r: number;
  u: number;
  /** Spent in the current day, week and month (token-budgets.ts); absent before the first charge. */
  p?: PeriodSpend;
}

export interface Hold {
  /** Reserved from the wallet. */
  a: number;
  /** Token id (0 none). */
  t: number;
  /** Reserved from the token (0 for unlimited tokens). */
  ta: number;
  /** Whether the token is limited (its remain quota moves with its usage). */
  l: boolean;
  /** Unix ms of the reservation. */
  at: number;
  /** The relay's lease age when it sent the pre-consume (ms; absent for callers without a lease). */
  g?: number;
  /** The subscription paying the request (then `a` is 0), and what its windows reserved. */
  s?: string;
  sa?: number;
  /** A relay's wallet slice (wallet-ops.ts): many requests are charged from it, its release gives back the rest. */
  w?: 1;
}

/** What a pre-consume needs to choose between a subscription and the wallet. */
export interface Funding {
  model: string;
  group: string;
  /** The operator's time zone (option TimeZone), where daily, weekly and monthly windows start. */
  timeZone: string;
}

/** A reservation not settled or refunded within this time is given back by the next change. */
export const HOLD_TTL_MS = 60 * 60 * 1000;

export const emptyState = (): LedgerState => ({ quota: 0, used_quota: 0, request_count: 0, tokens: {}, holds: {} });

/**
 * Holds maps that a ledger round owns (see `draft`): states derived from them share the map instead
 * of copying it, so a round of k operations on a user with H holds in flight costs O(k + H)
 * instead of O(k x H) (one user, 500 holds + 500 settles with 1,000 holds in flight: 244 ms of
 * copying before).
 */
const drafts = new WeakSet<Record<string, Hold>>();

const clone = (s: LedgerState): LedgerState => ({
  ...s,
  tokens: Object.fromEntries(Object.entries(s.tokens).map(([k, v]) => [k, { ...v }])),
  holds: drafts.has(s.holds) ? s.holds : { ...s.holds },
});

/**
 * A working copy for one round of operations (wallet-ledger.ts): every state derived from it
 * shares its holds map, changed in place, while the scalars and token balances are still copied
 * per operation (so before/after comparisons hold). The state passed in is never changed. Holds
 * of the intermediate states read as those of the newest one, so only the round reads them; call
 * `sealDraft` before the final state leaves the round (it is then an ordinary state again).
 */
export function draftOf(state: LedgerState): LedgerState {
  const d = { ...clone(state), holds: { ...state.holds } };
  drafts.add(d.holds);
  return d;
}

/** Ends a round's draft: its holds map is copied again by the next operation on it. */
export function sealDraft(state: LedgerState): void {
  drafts.delete(state.holds);
}

/**
 * Gives back holds older than HOLD_TTL_MS, and those `lapsed` names (their relay process is known
 * to be gone: its lease lapsed), a relay that died mid-request; returns their ids. A settle that
 * still comes for one charges its whole usage (as for a request without a pre-consume).
 */
export function expireHolds(
  state: LedgerState,
  now: number,
  lapsed?: (rid: string, hold: Hold) => boolean,
): { state: LedgerState; expired: string[] } {
  const expired = Object.entries(state.holds).filter(([rid, h]) => now - h.at > HOLD_TTL_MS || lapsed?.(rid, h));
  if (expired.length === 0) return { state, expired: [] };
  const next = clone(state);
  for (const [rid, h] of expired) {
    next.quota += h.a;
    if (h.s && next.subs) next.subs = releaseSubscription(next.subs, h.s, h.sa ?? 0);
    if (h.t && h.ta) {
      const t = next.tokens[String(h.t)];
      if (t) t.r += h.ta;
    }
    delete next.holds[rid];
  }
  return { state: next, expired: expired.map(([rid]) => rid) };
}

function assertAmount(amount: number): void {
  if (!Number.isInteger(amount) || amount < 0) throw invalid('额度必须为非负整数');
}

/**
 * Reserves `amount` from the wallet and (for a limited token) from the token. Never takes the
 * wallet or the token below zero.
 */
export function hold(
  state: LedgerState,
  op: {
    rid: string;
    amount: number;
    tokenId: number;
    tokenLimited: boolean;
    now: number;
    funding?: Funding;
    leaseAgeMs?: number | undefined;
    /** A relay's wallet slice (the wallet pays: no token, no subscription). */
    slice?: boolean;
  },
): LedgerState {
  assertAmount(op.amount);
  // A replay: the ledger answers it from the recorded entry.
  if (state.holds[op.rid]) throw precondition('重复的请求');
  const sub = fundingSubscription(state, op);
  if (!sub && state.quota < op.amount) throw precondition('用户额度不足');
  const next = clone(state);
  let ta = 0;
  if (op.tokenId && op.tokenLimited) {
    const t = next.tokens[String(op.tokenId)] ?? { r: 0, u: 0 };
    if (t.r < op.amount) throw precondition('令牌额度不足');
    t.r -= op.amount;
    next.tokens[String(op.tokenId)] = t;
    ta = op.amount;
  }
  const l = Boolean(op.tokenId && op.tokenLimited);
  const g = op.leaseAgeMs === undefined ? {} : { g: op.leaseAgeMs };
  if (sub && next.subs && op.funding) {
    next.subs = chargeSubscription(next.subs, sub, op.amount, op.now, op.funding.timeZone);
    next.holds[op.rid] = { a: 0, t: op.tokenId, ta, l, at: op.now, ...g, s: sub, sa: op.amount };
    return next;
  }
  next.quota -= op.amount;
  next.holds[op.rid] = { a: op.amount, t: op.tokenId, ta, l, at: op.now, ...g, ...(op.slice ? { w: 1 as const } : {}) };
  return next;
}

/** The wallet slices open in a state: how many, and what is left of them. */
export function slicesHeld(state: LedgerState): { count: number; quota: number } {
  let count = 0;
  let quota = 0;
  for (const h of Object.values(state.holds)) {
    if (!h.w) continue;
    count++;
    quota += h.a;
  }
  return { count, quota };
}

/**
 * The subscription that pays a pre-consume, by the user's preference (new-api's): subscription
 * first (the default: a subscription with room in all its windows, else the wallet), wallet first
 * (a subscription only when the wallet cannot cover it), subscription only (refused with
 * 订阅额度不足 when none has room) or wallet only. Undefined: the wallet pays.
 */
function fundingSubscription(
  state: LedgerState,
  op: { amount: number; now: number; funding?: Funding },
): string | undefined {
  const pref = normalizePreference(state.pref);
  // Only requests that name a model (the relay's) can be a subscription's.
  if (!op.funding?.model || pref === 'wallet_only') return undefined;
  if (pref === 'wallet_first' && state.quota >= op.amount) return undefined;
  const sub = payingSubscription(state.subs, { ...op.funding, amount: op.amount, now: op.now });
  if (!sub && pref === 'subscription_only') throw precondition('订阅额度不足');
  return sub;
}

/**
 * What a request drawn from a wallet slice takes from it: up to what is left of the slice's hold
 * (which shrinks by as much; the rest is charged to the balance). 0 when the request has a hold
 * of its own, or the slice is gone (released, or given back by a lease lapse or its TTL).
 */
function drawFromSlice(next: LedgerState, op: { rid: string; actual: number; slice?: string | undefined }): number {
  if (!op.slice || op.slice === op.rid || next.holds[op.rid]) return 0;
  const sh = next.holds[op.slice];
  // A slice is a plain wallet hold (no token, no subscription): anything else is not one.
  if (!sh || sh.s || sh.ta) return 0;
  const taken = Math.min(op.actual, sh.a);
  // A new hold object: earlier states may share the old one (clone copies the map, not its holds).
  next.holds[op.slice] = { ...sh, a: sh.a - taken };
  return taken;
}

/**
 * Settles a request: charges `actual`, giving back (or charging more than) what was held.
 * Charged unconditionally: the usage already happened upstream, so the wallet may go below zero
 * by (actual - reserved). Without a hold (no pre-consume) the whole `actual` is charged; a request
 * drawn from a wallet slice (`slice`, the slice's hold id) is charged from that hold first.
 */
export function settle(
  state: LedgerState,
  op: {
    rid: string;
    actual: number;
    tokenId: number;
    tokenLimited: boolean;
    now?: number;
    timeZone?: string;
    slice?: string | undefined;
  },
): { state: LedgerState; delta: number; subscription?: string } {
  assertAmount(op.actual);
  const next = clone(state);
  const h = next.holds[op.rid];
  const reserved = h?.a ?? drawFromSlice(next, op);
  const tokenId = h?.t || op.tokenId;
  // A request whose pre-consume a subscription paid is charged to that subscription's windows
  // (all of them, beyond their limit if the usage was above the reservation), not to the wallet.
  const sub = h?.s && next.subs?.[h.s] ? h.s : undefined;
  const delta = sub ? 0 : op.actual - reserved;
  if (sub && next.subs) {
    const released = releaseSubscription(next.subs, sub, h?.sa ?? 0);
    next.subs = chargeSubscription(released, sub, op.actual, op.now ?? Date.now(), op.timeZone ?? 'UTC');
  }
  next.quota -= delta;
  next.used_quota += op.actual;
  next.request_count += 1;
  if (tokenId) {
    const t = next.tokens[String(tokenId)] ?? { r: 0, u: 0 };
    t.u += op.actual;
    if (h ? h.l : op.tokenLimited) t.r -= op.actual - (h?.ta ?? 0);
    next.tokens[String(tokenId)] = t;
  }
  delete next.holds[op.rid];
  return { state: next, delta, ...(sub ? { subscription: sub } : {}) };
}

/** Gives back everything held for a request. */
export function refund(state: LedgerState, rid: string): { state: LedgerState; refunded: number } {
  const h = state.holds[rid];
  if (!h) return { state, refunded: 0 };
  const next = clone(state);
  next.quota += h.a;
  if (h.s && next.subs) next.subs = releaseSubscription(next.subs, h.s, h.sa ?? 0);
  if (h.t && h.ta) {
    const t = next.tokens[String(h.t)];
    if (t) t.r += h.ta;
  }
  delete next.holds[rid];
  return { state: next, refunded: h.a };
}

/** Adds quota (gifts, rewards, redemption, top-up). */
export function credit(state: LedgerState, amount: number): LedgerState {
  if (!Number.isInteger(amount) || amount <= 0) throw invalid('额度必须为正整数');
  return { ...clone(state), quota: state.quota + amount };
}

/** Admin change: add (may be negative) or set. */
export function adjust(state: LedgerState, mode: 'add' | 'set', amount: number): LedgerState {
  if (!Number.isInteger(amount)) throw invalid('额度必须为整数');
  return { ...clone(state), quota: mode === 'add' ? state.quota + amount : amount };
}

/** Sets a token's remaining quota (create, edit); keeps its used quota. */
export function setTokenRemain(state: LedgerState, tokenId: number, remain: number): LedgerState {
  assertAmount(remain);
  const next = clone(state);
  const t = next.tokens[String(tokenId)] ?? { r: 0, u: 0 };
  next.tokens[String(tokenId)] = { ...t, r: remain };
  return next;
}

/** Forgets a deleted token's balances. */
export function dropToken(state: LedgerState, tokenId: number): LedgerState {
  const next = clone(state);
  delete next.tokens[String(tokenId)];
  return next;
}
