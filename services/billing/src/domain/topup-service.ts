import { randomBytes } from 'node:crypto';
import type { TextOptionKey } from '@aigw/common';
import { invalid, notFound, precondition } from '@aigw/common/errors';
import type { OrderRepository, TopupOrder } from '../data/order-repository.ts';
import { type CardGateway, paidAsQuoted, type Quote, type VerifiedCardEvent } from './card-gateway.ts';
import { creemProducts } from './card-payments.ts';
import { epayCents, epaySign, epayType, epayVerify } from './epay.ts';
import type { OptionReader, PaymentAlarms } from './ports.ts';
import type { WalletService } from './wallet-service.ts';

const nowSec = () => Math.floor(Date.now() / 1000);

/** A webhook's answer: the HTTP status, the order, and whether this event credited or started it. */
export interface WebhookAnswer {
  status: number;
  tradeNo: string;
  credited: boolean;
}

const trimSlash = (s: string) => s.replace(/\/+$/, '');

/** What the top-up factories need. */
type TopupDeps = {
  orders: OrderRepository;
  wallet: WalletService;
  options: OptionReader;
  /** Stripe and Creem (card-gateway.ts), shared with plan purchases. */
  card: CardGateway;
  /** Plan orders paid by card: the answer to an event naming one, null for any other order. */
  plans?: { onCardEvent(provider: string, event: VerifiedCardEvent): Promise<WebhookAnswer | null> };
  /** Where a paid amount that is not the order's is told (warn log, audit event). */
  alarms: PaymentAlarms;
};

/** Units of an Epay top-up: whole, at least MinTopUp, at most 10,000,000. */
export function checkAmount(options: OptionReader, amount: number): number {
  const min = options.number('MinTopUp');
  if (!Number.isFinite(amount) || !Number.isInteger(amount)) throw invalid('充值数量必须为整数');
  if (amount < min) throw invalid(`充值数量不能小于 ${min}`);
  if (amount > 10_000_000) throw invalid('充值数量过大');
  return amount;
}

/** Units of a Stripe top-up: whole, at least StripeMinTopUp, at most 10000 (new-api's bounds). */
export function checkStripeAmount(options: OptionReader, amount: number): number {
  const min = options.number('StripeMinTopUp');
  if (!Number.isFinite(amount) || !Number.isInteger(amount)) throw invalid('充值数量必须为整数');
  if (amount < min) throw invalid(`充值数量不能小于 ${min}`);
  if (amount > 10000) throw invalid('充值数量不能大于 10000');
  return amount;
}

/** What `amount` units cost: amount x price x the group's TopupGroupRatio (1 when unset), in cents. */
export function payable(options: OptionReader, amount: number, group: string, price = options.number('Price')): number {
  const ratios = options.json<Record<string, number>>('TopupGroupRatio');
  const ratio = typeof ratios[group] === 'number' && ratios[group] > 0 ? ratios[group] : 1;
  return Math.round(amount * price * ratio * 100) / 100;
}

/** The Epay gateway's address and credentials; refused when the admin has not set them. */
function epayGateway(options: OptionReader) {
  const address = trimSlash(options.text('PayAddress'));
  const pid = options.text('EpayId');
  const key = options.text('EpayKey');
  if (!address || !pid || !key) throw precondition('管理员未开启在线充值！');
  return { address, pid, key };
}

/** A new order waiting for its payment. */
const pendingTopup = (
  tradeNo: string,
  req: { userId: number; username: string },
  fields: Pick<TopupOrder, 'amount' | 'money' | 'payment_method' | 'payment_provider'>,
  quote?: Quote,
): TopupOrder => ({
  _id: tradeNo,
  user_id: req.userId,
  username: req.username,
  ...fields,
  status: 'pending',
  ...(quote ? { provider_amount: quote.cents, provider_currency: quote.currency } : {}),
  created_time: nowSec(),
  complete_time: 0,
});

/**
 * What a card order was to be paid: the provider's quote kept with the order; an order without
 * one (made before quotes were kept) is checked against nothing (null).
 */
const quoteOf = (order: TopupOrder): Quote | null =>
  typeof order.provider_amount === 'number' && order.provider_currency
    ? { cents: order.provider_amount, currency: order.provider_currency }
    : null;

/** Tells a top-up's paid amount that is not its order's (the order stays pending). */
const topupMismatch = (deps: TopupDeps, order: TopupOrder, expected: Quote, paid: Quote) =>
  deps.alarms.mismatch({
    order: 'topup',
    provider: order.payment_provider ?? 'epay',
    tradeNo: order._id,
    userId: order.user_id,
    username: order.username,
    expected,
    paid: { cents: paid.cents, currency: paid.currency },
  });

const paidContent = (order: TopupOrder, via: string) =>
  `使用${via}充值成功，充值金额: ${order.amount}，支付金额：${order.money.toFixed(2)}`;

/**
 * Credits a paid order once, whatever told us it was paid (the Epay notification, a Stripe or
 * Creem webhook, an admin): the ledger records `credit:topup:<trade_no>` only once, so a
 * replay or a second event for the same order credits nothing more.
 */
async function creditOrder(
  { orders, wallet, options }: TopupDeps,
  order: TopupOrder,
  content: string,
): Promise<boolean> {
  const quota =
    order.payment_provider === 'creem'
      ? Math.round(order.amount)
      : Math.round(order.amount * options.number('QuotaPerUnit'));
  const { replayed } = await wallet.credit({
    requestId: `topup:${order._id}`,
    userId: order.user_id,
    username: order.username,
    amount: quota,
    reason: 4,
    content,
  });
  if (order.status !== 'success') await orders.complete(order._id, nowSec());
  return !replayed;
}

/** Top-up through an Epay-compatible gateway: quotes, orders with a signed form, the notification. */
export function epayTopup(deps: TopupDeps) {
  const { orders, options } = deps;
  const gateway = () => epayGateway(options);

  return {
    quote(amount: number, group: string, paymentMethod = ''): number {
      if (paymentMethod === 'stripe') {
        return payable(options, checkStripeAmount(options, amount), group, options.number('StripeUnitPrice'));
      }
      return payable(options, checkAmount(options, amount), group);
    },

    async createOrder(req: {
      userId: number;
      username: string;
      group: string;
      amount: number;
      paymentMethod: string;
      callbackAddress: string;
    }) {
      const { address, pid, key } = gateway();
      const amount = checkAmount(options, req.amount);
      const type = epayType(req.paymentMethod);
      if (!type) throw invalid('不支持的支付方式');
      const money = payable(options, amount, req.group);
      const tradeNo = `USR${req.userId}NO${randomBytes(6).toString('hex')}${Date.now().toString(36)}`;
      const server = trimSlash(options.text('ServerAddress'));
      const callback = trimSlash(req.callbackAddress) || trimSlash(options.text('CustomCallbackAddress')) || server;
      await orders.insert(
        pendingTopup(tradeNo, req, { amount, money, payment_method: req.paymentMethod, payment_provider: 'epay' }),
      );
      const form: Record<string, string> = {
        pid,
        type,
        out_trade_no: tradeNo,
        notify_url: `${callback}/api/user/epay/notify`,
        return_url: `${server}/log`,
        name: `TUC${amount}`,
        money: money.toFixed(2),
      };
      form.sign = epaySign(form, key);
      form.sign_type = 'MD5';
      return { tradeNo, url: `${address}/submit.php`, form };
    },

    /** Verifies a notification and credits its order once. */
    async handleNotify(params: Record<string, string>) {
      const key = options.text('EpayKey');
      const tradeNo = params.out_trade_no ?? '';
      if (!key || !epayVerify(params, key)) return { success: false, tradeNo, credited: false };
      if (params.pid !== undefined && params.pid !== options.text('EpayId')) {
        return { success: false, tradeNo, credited: false };
      }
      const order = await orders.get(tradeNo);
      // Only Epay's own orders: a card order is paid through its provider's webhook.
      if (!order || (order.payment_provider ?? 'epay') !== 'epay') return { success: false, tradeNo, credited: false };
      if (params.trade_status !== 'TRADE_SUCCESS') return { success: true, tradeNo, credited: false };
      // The paid money must be the order's: absent or different, nothing is credited ("fail").
      const paid = { cents: epayCents(params.money), currency: '' };
      const expected = { cents: Math.round(order.money * 100), currency: '' };
      if (paid.cents !== expected.cents) {
        await topupMismatch(deps, order, expected, paid);
        return { success: false, tradeNo, credited: false };
      }
      const credited = await creditOrder(deps, order, paidContent(order, '在线'));
      return { success: true, tradeNo, credited };
    },
  };
}

/** Top-up by card (Stripe, Creem): checkouts and the webhook, which credits an order once. */
export function cardTopup(deps: TopupDeps) {
  const { orders, options, card } = deps;
  const { stripeEnabled, creemEnabled } = card;
  const promoCodes = () => options.bool('StripePromotionCodesEnabled');

  /**
   * A Stripe or Creem webhook: verified and read once (card-gateway.ts); an event naming a plan
   * order is the subscription's (`plans`), any other a top-up's.
   */
  async function cardWebhook(provider: string, payload: Buffer, signature: string): Promise<WebhookAnswer> {
    const event = card.event(provider, payload, signature);
    if (event.kind === 'refused') return { status: event.status, tradeNo: '', credited: false };
    const forPlan = await deps.plans?.onCardEvent(provider, event);
    if (forPlan) return forPlan;
    const { tradeNo } = event;
    if (event.kind === 'failed' || event.kind === 'expired') {
      const order = tradeNo ? await orders.get(tradeNo) : null;
      if (order?.payment_provider === provider) await orders.settlePending(tradeNo, event.kind, nowSec());
      return { status: 200, tradeNo, credited: false };
    }
    if (event.kind !== 'paid') return { status: 200, tradeNo, credited: false };
    const order = await orders.get(tradeNo);
    // Creem names only our own checkouts: an unknown one is a bad request (Stripe's may be anyone's).
    if (!order || order.payment_provider !== provider) {
      return { status: provider === 'creem' ? 400 : 200, tradeNo, credited: false };
    }
    // What was paid must be what the provider was asked to charge; else nothing, the order pending.
    const expected = quoteOf(order);
    if (expected && !paidAsQuoted(event.paid, expected, provider === 'stripe' && promoCodes())) {
      await topupMismatch(deps, order, expected, event.paid);
      return { status: 400, tradeNo, credited: false };
    }
    // A success after the session was marked failed or expired was still paid: it is credited.
    const credited = await creditOrder(deps, order, paidContent(order, provider === 'stripe' ? 'Stripe' : 'Creem'));
    return { status: 200, tradeNo, credited };
  }

  return {
    /** A Stripe Checkout Session for `amount` units of StripePriceId; the order is kept once Stripe has it. */
    async createStripeOrder(req: {
      userId: number;
      username: string;
      group: string;
      email: string;
      amount: number;
      successUrl: string;
      cancelUrl: string;
    }) {
      if (!stripeEnabled()) throw precondition('管理员未开启Stripe充值！');
      const money = payable(
        options,
        checkStripeAmount(options, req.amount),
        req.group,
        options.number('StripeUnitPrice'),
      );
      const tradeNo = card.tradeNoOf(req.userId, 'STRIPE');
      const server = trimSlash(options.text('ServerAddress'));
      const { url, quote } = await card.stripeCheckout(tradeNo, {
        mode: 'payment',
        success_url: req.successUrl || `${server}/log`,
        cancel_url: req.cancelUrl || `${server}/topup`,
        line_items: [{ price: options.text('StripePriceId').trim(), quantity: req.amount }],
        allow_promotion_codes: options.bool('StripePromotionCodesEnabled'),
        ...(req.email ? { customer_email: req.email } : {}),
        customer_creation: 'always',
        metadata: { trade_no: tradeNo, user_id: req.userId },
      });
      await orders.insert(
        pendingTopup(
          tradeNo,
          req,
          { amount: req.amount, money, payment_method: 'stripe', payment_provider: 'stripe' },
          quote,
        ),
      );
      return { tradeNo, url };
    },

    /** A Creem checkout for one CreemProducts entry (its quota is credited when paid). */
    async createCreemOrder(req: { userId: number; username: string; email: string; productId: string }) {
      if (!creemEnabled()) throw precondition('管理员未开启Creem充值！');
      if (!req.productId) throw invalid('请选择产品');
      const product = creemProducts(options.json<unknown>('CreemProducts')).find((p) => p.productId === req.productId);
      if (!product) throw invalid('产品不存在');
      const tradeNo = card.tradeNoOf(req.userId, 'CREEM');
      const url = await card.creemCheckout(tradeNo, {
        product_id: product.productId,
        ...(req.email ? { customer: { email: req.email } } : {}),
        metadata: {
          username: req.username,
          reference_id: tradeNo,
          product_name: product.name,
          quota: String(product.quota),
        },
      });
      await orders.insert(
        pendingTopup(
          tradeNo,
          req,
          { amount: product.quota, money: product.price, payment_method: 'creem', payment_provider: 'creem' },
          { cents: Math.round(product.price * 100), currency: product.currency.toUpperCase() },
        ),
      );
      return { tradeNo, url };
    },

    /** A Stripe or Creem webhook: the status to answer, and whether it credited (or started a plan). */
    handleCardWebhook: cardWebhook,
  };
}

/** The orders themselves: a user's or everyone's list, and an admin's 补单. */
export function topupOrders(deps: TopupDeps) {
  const { orders } = deps;

  return {
    async list(req: { userId: number; keyword: string; status: string; page: number; pageSize: number }) {
      const page = Math.max(1, Math.floor(req.page) || 1);
      const size = Math.min(100, Math.max(1, Math.floor(req.pageSize) || 10));
      const { items, total } = await orders.page(
        { userId: req.userId, keyword: req.keyword.slice(0, 64), status: req.status },
        (page - 1) * size,
        size,
      );
      return {
        total,
        items: items.map((o) => ({
          tradeNo: o._id,
          userId: o.user_id,
          username: o.username,
          amount: o.amount,
          money: o.money,
          paymentMethod: o.payment_method,
          paymentProvider: o.payment_provider ?? 'epay',
          createTime: o.created_time,
          completeTime: o.complete_time,
          status: o.status,
        })),
      };
    },

    /** An admin marks a pending order paid (new-api's 补单): credits once; a paid order is a no-op. */
    async complete(tradeNo: string) {
      if (!tradeNo) throw invalid('未提供订单号');
      const order = await orders.get(tradeNo);
      if (!order) throw notFound('充值订单不存在');
      if (order.status === 'success') return { credited: false };
      if (order.status !== 'pending') throw precondition('订单状态不是待支付，无法补单');
      return { credited: await creditOrder(deps, order, `${paidContent(order, '管理员补单')}`) };
    },
  };
}

/** Which payment methods are on (GET /api/user/topup/info); never a secret. */
function topupInfo({ options, card }: TopupDeps) {
  const has = (key: TextOptionKey) => options.text(key).trim() !== '';
  return {
    enableOnlineTopup: has('PayAddress') && has('EpayId') && has('EpayKey'),
    enableStripeTopup: card.stripeEnabled(),
    enableCreemTopup: card.creemEnabled(),
    creemProducts: JSON.stringify(creemProducts(options.json<unknown>('CreemProducts'))),
    minTopup: options.number('MinTopUp'),
    stripeMinTopup: options.number('StripeMinTopUp'),
    stripeUnitPrice: options.number('StripeUnitPrice'),
  };
}

/**
 * Online top-up through an Epay-compatible gateway: quotes (amount x Price x the group's top-up
 * ratio), orders with a signed payment form, and the gateway's notification, which credits an
 * order exactly once (the ledger records `credit:topup:<trade_no>` only once).
 */
export function topupService(deps: TopupDeps) {
  return {
    ...epayTopup(deps),
    ...cardTopup(deps),
    ...topupOrders(deps),
    info: () => topupInfo(deps),
  };
}

export type TopupService = ReturnType<typeof topupService>;
