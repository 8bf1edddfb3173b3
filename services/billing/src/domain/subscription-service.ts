import { randomBytes } from 'node:crypto';
import { invalid, notFound, precondition } from '@aigw/common/errors';
import { LogType } from '@aigw/proto/common/v1/common';
import type { PlanDoc, PlanRepository } from '../data/plan-repository.ts';
import type { LedgerState } from './ledger-state.ts';
import type { BillingEvents, OptionReader } from './ports.ts';
import {
  invalidateSubscription,
  isActive,
  newSubscription,
  normalizePreference,
  PREFERENCES,
  purchasesOf,
  type Sub,
  usage,
  WINDOWS,
  windowEnd,
} from './subscription-state.ts';
import type { WalletLedger } from './wallet-ledger.ts';

/** A plan as the API shows it (new-api's SubscriptionPlan JSON, plus the windows and binding). */
export type PlanView = Omit<PlanDoc, '_id'> & { id: number };

/** A user's subscription with the usage of its windows now. */
export interface SubscriptionView {
  id: string;
  userId: number;
  planId: number;
  planTitle: string;
  startTime: number;
  endTime: number;
  status: 'active' | 'expired' | 'cancelled';
  source: string;
  windows: { period: string; limit: number; used: number; startTime: number; nextResetTime: number }[];
  models: string[];
  group: string;
}

const DURATION_UNITS = ['year', 'month', 'day', 'hour', 'custom'];
const MAX_PRICE = 9999;

/** A request id is a key of the ledger state's holds: no `.` or `$` (a stored key cannot hold them). */
const checkRequestId = (rid: string) => {
  if (!/^[\w:@/-]{1,128}$/.test(rid)) throw invalid('request_id 格式错误');
  return rid;
};

const quotaField = (v: unknown, name: string) => {
  const n = Number(v ?? 0);
  if (!Number.isInteger(n) || n < 0) throw invalid(`${name}必须为非负整数`);
  return n;
};

/**
 * Checks and normalizes an admin's plan (new-api's checks and messages: 套餐标题不能为空,
 * 价格不能为负数, 价格不能超过9999...). Throws INVALID_ARGUMENT; nothing is written on a refusal.
 */
export function normalizePlan(
  input: Partial<PlanView>,
  groups: string[],
): Omit<PlanDoc, '_id' | 'created_at' | 'updated_at'> {
  const title = String(input.title ?? '').trim();
  if (!title) throw invalid('套餐标题不能为空');
  if (title.length > 128) throw invalid('套餐标题过长');
  const price = Number(input.price_amount ?? 0);
  if (!Number.isFinite(price) || price < 0) throw invalid('价格不能为负数');
  if (price > MAX_PRICE) throw invalid('价格不能超过9999');
  const unit = String(input.duration_unit || 'month');
  if (!DURATION_UNITS.includes(unit)) throw invalid('无效的时长单位');
  let value = Number(input.duration_value ?? 1);
  if (unit !== 'custom' && (!Number.isInteger(value) || value <= 0)) value = 1;
  const customSeconds = Number(input.custom_seconds ?? 0);
  if (unit === 'custom' && (!Number.isInteger(customSeconds) || customSeconds <= 0))
    throw invalid('自定义时长需大于0秒');
  const maxPurchase = Number(input.max_purchase_per_user ?? 0);
  if (!Number.isInteger(maxPurchase) || maxPurchase < 0) throw invalid('购买上限不能为负数');
  const group = String(input.group ?? '').trim();
  if (String(input.stripe_price_id ?? '').length > 128 || String(input.creem_product_id ?? '').length > 128)
    throw invalid('支付商品ID过长');
  if (group && !groups.includes(group)) throw invalid('分组不存在');
  const models = (Array.isArray(input.models) ? input.models : String(input.models ?? '').split(','))
    .map((m) => String(m).trim())
    .filter(Boolean);
  return {
    title,
    subtitle: String(input.subtitle ?? '').slice(0, 255),
    price_amount: price,
    currency: 'USD',
    duration_unit: unit,
    duration_value: unit === 'custom' ? 0 : value,
    custom_seconds: unit === 'custom' ? customSeconds : 0,
    enabled: input.enabled ?? true,
    sort_order: Number.isFinite(Number(input.sort_order)) ? Number(input.sort_order) : 0,
    allow_balance_pay: input.allow_balance_pay ?? true,
    max_purchase_per_user: maxPurchase,
    daily_quota: quotaField(input.daily_quota, '每日额度'),
    weekly_quota: quotaField(input.weekly_quota, '每周额度'),
    monthly_quota: quotaField(input.monthly_quota, '每月额度'),
    total_amount: quotaField(input.total_amount, '总额度'),
    models: [...new Set(models)],
    group,
    stripe_price_id: String(input.stripe_price_id ?? '').trim(),
    creem_product_id: String(input.creem_product_id ?? '').trim(),
  };
}

export const planView = ({ _id, ...rest }: PlanDoc): PlanView => ({ ...rest, id: _id });

/** A subscription of the ledger state as the API shows it, with its windows at `now`. */
export function subscriptionView(userId: number, id: string, s: Sub, now: number, timeZone: string): SubscriptionView {
  const active = isActive(s, now);
  return {
    id,
    userId,
    planId: s.p,
    planTitle: s.t,
    startTime: Math.floor(s.st / 1000),
    endTime: Math.floor(s.end / 1000),
    status: s.x ? 'cancelled' : active || now < s.st ? 'active' : 'expired',
    source: s.src,
    windows: usage(s, now, timeZone).map((w) => ({
      period: w.kind,
      limit: w.limit,
      used: w.used,
      startTime: Math.floor(w.start / 1000),
      nextResetTime: Math.floor(Math.min(windowEnd(w.kind, w.start, s, timeZone), s.end) / 1000),
    })),
    models: s.mo ?? [],
    group: s.g ?? '',
  };
}

/** What the subscription factories need. */
type SubscriptionDeps = {
  plans: PlanRepository;
  ledger: WalletLedger;
  events: BillingEvents;
  options: OptionReader;
  groups: () => string[];
};

const timeZoneOf = (options: OptionReader) => options.text('TimeZone') || 'UTC';

/** The plans (admin): read one, list, create or change, enable or disable. */
export function planCatalogue(deps: { plans: PlanRepository; groups: () => string[] }) {
  const { plans } = deps;

  async function planOf(id: number): Promise<PlanDoc> {
    if (!Number.isInteger(id) || id <= 0) throw invalid('无效的ID');
    const plan = await plans.get(id);
    if (!plan) throw notFound('套餐不存在');
    return plan;
  }

  return {
    planOf,

    async listPlans(enabledOnly: boolean): Promise<PlanView[]> {
      return (await plans.list(enabledOnly)).map(planView);
    },

    async savePlan(input: Partial<PlanView>): Promise<PlanView> {
      const plan = normalizePlan(input, deps.groups());
      const now = Math.floor(Date.now() / 1000);
      const id = Number(input.id ?? 0);
      if (!id) return planView(await plans.create({ ...plan, created_at: now, updated_at: now }));
      const saved = await plans.update(id, { ...plan, updated_at: now });
      if (!saved) throw notFound('套餐不存在');
      return planView(saved);
    },

    async setPlanEnabled(id: number, enabled: boolean): Promise<PlanView> {
      await planOf(id);
      const saved = await plans.setEnabled(id, enabled, Math.floor(Date.now() / 1000));
      if (!saved) throw notFound('套餐不存在');
      return planView(saved);
    },
  };
}

/**
 * Starts a subscription of `plan` for the user in one ledger entry, debiting `cost` (0: none).
 * `limited`: refused beyond the plan's max_purchase_per_user (a paid order was checked when made).
 */
async function startSubscription(
  ledger: WalletLedger,
  timeZone: string,
  req: { userId: number; opId: string; plan: PlanDoc; cost: number; source: string; limited: boolean },
) {
  const { userId, plan, cost, limited } = req;
  // The user's id leads, so that admin routes find the subscription's ledger from its id alone.
  const subId = `${userId}-${randomBytes(6).toString('hex')}`;
  const applied = await ledger.apply(userId, req.opId, (s) => {
    if (cost > 0 && s.quota < cost) throw precondition('余额不足');
    if (limited && plan.max_purchase_per_user > 0) {
      if (purchasesOf(s, plan._id) >= plan.max_purchase_per_user) throw precondition('已达到该套餐的购买上限');
    }
    const sub = newSubscription({ ...plan, id: plan._id }, Date.now(), req.source);
    return {
      kind: 'subscribe',
      amount: cost,
      state: { ...s, quota: s.quota - cost, subs: { ...s.subs, [subId]: sub } },
      result: { subscription_id: subId, charged: cost, plan_id: plan._id },
    };
  });
  const id = String(applied.op.result.subscription_id);
  const sub = applied.state.subs?.[id];
  if (!sub) throw notFound('订阅不存在');
  return { applied, view: subscriptionView(userId, id, sub, Date.now(), timeZone) };
}

/** The ways a subscription starts: a paid order, a purchase with the balance, an admin's binding. */
export function subscriptionPurchases(deps: SubscriptionDeps & { planOf: (id: number) => Promise<PlanDoc> }) {
  const { ledger, events, options, planOf } = deps;
  const start = (userId: number, opId: string, plan: PlanDoc, cost: number, source: string, limited = true) =>
    startSubscription(ledger, timeZoneOf(options), { userId, opId, plan, cost, source, limited });

  return {
    /**
     * Starts the subscription of an order a payment gateway reported paid, once per trade number
     * (ledger operation `subscribe:<user>:order-<trade_no>`); true when this call started it.
     */
    async activateOrder(order: { userId: number; username: string; planId: number; tradeNo: string; money: number }) {
      const plan = await planOf(order.planId);
      const opId = `subscribe:${order.userId}:order-${order.tradeNo}`;
      const { applied } = await start(order.userId, opId, plan, 0, 'order', false);
      await events.walletChanged(order.userId);
      await events.audit({
        eventId: `billing:${opId}`,
        userId: order.userId,
        username: order.username,
        type: LogType.TOPUP,
        content: `在线支付购买订阅成功，套餐: ${plan.title}，支付金额: ${order.money.toFixed(2)}`,
        quotaDelta: 0,
        actorUserId: 0,
      });
      return !applied.replayed;
    },

    /** new-api's balance purchase: price x QuotaPerUnit (rounded up) from the wallet. */
    async purchaseWithBalance(req: { userId: number; username: string; planId: number; requestId: string }) {
      const rid = checkRequestId(req.requestId);
      const plan = await planOf(req.planId);
      if (!plan.enabled) throw precondition('套餐未启用');
      if (!plan.allow_balance_pay) throw precondition('该套餐不允许使用余额兑换');
      const perUnit = options.number('QuotaPerUnit');
      if (!(perUnit > 0)) throw precondition('额度单位配置错误');
      const cost = Math.ceil(plan.price_amount * perUnit - 1e-9);
      const { applied, view } = await start(req.userId, `subscribe:${req.userId}:${rid}`, plan, cost, 'order');
      const charged = Number(applied.op.result.charged);
      await events.walletChanged(req.userId);
      await events.audit({
        eventId: `billing:subscribe:${req.userId}:${rid}`,
        userId: req.userId,
        username: req.username,
        type: LogType.TOPUP,
        content: `使用余额购买订阅成功，套餐: ${plan.title}，支付金额: ${plan.price_amount.toFixed(2)}，扣除额度: ${charged}`,
        quotaDelta: -charged,
        actorUserId: 0,
      });
      return { subscription: view, chargedQuota: charged, replayed: applied.replayed };
    },

    async bind(req: { userId: number; planId: number; requestId: string; actorUserId: number }) {
      const rid = checkRequestId(req.requestId);
      if (!Number.isInteger(req.userId) || req.userId <= 0) throw invalid('无效的用户ID');
      const plan = await planOf(req.planId);
      const { view } = await start(req.userId, `subscribe:${req.userId}:${rid}`, plan, 0, 'admin');
      await events.walletChanged(req.userId);
      await events.audit({
        eventId: `billing:subscribe:${req.userId}:${rid}`,
        userId: req.userId,
        username: '',
        type: LogType.MANAGE,
        content: `管理员为用户添加订阅，套餐: ${plan.title}`,
        quotaDelta: 0,
        actorUserId: req.actorUserId,
      });
      return view;
    },
  };
}

/** A user's subscriptions: how many of a plan, the list with windows, the billing preference, invalidation. */
export function userSubscriptions(deps: SubscriptionDeps) {
  const { ledger, events } = deps;

  /** The user's subscriptions: those in the state, and the ended ones archived out of it. */
  const views = (userId: number, state: LedgerState, ended: Record<string, Sub>) => {
    const now = Date.now();
    return Object.entries({ ...ended, ...state.subs })
      .map(([id, s]) => subscriptionView(userId, id, s, now, timeZoneOf(deps.options)))
      .sort((a, b) => b.startTime - a.startTime || b.id.localeCompare(a.id));
  };

  return {
    /** How many subscriptions of a plan the user holds (any status): new-api's purchase limit. */
    async countOf(userId: number, planId: number): Promise<number> {
      return purchasesOf(await ledger.state(userId), planId);
    },

    async ofUser(userId: number) {
      const [state, ended] = await Promise.all([ledger.state(userId), ledger.endedSubscriptions(userId)]);
      const all = views(userId, state, ended);
      return {
        billingPreference: normalizePreference(state.pref),
        subscriptions: all.filter((v) => v.status === 'active'),
        allSubscriptions: all,
      };
    },

    async setPreference(userId: number, preference: string): Promise<string> {
      if (!(PREFERENCES as readonly string[]).includes(preference)) throw invalid('参数错误');
      await ledger.apply(userId, `pref:${randomBytes(8).toString('hex')}`, (s) => ({
        kind: 'preference',
        amount: 0,
        state: { ...s, pref: preference },
        result: { billing_preference: preference },
      }));
      // Relays read whether a subscription may pay (wallet_only says no) with the balance.
      await events.walletChanged(userId);
      return preference;
    },

    async invalidate(req: { userId: number; subscriptionId: string }) {
      const owner = /^(\d{1,15})-[0-9a-f]{12}$/.exec(req.subscriptionId);
      if (!owner || (req.userId && Number(owner[1]) !== req.userId)) throw invalid('无效的ID');
      const userId = Number(owner[1]);
      await ledger.apply(userId, `unsubscribe:${req.subscriptionId}`, (s) => ({
        kind: 'unsubscribe',
        amount: 0,
        state: { ...s, subs: invalidateSubscription(s.subs, req.subscriptionId, Date.now()) },
        result: {},
      }));
      await events.walletChanged(userId);
    },
  };
}

/**
 * Subscription use cases: plans (admin), purchase with the wallet, admin binding and invalidation,
 * the billing preference, and the user's subscriptions with their windows. Every change of a
 * user's subscriptions is a ledger entry (wallet-ledger.ts) with an idempotency key, so a purchase
 * debits the wallet and starts the subscription in one write, once.
 */
export function subscriptionService(deps: SubscriptionDeps) {
  const catalogue = planCatalogue(deps);
  return {
    ...catalogue,
    ...subscriptionPurchases({ ...deps, planOf: catalogue.planOf }),
    ...userSubscriptions(deps),
  };
}

export type SubscriptionService = ReturnType<typeof subscriptionService>;
export { WINDOWS };
