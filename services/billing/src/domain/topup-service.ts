import { randomBytes } from 'node:crypto';
import type { TextOptionKey } from '@aigw/common';
import { invalid, notFound, precondition } from '@aigw/common/errors';
import type { OrderRepository, TopupOrder } from '../data/order-repository.ts';
import { creemProducts, stripeForm, verifyCreemSignature, verifyStripeSignature } from './card-payments.ts';
import { epaySign, epayType, epayVerify } from './epay.ts';
import type { OptionReader } from './ports.ts';
import type { WalletService } from './wallet-service.ts';

const nowSec = () => Math.floor(Date.now() / 1000);
const trimSlash = (s: string) => s.replace(/\/+$/, '');

/**
 * Online top-up through an Epay-compatible gateway: quotes (amount x Price x the group's top-up
 * ratio), orders with a signed payment form, and the gateway's notification, which credits an
 * order exactly once (the ledger records `credit:topup:<trade_no>` only once).
 */
export function topupService(deps: {
  orders: OrderRepository;
  wallet: WalletService;
  options: OptionReader;
  /** Where Stripe's and Creem's APIs are (tests point them at fakes); Creem's default follows CreemTestMode. */
  cardApi?: { stripeBase?: string; creemBase?: string; fetch?: typeof fetch };
}) {
  const { orders, wallet, options } = deps;
  const http = deps.cardApi?.fetch ?? fetch;
  const stripeBase = () => trimSlash(deps.cardApi?.stripeBase || 'https://api.stripe.com');
  const creemBase = () =>
    trimSlash(
      deps.cardApi?.creemBase || (options.bool('CreemTestMode') ? 'https://test-api.creem.io' : 'https://api.creem.io'),
    );
  const has = (key: TextOptionKey) => options.text(key).trim() !== '';
  const stripeEnabled = () => has('StripeApiSecret') && has('StripeWebhookSecret') && has('StripePriceId');
  const creemEnabled = () =>
    has('CreemApiKey') && has('CreemWebhookSecret') && creemProducts(options.json<unknown>('CreemProducts')).length > 0;

  /**
   * Credits a paid order once, whatever told us it was paid (the Epay notification, a Stripe or
   * Creem webhook, an admin): the ledger records `credit:topup:<trade_no>` only once, so a
   * replay or a second event for the same order credits nothing more.
   */
  async function creditOrder(order: TopupOrder, content: string): Promise<boolean> {
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

  const paidContent = (order: TopupOrder, via: string) =>
    `使用${via}充值成功，充值金额: ${order.amount}，支付金额：${order.money.toFixed(2)}`;

  async function fulfillCard(provider: string, tradeNo: string) {
    const order = tradeNo ? await orders.get(tradeNo) : null;
    if (!order || order.payment_provider !== provider) return { status: 200, tradeNo, credited: false };
    // A success after the session was marked failed or expired was still paid: it is credited.
    const credited = await creditOrder(order, paidContent(order, provider === 'stripe' ? 'Stripe' : 'Creem'));
    return { status: 200, tradeNo, credited };
  }

  async function stripeWebhook(payload: Buffer, signature: string) {
    if (!stripeEnabled()) return { status: 404, tradeNo: '', credited: false };
    const check = verifyStripeSignature(payload, signature, options.text('StripeWebhookSecret'), nowSec());
    if (check !== 'ok') return { status: 400, tradeNo: '', credited: false };
    let event: { type?: unknown; data?: { object?: Record<string, unknown> } };
    try {
      event = JSON.parse(payload.toString('utf8'));
    } catch {
      return { status: 400, tradeNo: '', credited: false };
    }
    const session = event.data?.object ?? {};
    const tradeNo = typeof session.client_reference_id === 'string' ? session.client_reference_id : '';
    switch (event.type) {
      case 'checkout.session.completed':
        // Delayed methods (bank transfers) complete unpaid and succeed later (async_payment_succeeded).
        if (session.status !== 'complete' || session.payment_status !== 'paid') {
          return { status: 200, tradeNo, credited: false };
        }
        return fulfillCard('stripe', tradeNo);
      case 'checkout.session.async_payment_succeeded':
        return fulfillCard('stripe', tradeNo);
      case 'checkout.session.async_payment_failed':
      case 'checkout.session.expired': {
        const order = tradeNo ? await orders.get(tradeNo) : null;
        if (order?.payment_provider === 'stripe') {
          const to = event.type === 'checkout.session.expired' ? 'expired' : 'failed';
          await orders.settlePending(tradeNo, to, nowSec());
        }
        return { status: 200, tradeNo, credited: false };
      }
      default:
        return { status: 200, tradeNo, credited: false };
    }
  }

  async function creemWebhook(payload: Buffer, signature: string) {
    if (!creemEnabled()) return { status: 404, tradeNo: '', credited: false };
    if (!verifyCreemSignature(payload, signature, options.text('CreemWebhookSecret'))) {
      return { status: 400, tradeNo: '', credited: false };
    }
    let event: { eventType?: unknown; object?: { request_id?: unknown; order?: { status?: unknown; type?: unknown } } };
    try {
      event = JSON.parse(payload.toString('utf8'));
    } catch {
      return { status: 400, tradeNo: '', credited: false };
    }
    if (event.eventType !== 'checkout.completed') return { status: 200, tradeNo: '', credited: false };
    const tradeNo = typeof event.object?.request_id === 'string' ? event.object.request_id : '';
    if (!tradeNo) return { status: 400, tradeNo, credited: false };
    if (event.object?.order?.status !== 'paid') return { status: 200, tradeNo, credited: false };
    const order = await orders.get(tradeNo);
    if (!order || order.payment_provider !== 'creem') return { status: 400, tradeNo, credited: false };
    return fulfillCard('creem', tradeNo);
  }

  /** Calls a provider's API; any failure is the user's "拉起支付失败" (the cause is logged by the caller). */
  async function callProvider(url: string, init: RequestInit): Promise<Record<string, unknown>> {
    let res: Response;
    try {
      res = await http(url, { ...init, signal: AbortSignal.timeout(15_000) });
    } catch {
      throw precondition('拉起支付失败');
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!res.ok || typeof parsed !== 'object' || parsed === null) throw precondition('拉起支付失败');
    return parsed as Record<string, unknown>;
  }

  const tradeNoOf = (userId: number, prefix: string) =>
    `${prefix}${userId}NO${randomBytes(6).toString('hex')}${Date.now().toString(36)}`;

  function checkAmount(amount: number): number {
    const min = options.number('MinTopUp');
    if (!Number.isFinite(amount) || !Number.isInteger(amount)) throw invalid('充值数量必须为整数');
    if (amount < min) throw invalid(`充值数量不能小于 ${min}`);
    if (amount > 10_000_000) throw invalid('充值数量过大');
    return amount;
  }

  function payable(amount: number, group: string, price = options.number('Price')): number {
    const ratios = options.json<Record<string, number>>('TopupGroupRatio');
    const ratio = typeof ratios[group] === 'number' && ratios[group] > 0 ? ratios[group] : 1;
    return Math.round(amount * price * ratio * 100) / 100;
  }

  /** Units of a Stripe top-up: whole, at least StripeMinTopUp, at most 10000 (new-api's bounds). */
  function checkStripeAmount(amount: number): number {
    const min = options.number('StripeMinTopUp');
    if (!Number.isFinite(amount) || !Number.isInteger(amount)) throw invalid('充值数量必须为整数');
    if (amount < min) throw invalid(`充值数量不能小于 ${min}`);
    if (amount > 10000) throw invalid('充值数量不能大于 10000');
    return amount;
  }

  function gateway() {
    const address = trimSlash(options.text('PayAddress'));
    const pid = options.text('EpayId');
    const key = options.text('EpayKey');
    if (!address || !pid || !key) throw precondition('管理员未开启在线充值！');
    return { address, pid, key };
  }

  return {
    quote(amount: number, group: string, paymentMethod = ''): number {
      if (paymentMethod === 'stripe') {
        return payable(checkStripeAmount(amount), group, options.number('StripeUnitPrice'));
      }
      return payable(checkAmount(amount), group);
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
      const amount = checkAmount(req.amount);
      const type = epayType(req.paymentMethod);
      if (!type) throw invalid('不支持的支付方式');
      const money = payable(amount, req.group);
      const tradeNo = `USR${req.userId}NO${randomBytes(6).toString('hex')}${Date.now().toString(36)}`;
      const server = trimSlash(options.text('ServerAddress'));
      const callback = trimSlash(req.callbackAddress) || trimSlash(options.text('CustomCallbackAddress')) || server;
      await orders.insert({
        _id: tradeNo,
        user_id: req.userId,
        username: req.username,
        amount,
        money,
        payment_method: req.paymentMethod,
        payment_provider: 'epay',
        status: 'pending',
        created_time: nowSec(),
        complete_time: 0,
      });
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
      if (params.money !== undefined && Math.abs(Number(params.money) - order.money) > 0.005) {
        return { success: false, tradeNo, credited: false };
      }
      const credited = await creditOrder(order, paidContent(order, '在线'));
      return { success: true, tradeNo, credited };
    },

    /** Which payment methods are on (GET /api/user/topup/info); never a secret. */
    info() {
      return {
        enableOnlineTopup: has('PayAddress') && has('EpayId') && has('EpayKey'),
        enableStripeTopup: stripeEnabled(),
        enableCreemTopup: creemEnabled(),
        creemProducts: JSON.stringify(creemProducts(options.json<unknown>('CreemProducts'))),
        minTopup: options.number('MinTopUp'),
        stripeMinTopup: options.number('StripeMinTopUp'),
        stripeUnitPrice: options.number('StripeUnitPrice'),
      };
    },

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
      const secret = options.text('StripeApiSecret').trim();
      if (!secret.startsWith('sk_') && !secret.startsWith('rk_')) throw precondition('无效的Stripe API密钥');
      const money = payable(checkStripeAmount(req.amount), req.group, options.number('StripeUnitPrice'));
      const tradeNo = tradeNoOf(req.userId, 'STRIPE');
      const server = trimSlash(options.text('ServerAddress'));
      const session = await callProvider(`${stripeBase()}/v1/checkout/sessions`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${secret}`,
          'Content-Type': 'application/x-www-form-urlencoded',
          'Idempotency-Key': tradeNo,
        },
        body: stripeForm({
          mode: 'payment',
          client_reference_id: tradeNo,
          success_url: req.successUrl || `${server}/log`,
          cancel_url: req.cancelUrl || `${server}/topup`,
          line_items: [{ price: options.text('StripePriceId').trim(), quantity: req.amount }],
          allow_promotion_codes: options.bool('StripePromotionCodesEnabled'),
          ...(req.email ? { customer_email: req.email } : {}),
          customer_creation: 'always',
          metadata: { trade_no: tradeNo, user_id: req.userId },
        }),
      });
      if (typeof session.url !== 'string' || !session.url) throw precondition('拉起支付失败');
      await orders.insert({
        _id: tradeNo,
        user_id: req.userId,
        username: req.username,
        amount: req.amount,
        money,
        payment_method: 'stripe',
        payment_provider: 'stripe',
        status: 'pending',
        created_time: nowSec(),
        complete_time: 0,
      });
      return { tradeNo, url: session.url };
    },

    /** A Creem checkout for one CreemProducts entry (its quota is credited when paid). */
    async createCreemOrder(req: { userId: number; username: string; email: string; productId: string }) {
      if (!creemEnabled()) throw precondition('管理员未开启Creem充值！');
      if (!req.productId) throw invalid('请选择产品');
      const product = creemProducts(options.json<unknown>('CreemProducts')).find((p) => p.productId === req.productId);
      if (!product) throw invalid('产品不存在');
      const tradeNo = tradeNoOf(req.userId, 'CREEM');
      const checkout = await callProvider(`${creemBase()}/v1/checkouts`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'x-api-key': options.text('CreemApiKey').trim() },
        body: JSON.stringify({
          product_id: product.productId,
          request_id: tradeNo,
          ...(req.email ? { customer: { email: req.email } } : {}),
          metadata: {
            username: req.username,
            reference_id: tradeNo,
            product_name: product.name,
            quota: String(product.quota),
          },
        }),
      });
      if (typeof checkout.checkout_url !== 'string' || !checkout.checkout_url) throw precondition('拉起支付失败');
      await orders.insert({
        _id: tradeNo,
        user_id: req.userId,
        username: req.username,
        amount: product.quota,
        money: product.price,
        payment_method: 'creem',
        payment_provider: 'creem',
        status: 'pending',
        created_time: nowSec(),
        complete_time: 0,
      });
      return { tradeNo, url: checkout.checkout_url };
    },

    /** A Stripe or Creem webhook: the status to answer, and whether it credited. */
    async handleCardWebhook(provider: string, payload: Buffer, signature: string) {
      if (provider === 'stripe') return stripeWebhook(payload, signature);
      if (provider === 'creem') return creemWebhook(payload, signature);
      return { status: 404, tradeNo: '', credited: false };
    },

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
      return { credited: await creditOrder(order, `${paidContent(order, '管理员补单')}`) };
    },
  };
}

export type TopupService = ReturnType<typeof topupService>;
