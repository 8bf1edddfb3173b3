import { AppError, invalid, notFound, precondition } from '@aigw/common/errors';
import { LogType } from '@aigw/proto/common/v1/common';
import { adjust, credit, type LedgerState, slicesHeld } from './ledger-state.ts';
import { type BillingEvents, describeQuota, type OptionReader, type SliceRevokes } from './ports.ts';
import { subscriptionActive } from './subscription-state.ts';
import { periodClock, type TokenBudgets } from './token-budgets.ts';
import type { WalletLedger } from './wallet-ledger.ts';
import { type HoldRequest, holdOp, type OpClock, refundOp, settleOp } from './wallet-ops.ts';

/** The wallet fields of a user. */
export interface WalletView {
  userId: number;
  quota: number;
  usedQuota: number;
  requestCount: number;
  /** Whether an active subscription may pay the user's requests (subscription-state.ts). */
  subscriptionActive: boolean;
  /** Wallet slices relays hold for the user, and what is left of them. */
  walletSlices: number;
  walletSliceQuota: number;
}

/** Tells whether a token exists for a user and whether its quota is limited. */
export type TokenLimitLookup = (
  tokenId: number,
) => Promise<{ userId: number; unlimited: boolean; budgets?: TokenBudgets } | null>;

export const walletView = (userId: number, s: LedgerState): WalletView => {
  const slices = slicesHeld(s);
  return {
    userId,
    quota: s.quota,
    usedQuota: s.used_quota,
    requestCount: s.request_count,
    subscriptionActive: subscriptionActive(s, Date.now()),
    walletSlices: slices.count,
    walletSliceQuota: slices.quota,
  };
};

/** Credit reasons (billing.v1.CreditReason) and how each is logged. */
/** How long a token's limited/unlimited flag is reused by pre-consumes and settles. */
const TOKEN_LIMIT_TTL_MS = 1_000;

const CREDIT_LOG_TYPE: Record<number, LogType.TOPUP | LogType.SYSTEM> = { 4: LogType.TOPUP };

/** A request id is a key of the ledger state's holds: no `.` or `$` (a stored key cannot hold them). */
const checkRequestId = (rid: string) => {
  if (!/^[\w:@/-]{1,128}$/.test(rid)) throw invalid('request_id 格式错误');
  return rid;
};

/** The lease age a relay reported, when it is a usable one (a whole number of ms, not negative). */
const leaseAgeOf = (ms: number | undefined) =>
  ms !== undefined && Number.isFinite(ms) && ms >= 0 ? Math.round(ms) : undefined;

/**
 * Whether a token is limited, shared by the concurrent requests of a burst (one read per token
 * and second instead of one per request); a change reaches holds within TOKEN_LIMIT_TTL_MS.
 */
export function tokenLimitCache(lookup: TokenLimitLookup): TokenLimitLookup {
  const limits = new Map<number, { at: number; value: ReturnType<TokenLimitLookup> }>();
  return (tokenId) => {
    const now = Date.now();
    const hit = limits.get(tokenId);
    if (hit && now - hit.at < TOKEN_LIMIT_TTL_MS) return hit.value;
    const value = lookup(tokenId);
    limits.set(tokenId, { at: now, value });
    value.catch(() => limits.delete(tokenId));
    if (limits.size > 10_000) limits.delete(limits.keys().next().value as number);
    return value;
  };
}

/** A relay's pre-consume as it arrives. */
export interface PreConsumeInput {
  requestId: string;
  userId: number;
  tokenId: number;
  amount: number;
  model?: string;
  group?: string;
  leaseAgeMs?: number | undefined;
  /** A relay's wallet slice (wallet-ops.ts): the wallet only, no token; `sliceMin` its least size. */
  walletSlice?: boolean;
  sliceMin?: number;
}

/** A pre-consume checked and resolved into what its hold needs (the token's limits and budgets). */
async function holdRequestOf(
  req: PreConsumeInput,
  tokenLimit: TokenLimitLookup,
  timeZone: string,
): Promise<HoldRequest> {
  const rid = checkRequestId(req.requestId);
  const leaseAgeMs = leaseAgeOf(req.leaseAgeMs);
  if (!Number.isInteger(req.amount) || req.amount < 0) throw invalid('额度必须为非负整数');
  if (req.walletSlice && req.tokenId) throw invalid('钱包分片不属于令牌');
  const min = req.sliceMin || req.amount;
  if (req.walletSlice && (!Number.isInteger(min) || min <= 0 || min > req.amount)) throw invalid('钱包分片额度错误');
  let tokenLimited = false;
  let budgets: TokenBudgets | undefined;
  if (req.tokenId) {
    const t = await tokenLimit(req.tokenId);
    if (!t || t.userId !== req.userId) throw notFound('令牌不存在');
    tokenLimited = !t.unlimited;
    budgets = t.budgets;
  }
  // The subscription or the wallet: chosen in the same entry as the hold (ledger-state.ts).
  const funding = { model: req.model ?? '', group: req.group ?? '', timeZone };
  const slice = req.walletSlice ? { slice: true, sliceMin: min } : {};
  return { rid, amount: req.amount, tokenId: req.tokenId, tokenLimited, budgets, funding, leaseAgeMs, ...slice };
}

type WalletDeps = {
  ledger: WalletLedger;
  tokenLimit: TokenLimitLookup;
  events: BillingEvents;
  options: OptionReader;
  /** Absent: a refusal never asks wallet slices back (and is not marked retryable). */
  slices?: SliceRevokes;
};

/**
 * A refused hold marked retryable (wallet-ops.ts, revocableRefusal): the relays holding the user's
 * slices are asked to give them back; without a way to ask, the plain refusal.
 */
function refusalOf(err: unknown, userId: number, slices: SliceRevokes | undefined): unknown {
  if (!(err instanceof AppError) || err.retryAfterMs === undefined) return err;
  if (!slices) return new AppError(err.code, err.message);
  slices.revoke(userId);
  return err;
}

/**
 * The relay's side: pre-consume, settle and refund of a request, and the settle consumer's batch
 * of closes. `tokenLimit` is the cached lookup (tokenLimitCache).
 */
export function requestCharges(deps: WalletDeps) {
  const { ledger, tokenLimit, options } = deps;
  const clock: OpClock = {
    timeZone: () => options.text('TimeZone') || 'UTC',
    periods: periodClock(() => options.text('TimeZone')),
  };

  /** The user of a request id, from its pre-consume entry. */
  async function holderOf(rid: string): Promise<number | undefined> {
    return (await ledger.findOp(`hold:${rid}`))?.user_id;
  }

  return {
    async preConsume(req: PreConsumeInput, opts: { signal?: AbortSignal } = {}) {
      const hold = await holdRequestOf(req, tokenLimit, clock.timeZone());
      const { op, state: after } = await ledger
        .submit(req.userId, holdOp(hold, clock, opts.signal))
        .catch((err: unknown) => Promise.reject(refusalOf(err, req.userId, deps.slices)));
      return {
        preConsumed: Number(op.result.pre_consumed),
        userQuota: Number(op.result.user_quota),
        tokenRemainQuota: Number(op.result.token_remain_quota),
        subscriptionId: String(op.result.subscription_id ?? ''),
        subscriptionActive: subscriptionActive(after, Date.now()),
      };
    },

    async settle(req: { requestId: string; actual: number; userId: number; tokenId: number }) {
      const rid = checkRequestId(req.requestId);
      const userId = req.userId || (await holderOf(rid));
      if (!userId) throw invalid('缺少 user_id');
      let tokenLimited = false;
      if (req.tokenId) tokenLimited = !((await tokenLimit(req.tokenId))?.unlimited ?? true);
      const { op } = await ledger.submit(userId, settleOp(rid, req.actual, req.tokenId, tokenLimited, clock));
      if (op.kind !== 'settle') throw precondition('该请求已退款，不能再结算');
      return { delta: Number(op.result.delta), userQuota: Number(op.result.user_quota) };
    },

    async refund(req: { requestId: string; userId?: number }) {
      const rid = checkRequestId(req.requestId);
      const userId = req.userId || (await holderOf(rid));
      if (!userId) return { refunded: 0 };
      const { op } = await ledger.submit(userId, refundOp(rid));
      if (op.kind !== 'refund') throw precondition('该请求已结算，不能退款');
      return { refunded: Number(op.result.refunded) };
    },

    /**
     * Closes many requests at once (the usage settle consumer): each a settle (`actual` given) or
     * a refund, all submitted together so that each user's closes share one ledger entry. Closes
     * already recorded (replays, a refund after a settle) answer without changing anything, refused
     * ones answer kind `refused`; a rejected promise is an infrastructure failure. A settle that
     * names a wallet slice (`slice`) is charged from that slice's hold; the release of a slice
     * (`release`) is the refund of its id (what is left of it goes back).
     */
    async closeMany(
      closes: {
        requestId: string;
        userId: number;
        tokenId: number;
        actual?: number;
        slice?: string;
        release?: boolean;
      }[],
    ): Promise<{ requestId: string; kind: string; replayed: boolean }[]> {
      const limited = new Map<number, boolean>();
      for (const tokenId of new Set(closes.map((c) => c.tokenId).filter((t) => t > 0))) {
        limited.set(tokenId, !((await tokenLimit(tokenId))?.unlimited ?? true));
      }
      return Promise.all(
        closes.map(async (c) => {
          try {
            const rid = checkRequestId(c.requestId);
            const op =
              c.actual === undefined
                ? refundOp(rid)
                : settleOp(rid, c.actual, c.tokenId, limited.get(c.tokenId) ?? false, clock, c.slice);
            const applied = await ledger.submit(c.userId, op);
            if (c.release && !applied.replayed) deps.slices?.released(c.userId);
            return { requestId: c.requestId, kind: applied.op.kind, replayed: applied.replayed };
          } catch (err) {
            // A refused close (a malformed event) is answered, not retried; infrastructure errors are.
            if (err instanceof AppError && err.code !== 'UNAVAILABLE' && err.code !== 'INTERNAL') {
              return { requestId: c.requestId, kind: 'refused', replayed: false };
            }
            throw err;
          }
        }),
      );
    },
  };
}

/** Wallets read and changed outside requests: reads for screens, an admin's change, credits. */
export function walletChanges(deps: WalletDeps) {
  const { ledger, events, options } = deps;

  return {
    async get(userId: number): Promise<WalletView> {
      return walletView(userId, await ledger.state(userId));
    },

    /** Wallets for lists (user pages): this replica's newest known states, without probing for newer ones. */
    async getMany(userIds: number[]): Promise<WalletView[]> {
      return Promise.all(userIds.map(async (id) => walletView(id, await ledger.state(id, { fresh: false }))));
    },

    async adjustQuota(req: {
      requestId: string;
      userId: number;
      username: string;
      mode: 'add' | 'set';
      amount: number;
      remark: string;
      actor: { userId: number; username: string };
    }): Promise<WalletView> {
      const rid = checkRequestId(req.requestId);
      const { op, state } = await ledger.apply(req.userId, `adjust:${rid}`, (s) => {
        const next = adjust(s, req.mode, req.amount);
        return { kind: `adjust_${req.mode}`, amount: req.amount, state: next, result: { delta: next.quota - s.quota } };
      });
      // Published on replays too (same event id): an event lost to a crash is sent again.
      await events.walletChanged(req.userId);
      {
        const delta = Number(op.result.delta);
        const what =
          req.mode === 'add'
            ? `管理员${delta >= 0 ? '增加' : '减少'}用户额度 ${describeQuota(Math.abs(delta), options)}`
            : `管理员将用户额度设为 ${describeQuota(req.amount, options)}`;
        await events.audit({
          eventId: `billing:adjust:${rid}`,
          userId: req.userId,
          username: req.username,
          type: LogType.MANAGE,
          content: req.remark ? `${what}（${req.remark}）` : what,
          quotaDelta: delta,
          actorUserId: req.actor.userId,
        });
      }
      return walletView(req.userId, state);
    },

    async credit(req: {
      requestId: string;
      userId: number;
      username: string;
      amount: number;
      reason: number;
      content: string;
    }): Promise<{ wallet: WalletView; replayed: boolean }> {
      const rid = checkRequestId(req.requestId);
      const { state, replayed } = await ledger.apply(req.userId, `credit:${rid}`, (s) => ({
        kind: 'credit',
        amount: req.amount,
        state: credit(s, req.amount),
        result: { reason: req.reason },
      }));
      // Replays too: the event of a credit whose caller crashed before publishing is sent again.
      await events.walletChanged(req.userId);
      if (req.content) {
        await events.audit({
          eventId: `billing:credit:${rid}`,
          userId: req.userId,
          username: req.username,
          type: CREDIT_LOG_TYPE[req.reason] ?? LogType.SYSTEM,
          content: req.content,
          quotaDelta: req.amount,
          actorUserId: 0,
        });
      }
      return { wallet: walletView(req.userId, state), replayed };
    },
  };
}

/**
 * Quota use cases: the relay's pre-consume / settle / refund, admin changes and credits. Every
 * one is idempotent by its request id (see wallet-ledger.ts). Balance bound: a pre-consume never
 * takes the wallet (or a limited token) below 0; a settle charges real usage unconditionally, so
 * the wallet can go below 0 only by what requests used beyond what they reserved.
 */
export function walletService(deps: WalletDeps) {
  const tokenLimit = tokenLimitCache(deps.tokenLimit);
  return { ...walletChanges(deps), ...requestCharges({ ...deps, tokenLimit }) };
}

export type WalletService = ReturnType<typeof walletService>;
