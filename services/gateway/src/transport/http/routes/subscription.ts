import { ok } from '@aigw/common';
import type { SubscriptionPlan, UserSubscription } from '@aigw/proto/billing/v1/billing';
import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from '../deps.ts';
import { body, flag, id, int, optional, optText, pathId, text } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { actorOf, body as bodyOf, caller, snake, str } from './wire.ts';

const money = z.union(
  [
    z.number(),
    z
      .string()
      .regex(/^\d{1,4}(\.\d{1,6})?$/)
      .pipe(z.coerce.number()),
  ],
  {
    error: '价格无效',
  },
);
const count = optional(int(0, Number.MAX_SAFE_INTEGER, '额度必须是非负整数'));
const models = optional(
  z.union([z.array(z.string()), z.string().transform((s) => s.split(','))], { error: '模型必须是字符串数组' }),
);
/** new-api's plan fields, plus the windows (daily/weekly/monthly_quota) and the binding (models, group). */
const Plan = body({
  title: optText,
  subtitle: optText,
  price_amount: optional(money),
  currency: optText,
  duration_unit: optional(z.enum(['year', 'month', 'day', 'hour', 'custom'], { error: '无效的时长单位' })),
  duration_value: optional(int(0, 1000, '时长必须是 0 到 1000 之间的整数')),
  custom_seconds: optional(int(0, 100 * 365 * 86_400, '自定义时长无效')),
  enabled: optional(flag),
  sort_order: optional(int(-1_000_000, 1_000_000, '排序必须是整数')),
  allow_balance_pay: optional(flag),
  max_purchase_per_user: optional(int(0, 1_000_000, '购买上限不能为负数')),
  daily_quota: count,
  weekly_quota: count,
  monthly_quota: count,
  total_amount: count,
  models,
  group: optText,
  stripe_price_id: optText,
  creem_product_id: optText,
});
const Upsert = validate({ body: body({ plan: Plan }) });
const UpdatePlan = validate({ params: pathId, body: body({ plan: Plan }) });
const PlanStatus = validate({ params: pathId, body: body({ enabled: flag }) });
const Preference = validate({
  body: body({
    billing_preference: z.enum(['subscription_first', 'wallet_first', 'subscription_only', 'wallet_only'], {
      error: '参数错误',
    }),
  }),
});
/** request_id: the purchase's idempotency key (the console sends one per purchase dialog). */
const BalancePay = validate({
  body: body({ plan_id: id('参数错误'), request_id: optional(text.pipe(z.string().regex(/^[\w.:@-]{1,64}$/))) }),
});
const EpayPay = validate({ body: body({ plan_id: id('参数错误'), payment_method: optText }) });
const CardPay = validate({ body: body({ plan_id: id('参数错误') }) });
const UserPath = validate({ params: pathId });
const Bind = validate({ body: body({ user_id: id('参数错误'), plan_id: id('参数错误') }) });
const BindToUser = validate({ params: pathId, body: body({ plan_id: id('参数错误') }) });
const SubPath = validate({ params: z.object({ id: z.string().regex(/^\d{1,15}-[0-9a-f]{12}$/, '无效的ID') }) });

/** A double click without a request_id: the same plan within this window buys once. */
const DOUBLE_CLICK_MS = 10_000;

const planJson = (p: SubscriptionPlan | undefined) => (p ? { plan: snake(p) } : null);
const subJson = (s: UserSubscription) => ({
  subscription: { ...snake(s), windows: s.windows.map((w) => snake(w)) },
});

type PlanBody = z.infer<typeof Plan>;
const planMessage = (p: PlanBody, planId = 0) => ({
  id: planId,
  title: p.title ?? '',
  subtitle: p.subtitle ?? '',
  priceAmount: p.price_amount ?? 0,
  currency: p.currency ?? 'USD',
  durationUnit: p.duration_unit ?? 'month',
  durationValue: p.duration_value ?? 1,
  customSeconds: p.custom_seconds ?? 0,
  enabled: p.enabled ?? true,
  sortOrder: p.sort_order ?? 0,
  allowBalancePay: p.allow_balance_pay ?? true,
  maxPurchasePerUser: p.max_purchase_per_user ?? 0,
  dailyQuota: p.daily_quota ?? 0,
  weeklyQuota: p.weekly_quota ?? 0,
  monthlyQuota: p.monthly_quota ?? 0,
  totalAmount: p.total_amount ?? 0,
  models: p.models ?? [],
  group: p.group ?? '',
  stripePriceId: p.stripe_price_id ?? '',
  creemProductId: p.creem_product_id ?? '',
});

/** The subscriptions of the caller (or, for admins, of a user) in new-api's shape. */
const subscriptionsJson = (r: {
  billingPreference: string;
  subscriptions: UserSubscription[];
  allSubscriptions: UserSubscription[];
}) => ({
  billing_preference: r.billingPreference,
  subscriptions: r.subscriptions.map(subJson),
  all_subscriptions: r.allSubscriptions.map(subJson),
});

/** The plans on offer, the caller's subscriptions and billing preference. */
function subscriptionUserRoutes(api: Router, { clients, guard }: RouteDeps): void {
  const { subscriptions } = clients;
  api.get('/subscription/plans', guard.user, async (_req, res) => {
    const r = await subscriptions.listPlans({ enabledOnly: true });
    ok(res, r.plans.map(planJson));
  });

  api.get('/subscription/self', guard.user, async (req, res) => {
    ok(res, subscriptionsJson(await subscriptions.getUserSubscriptions({ userId: caller(req).id })));
  });

  api.put('/subscription/self/preference', guard.user, Preference, async (req, res) => {
    const r = await subscriptions.setBillingPreference({
      userId: caller(req).id,
      billingPreference: input(req, Preference).body.billing_preference,
    });
    ok(res, { billing_preference: r.billingPreference });
  });
}

/** Purchases: with the wallet balance, Epay (and its notification), Stripe and Creem. */
function subscriptionPayRoutes(api: Router, { clients, guard, critical, logger }: RouteDeps): void {
  const { subscriptions } = clients;
  api.post('/subscription/balance/pay', guard.user, BalancePay, async (req, res) => {
    const b = input(req, BalancePay).body;
    const u = caller(req);
    const requestId = b.request_id ?? `p${b.plan_id}-${Math.floor(Date.now() / DOUBLE_CLICK_MS)}`;
    const r = await subscriptions.purchaseWithBalance({
      userId: u.id,
      username: u.username,
      planId: b.plan_id,
      requestId,
    });
    ok(res, {
      subscription: r.subscription ? subJson(r.subscription).subscription : null,
      charged_quota: r.chargedQuota,
    });
  });

  api.post('/subscription/epay/pay', guard.user, EpayPay, async (req, res) => {
    const b = input(req, EpayPay).body;
    const u = caller(req);
    const r = await subscriptions.createSubscriptionEpayOrder({
      userId: u.id,
      username: u.username,
      planId: b.plan_id,
      paymentMethod: b.payment_method ?? '',
    });
    res.json({ success: true, message: 'success', data: r.form, url: r.url });
  });

  // Stripe and Creem: a checkout for the plan; the provider's webhook (/api/stripe/webhook,
  // /api/creem/webhook, the top-up's) starts the subscription once it is paid.
  api.post('/subscription/stripe/pay', guard.user, critical, CardPay, async (req, res) => {
    const u = caller(req);
    const r = await subscriptions.createSubscriptionStripeOrder({
      userId: u.id,
      username: u.username,
      planId: input(req, CardPay).body.plan_id,
      email: '',
    });
    ok(res, { pay_link: r.payLink, trade_no: r.tradeNo }, 'success');
  });

  api.post('/subscription/creem/pay', guard.user, critical, CardPay, async (req, res) => {
    const u = caller(req);
    const r = await subscriptions.createSubscriptionCreemOrder({
      userId: u.id,
      username: u.username,
      planId: input(req, CardPay).body.plan_id,
      email: '',
    });
    ok(res, { checkout_url: r.checkoutUrl, order_id: r.orderId }, 'success');
  });

  // Epay calls back with GET (query) or POST (form) and wants "success" or "fail".
  const notify = async (req: Request, res: Response) => {
    const raw = { ...(req.query as Record<string, unknown>), ...bodyOf(req) };
    const params = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, str(v) ?? '']));
    try {
      const r = await subscriptions.handleSubscriptionEpayNotify({ params });
      res.type('text/plain').send(r.success ? 'success' : 'fail');
    } catch (err) {
      logger.error({ err, tradeNo: params.out_trade_no }, 'subscription payment notification failed');
      res.type('text/plain').send('fail');
    }
  };
  api.get('/subscription/epay/notify', notify);
  api.post('/subscription/epay/notify', express.urlencoded({ extended: false }), notify);
}

/** The admins' plans and users' subscriptions (bind, list, invalidate). */
function subscriptionAdminRoutes(api: Router, { clients, guard }: RouteDeps): void {
  const { subscriptions, users } = clients;
  api.get('/subscription/admin/plans', guard.admin, async (_req, res) => {
    const r = await subscriptions.listPlans({ enabledOnly: false });
    ok(res, r.plans.map(planJson));
  });

  api.post('/subscription/admin/plans', guard.admin, Upsert, async (req, res) => {
    const r = await subscriptions.savePlan({ plan: planMessage(input(req, Upsert).body.plan), actor: actorOf(req) });
    ok(res, r.plan ? snake(r.plan) : null);
  });

  api.put('/subscription/admin/plans/:id', guard.admin, UpdatePlan, async (req, res) => {
    const { params, body: b } = input(req, UpdatePlan);
    const r = await subscriptions.savePlan({ plan: planMessage(b.plan, params.id), actor: actorOf(req) });
    ok(res, r.plan ? snake(r.plan) : null);
  });

  api.patch('/subscription/admin/plans/:id', guard.admin, PlanStatus, async (req, res) => {
    const { params, body: b } = input(req, PlanStatus);
    await subscriptions.setPlanEnabled({ id: params.id, enabled: b.enabled, actor: actorOf(req) });
    ok(res, null);
  });

  const bind = async (userId: number, planId: number, actor: ReturnType<typeof actorOf>) => {
    // An unknown user is refused (NOT_FOUND) before billing starts anything for the id.
    await users.getUser({ id: userId });
    await subscriptions.bindSubscription({
      userId,
      planId,
      actor,
      requestId: `admin${actor.userId}-p${planId}-${Math.floor(Date.now() / DOUBLE_CLICK_MS)}`,
    });
  };
  api.post('/subscription/admin/bind', guard.admin, Bind, async (req, res) => {
    const b = input(req, Bind).body;
    await bind(b.user_id, b.plan_id, actorOf(req));
    ok(res, { message: '订阅已添加' });
  });

  api.get('/subscription/admin/users/:id/subscriptions', guard.admin, UserPath, async (req, res) => {
    const r = await subscriptions.getUserSubscriptions({ userId: input(req, UserPath).params.id });
    ok(res, subscriptionsJson(r));
  });

  api.post('/subscription/admin/users/:id/subscriptions', guard.admin, BindToUser, async (req, res) => {
    const { params, body: b } = input(req, BindToUser);
    await bind(params.id, b.plan_id, actorOf(req));
    ok(res, { message: '订阅已添加' });
  });

  api.post('/subscription/admin/user_subscriptions/:id/invalidate', guard.admin, SubPath, async (req, res) => {
    await subscriptions.invalidateSubscription({
      userId: 0,
      subscriptionId: input(req, SubPath).params.id,
      actor: actorOf(req),
    });
    ok(res, { message: '订阅已作废' });
  });
}

/**
 * new-api's /api/subscription: plans for users, the user's subscriptions and billing preference,
 * purchase with the wallet balance, and the admin's plans and users' subscriptions. Billing's
 * SubscriptionService decides everything; these only translate.
 */
export function subscriptionRoutes(api: Router, deps: RouteDeps): void {
  subscriptionUserRoutes(api, deps);
  subscriptionPayRoutes(api, deps);
  subscriptionAdminRoutes(api, deps);
}
