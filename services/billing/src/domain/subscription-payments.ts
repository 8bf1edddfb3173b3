import { randomBytes } from 'node:crypto';
import { invalid, precondition } from '@aigw/common/errors';
import type { PlanDoc } from '../data/plan-repository.ts';
import type { SubscriptionOrder, SubscriptionOrderRepository } from '../data/subscription-order-repository.ts';
import { type CardGateway, paidExactly, type VerifiedCardEvent } from './card-gateway.ts';
import { epayCents, epaySign, epayType, epayVerify } from './epay.ts';
import type { OptionReader, PaymentAlarms } from './ports.ts';
import type { SubscriptionService } from './subscription-service.ts';
import type { WebhookAnswer } from './topup-service.ts';

const trimSlash = (s: string) => s.replace(/\/+$/, '');
const nowSec = () => Math.floor(Date.now() / 1000);

/** What the payment factories need: the orders, the plans and subscriptions, the options, the card gateway. */
type PaymentDeps = {
  orders: SubscriptionOrderRepository;
  subscriptions: SubscriptionService;
  options: OptionReader;
  card: CardGateway;
  /** Where a paid amount that is not the plan's price is told (warn log, audit event). */
  alarms: PaymentAlarms;
};

/** The plan of a purchase, refused as new-api refuses it (disabled, too cheap, bought too often). */
async function purchasable(subscriptions: SubscriptionService, userId: number, planId: number): Promise<PlanDoc> {
  const plan = await subscriptions.planOf(planId);
  if (!plan.enabled) throw precondition('套餐未启用');
  if (plan.price_amount < 0.01) throw precondition('套餐金额过低');
  if (plan.max_purchase_per_user > 0) {
    if ((await subscriptions.countOf(userId, plan._id)) >= plan.max_purchase_per_user)
      throw precondition('已达到该套餐购买上限');
  }
  return plan;
}

/** A new order for one term of a plan, waiting for its payment. */
const pendingOrder = (
  req: { userId: number; username: string },
  plan: PlanDoc,
  tradeNo: string,
  provider: string,
  method = provider,
): SubscriptionOrder => ({
  _id: tradeNo,
  user_id: req.userId,
  username: req.username,
  plan_id: plan._id,
  money: plan.price_amount,
  payment_method: method,
  payment_provider: provider,
  status: 'pending',
  create_time: nowSec(),
  complete_time: 0,
});

/** Tells a plan order's paid amount that is not its price (the order stays pending). */
const planMismatch = (
  deps: PaymentDeps,
  order: SubscriptionOrder,
  expected: { cents: number; currency: string },
  paid: { cents: number; currency: string },
) =>
  deps.alarms.mismatch({
    order: 'subscription',
    provider: order.payment_provider,
    tradeNo: order._id,
    userId: order.user_id,
    username: order.username,
    expected,
    paid: { cents: paid.cents, currency: paid.currency },
  });

/** Starts a paid order's subscription; true when this call started it (false: a replay). */
async function grant({ orders, subscriptions }: PaymentDeps, order: SubscriptionOrder): Promise<boolean> {
  const activated = await subscriptions.activateOrder({
    userId: order.user_id,
    username: order.username,
    planId: order.plan_id,
    tradeNo: order._id,
    money: order.money,
  });
  if (order.status !== 'success') await orders.complete(order._id, nowSec());
  return activated;
}

/** Plans paid through Epay: the signed form of an order, and the notification that starts it once. */
export function subscriptionEpay(deps: PaymentDeps) {
  const { orders, subscriptions, options } = deps;

  return {
    async createEpayOrder(req: { userId: number; username: string; planId: number; paymentMethod: string }) {
      const plan = await purchasable(subscriptions, req.userId, req.planId);
      const type = epayType(req.paymentMethod);
      if (!type) throw invalid('支付方式不存在');
      const address = trimSlash(options.text('PayAddress'));
      const pid = options.text('EpayId');
      const key = options.text('EpayKey');
      if (!address || !pid || !key) throw precondition('当前管理员未配置支付信息');
      const tradeNo = `SUBUSR${req.userId}NO${randomBytes(6).toString('hex')}${Date.now().toString(36)}`;
      const server = trimSlash(options.text('ServerAddress'));
      const callback = trimSlash(options.text('CustomCallbackAddress')) || server;
      await orders.insert(pendingOrder(req, plan, tradeNo, 'epay', req.paymentMethod));
      const form: Record<string, string> = {
        pid,
        type,
        out_trade_no: tradeNo,
        notify_url: `${callback}/api/subscription/epay/notify`,
        return_url: `${server}/topup`,
        name: `SUB:${plan.title}`,
        money: plan.price_amount.toFixed(2),
      };
      form.sign = epaySign(form, key);
      form.sign_type = 'MD5';
      return { tradeNo, url: `${address}/submit.php`, form };
    },

    /** Verifies Epay's notification and starts the order's subscription once. */
    async handleEpayNotify(params: Record<string, string>) {
      const key = options.text('EpayKey');
      const tradeNo = params.out_trade_no ?? '';
      const refused = { success: false, tradeNo, activated: false };
      if (!key || !epayVerify(params, key)) return refused;
      if (params.pid !== undefined && params.pid !== options.text('EpayId')) return refused;
      const order = await orders.get(tradeNo);
      if (!order || order.payment_provider !== 'epay') return refused;
      if (params.trade_status !== 'TRADE_SUCCESS') return { success: true, tradeNo, activated: false };
      // The paid money must be the plan's price: absent or different, nothing starts ("fail").
      const paid = { cents: epayCents(params.money), currency: '' };
      const expected = { cents: Math.round(order.money * 100), currency: '' };
      if (paid.cents !== expected.cents) {
        await planMismatch(deps, order, expected, paid);
        return refused;
      }
      return { success: true, tradeNo, activated: await grant(deps, order) };
    },
  };
}

/** Plans paid by card (Stripe, Creem): the checkout of an order, and the webhook event that starts it once. */
export function subscriptionCards(deps: PaymentDeps) {
  const { orders, subscriptions, options, card } = deps;

  return {
    /**
     * A Checkout Session for one unit of the plan's stripe_price_id (a one-time price: a plan is
     * bought one term at a time; a recurring price would charge again without a new term).
     */
    async createStripeOrder(req: { userId: number; username: string; planId: number; email: string }) {
      if (!card.stripeEnabled()) throw precondition('管理员未开启Stripe充值！');
      const plan = await purchasable(subscriptions, req.userId, req.planId);
      const price = (plan.stripe_price_id ?? '').trim();
      if (!price) throw precondition('该套餐未配置 StripePriceId');
      const tradeNo = card.tradeNoOf(req.userId, 'SUBSTRIPE');
      const server = trimSlash(options.text('ServerAddress'));
      // The order first: a session whose order was not kept could be paid and never granted.
      await orders.insert(pendingOrder(req, plan, tradeNo, 'stripe'));
      const { url: payLink } = await card.stripeCheckout(tradeNo, {
        mode: 'payment',
        success_url: `${server}/topup`,
        cancel_url: `${server}/topup`,
        line_items: [{ price, quantity: 1 }],
        ...(req.email ? { customer_email: req.email } : {}),
        customer_creation: 'always',
        metadata: { trade_no: tradeNo, user_id: req.userId, plan_id: plan._id },
      });
      return { tradeNo, payLink };
    },

    /** A Creem checkout of the plan's creem_product_id. */
    async createCreemOrder(req: { userId: number; username: string; planId: number; email: string }) {
      if (!card.creemEnabled()) throw precondition('管理员未开启Creem充值！');
      const plan = await purchasable(subscriptions, req.userId, req.planId);
      const product = (plan.creem_product_id ?? '').trim();
      if (!product) throw precondition('该套餐未配置 CreemProductId');
      const tradeNo = card.tradeNoOf(req.userId, 'SUBCREEM');
      await orders.insert(pendingOrder(req, plan, tradeNo, 'creem'));
      const checkoutUrl = await card.creemCheckout(tradeNo, {
        product_id: product,
        ...(req.email ? { customer: { email: req.email } } : {}),
        metadata: {
          username: req.username,
          reference_id: tradeNo,
          product_name: plan.title,
          plan_id: String(plan._id),
        },
      });
      return { orderId: tradeNo, checkoutUrl };
    },

    /**
     * A verified Stripe or Creem event naming one of our plan orders (null: not a plan order, the
     * top-up's then). Paid: the subscription starts once, only when exactly the order's price was
     * paid (USD); anything else is refused (400) and starts nothing.
     */
    async onCardEvent(provider: string, event: VerifiedCardEvent): Promise<WebhookAnswer | null> {
      const { tradeNo } = event;
      if (!tradeNo) return null;
      const order = await orders.get(tradeNo);
      if (!order) return null;
      const none = { tradeNo, credited: false };
      if (order.payment_provider !== provider) return { status: 400, ...none };
      if (event.kind === 'failed' || event.kind === 'expired') {
        await orders.settlePending(tradeNo, event.kind, nowSec());
        return { status: 200, ...none };
      }
      if (event.kind !== 'paid') return { status: 200, ...none };
      if (!paidExactly(event.paid, order.money)) {
        await planMismatch(deps, order, { cents: Math.round(order.money * 100), currency: 'USD' }, event.paid);
        return { status: 400, ...none };
      }
      return { status: 200, tradeNo, credited: await grant(deps, order) };
    },
  };
}

/**
 * Plans paid through a payment gateway (new-api's /api/subscription/{epay,stripe,creem}/pay): an
 * order per purchase at the plan's price, then the gateway's notification or webhook, which
 * starts the subscription once however often it is replayed (the ledger records the trade number
 * once). Stripe's and Creem's webhooks are the top-up's (card-gateway.ts): an event naming a plan
 * order comes here through `onCardEvent`.
 */
export function subscriptionPayments(deps: PaymentDeps) {
  return { ...subscriptionEpay(deps), ...subscriptionCards(deps) };
}

export type SubscriptionPayments = ReturnType<typeof subscriptionPayments>;
