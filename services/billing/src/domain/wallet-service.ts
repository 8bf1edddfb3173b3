import { invalid, notFound, precondition } from '@aigw/common/errors';
import { adjust, credit, hold, type LedgerState, refund, settle } from './ledger-state.ts';
import { type AuditRecord, type BillingEvents, describeQuota, LOG_TYPE, type OptionReader } from './ports.ts';
import type { WalletLedger } from './wallet-ledger.ts';

/** The wallet fields of a user. */
export interface WalletView {
  userId: number;
  quota: number;
  usedQuota: number;
  requestCount: number;
}

/** Tells whether a token exists for a user and whether its quota is limited. */
export type TokenLimitLookup = (tokenId: number) => Promise<{ userId: number; unlimited: boolean } | null>;

export const walletView = (userId: number, s: LedgerState): WalletView => ({
  userId,
  quota: s.quota,
  usedQuota: s.used_quota,
  requestCount: s.request_count,
});

/** Credit reasons (billing.v1.CreditReason) and how each is logged. */
const CREDIT_LOG_TYPE: Record<number, 1 | 4> = { 4: LOG_TYPE.topup };

const checkRequestId = (rid: string) => {
  if (!/^[\w.:@/-]{1,128}$/.test(rid)) throw invalid('request_id 格式错误');
  return rid;
};

/**
 * Quota use cases: the relay's pre-consume / settle / refund, admin changes and credits. Every
 * one is idempotent by its request id (see wallet-ledger.ts). Balance bound: a pre-consume never
 * takes the wallet (or a limited token) below 0; a settle charges real usage unconditionally, so
 * the wallet can go below 0 only by what requests used beyond what they reserved.
 */
export function walletService(deps: {
  ledger: WalletLedger;
  tokenLimit: TokenLimitLookup;
  events: BillingEvents;
  options: OptionReader;
}) {
  const { ledger, events, options } = deps;

  async function publishAudit(record: AuditRecord): Promise<void> {
    await events.audit(record);
  }

  /** The user of a request id, from its pre-consume entry. */
  async function holderOf(rid: string): Promise<number | undefined> {
    return (await ledger.findOp(`hold:${rid}`))?.user_id;
  }

  return {
    async get(userId: number): Promise<WalletView> {
      return walletView(userId, await ledger.state(userId));
    },

    async getMany(userIds: number[]): Promise<WalletView[]> {
      return Promise.all(userIds.map(async (id) => walletView(id, await ledger.state(id))));
    },

    async preConsume(req: { requestId: string; userId: number; tokenId: number; amount: number }) {
      const rid = checkRequestId(req.requestId);
      if (!Number.isInteger(req.amount) || req.amount < 0) throw invalid('额度必须为非负整数');
      let tokenLimited = false;
      if (req.tokenId) {
        const t = await deps.tokenLimit(req.tokenId);
        if (!t || t.userId !== req.userId) throw notFound('令牌不存在');
        tokenLimited = !t.unlimited;
      }
      const { entry } = await ledger.apply(req.userId, `hold:${rid}`, (s) => {
        const next = hold(s, { rid, amount: req.amount, tokenId: req.tokenId, tokenLimited, now: Date.now() });
        const tokenRemain = req.tokenId ? (next.tokens[String(req.tokenId)]?.r ?? 0) : 0;
        return {
          kind: 'hold',
          amount: req.amount,
          state: next,
          result: { pre_consumed: req.amount, user_quota: next.quota, token_remain_quota: tokenRemain },
        };
      });
      return {
        preConsumed: Number(entry.result.pre_consumed),
        userQuota: Number(entry.result.user_quota),
        tokenRemainQuota: Number(entry.result.token_remain_quota),
      };
    },

    async settle(req: { requestId: string; actual: number; userId: number; tokenId: number }) {
      const rid = checkRequestId(req.requestId);
      const userId = (await holderOf(rid)) ?? req.userId;
      if (!userId) throw invalid('缺少 user_id');
      let tokenLimited = false;
      if (req.tokenId) tokenLimited = !((await deps.tokenLimit(req.tokenId))?.unlimited ?? true);
      const { entry } = await ledger.apply(userId, `close:${rid}`, (s) => {
        const { state, delta } = settle(s, { rid, actual: req.actual, tokenId: req.tokenId, tokenLimited });
        return { kind: 'settle', amount: req.actual, state, result: { delta, user_quota: state.quota } };
      });
      if (entry.kind !== 'settle') throw precondition('该请求已退款，不能再结算');
      return { delta: Number(entry.result.delta), userQuota: Number(entry.result.user_quota) };
    },

    async refund(req: { requestId: string }) {
      const rid = checkRequestId(req.requestId);
      const userId = await holderOf(rid);
      if (!userId) return { refunded: 0 };
      const { entry } = await ledger.apply(userId, `close:${rid}`, (s) => {
        const { state, refunded } = refund(s, rid);
        return { kind: 'refund', amount: refunded, state, result: { refunded } };
      });
      if (entry.kind !== 'refund') throw precondition('该请求已结算，不能退款');
      return { refunded: Number(entry.result.refunded) };
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
      const { entry } = await ledger.apply(req.userId, `adjust:${rid}`, (s) => {
        const state = adjust(s, req.mode, req.amount);
        return { kind: `adjust_${req.mode}`, amount: req.amount, state, result: { delta: state.quota - s.quota } };
      });
      // Published on replays too (same event id): an event lost to a crash is sent again.
      {
        const delta = Number(entry.result.delta);
        const what =
          req.mode === 'add'
            ? `管理员${delta >= 0 ? '增加' : '减少'}用户额度 ${describeQuota(Math.abs(delta), options)}`
            : `管理员将用户额度设为 ${describeQuota(req.amount, options)}`;
        await publishAudit({
          eventId: `billing:adjust:${rid}`,
          userId: req.userId,
          username: req.username,
          type: LOG_TYPE.manage,
          content: req.remark ? `${what}（${req.remark}）` : what,
          quotaDelta: delta,
          actorUserId: req.actor.userId,
        });
      }
      return walletView(req.userId, entry.state);
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
      const { entry, replayed } = await ledger.apply(req.userId, `credit:${rid}`, (s) => ({
        kind: 'credit',
        amount: req.amount,
        state: credit(s, req.amount),
        result: { reason: req.reason },
      }));
      if (req.content) {
        await publishAudit({
          eventId: `billing:credit:${rid}`,
          userId: req.userId,
          username: req.username,
          type: CREDIT_LOG_TYPE[req.reason] ?? LOG_TYPE.system,
          content: req.content,
          quotaDelta: req.amount,
          actorUserId: 0,
        });
      }
      return { wallet: walletView(req.userId, entry.state), replayed };
    },
  };
}

export type WalletService = ReturnType<typeof walletService>;
