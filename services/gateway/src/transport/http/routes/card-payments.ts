import { ok } from '@aigw/common';
import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from '../deps.ts';
import { body, id, optional, optText, pageOf, pageShape } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { caller, pageAnswer } from './wire.ts';

/** Whole units, as new-api's int64 amount (the service refuses fractions with its message). */
const units = optional(
  z.union(
    [
      z.number(),
      z
        .string()
        .regex(/^\d{1,15}(\.\d{1,6})?$/)
        .pipe(z.coerce.number()),
    ],
    { error: '金额无效' },
  ),
);
const StripePay = validate({
  body: body({ amount: units, payment_method: optText, success_url: optText, cancel_url: optText }),
});
const StripeQuote = validate({ body: body({ amount: units }) });
const CreemPay = validate({ body: body({ product_id: optText, payment_method: optText }) });
const SelfList = validate({ query: z.object({ keyword: optText, ...pageShape }) });
const AllList = validate({
  query: z.object({ keyword: optText, status: optText, user_id: optional(id()), ...pageShape }),
});
const Complete = validate({ body: body({ trade_no: optText }) });

/** A provider's redirect must stay on the operator's site (new-api checks its trusted domains). */
function sameSite(url: string | undefined, server: string): boolean {
  if (!url) return true;
  try {
    return new URL(url).origin === new URL(server).origin;
  } catch {
    return false;
  }
}

/**
 * Stripe's and Creem's webhooks. Mounted BEFORE the JSON body parser: the signature covers the
 * body byte for byte, so the route reads it raw and billing verifies those bytes.
 */
export function cardWebhookRoutes(api: Router, { clients, logger }: RouteDeps): void {
  const raw = express.raw({ type: () => true, limit: '1mb' });
  const hook = (provider: 'stripe' | 'creem', header: string) => async (req: Request, res: Response) => {
    const payload = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    try {
      const r = await clients.topup.handleCardWebhook({ provider, payload, signature: req.get(header) ?? '' });
      if (r.status !== 200) logger.warn({ provider, status: r.status }, 'payment webhook refused');
      const message = r.status === 200 ? 'success' : r.status === 404 ? '该支付方式未启用' : '签名或请求无效';
      res.status(r.status).json({ success: r.status === 200, message });
    } catch (err) {
      // Not handled: the provider retries later (Stripe for up to 3 days), and the ledger credits once.
      logger.error({ err, provider }, 'payment webhook failed');
      res.status(503).json({ success: false, message: '暂时无法处理，请稍后重试' });
    }
  };
  api.post('/stripe/webhook', raw, hook('stripe', 'Stripe-Signature'));
  api.post('/creem/webhook', raw, hook('creem', 'creem-signature'));
}

/** Card payments (Stripe Checkout, Creem) and the top-up history (new-api's routes and fields). */
export function cardPaymentRoutes(api: Router, { clients, guard, critical, options }: RouteDeps): void {
  const { topup } = clients;

  api.get('/user/topup/info', guard.user, async (_req, res) => {
    const r = await topup.getTopupInfo({});
    ok(res, {
      enable_online_topup: r.enableOnlineTopup,
      enable_stripe_topup: r.enableStripeTopup,
      enable_creem_topup: r.enableCreemTopup,
      creem_products: r.creemProducts,
      min_topup: r.minTopup,
      stripe_min_topup: r.stripeMinTopup,
      stripe_unit_price: r.stripeUnitPrice,
    });
  });

  // new-api's quote of a Stripe top-up: amount x StripeUnitPrice x the top-up group ratio.
  api.post('/user/stripe/amount', guard.user, StripeQuote, async (req, res) => {
    const u = caller(req);
    const r = await topup.quoteTopup({
      userId: u.id,
      amount: input(req, StripeQuote).body.amount ?? Number.NaN,
      topUpCode: '',
      group: u.group,
      paymentMethod: 'stripe',
    });
    ok(res, r.payable.toFixed(2), 'success');
  });

  api.post('/user/stripe/pay', guard.user, critical, StripePay, async (req, res) => {
    const b = input(req, StripePay).body;
    if (b.payment_method !== 'stripe') {
      res.status(400).json({ success: false, message: '不支持的支付渠道' });
      return;
    }
    const server = options.text('ServerAddress');
    if (!sameSite(b.success_url, server) || !sameSite(b.cancel_url, server)) {
      res.status(400).json({ success: false, message: '重定向URL不在可信任域名列表中' });
      return;
    }
    const u = caller(req);
    const r = await topup.createStripeOrder({
      userId: u.id,
      username: u.username,
      group: u.group,
      email: '',
      amount: b.amount ?? Number.NaN,
      successUrl: b.success_url ?? '',
      cancelUrl: b.cancel_url ?? '',
    });
    ok(res, { pay_link: r.url, trade_no: r.tradeNo }, 'success');
  });

  api.post('/user/creem/pay', guard.user, critical, CreemPay, async (req, res) => {
    const b = input(req, CreemPay).body;
    if (b.payment_method !== 'creem') {
      res.status(400).json({ success: false, message: '不支持的支付渠道' });
      return;
    }
    const u = caller(req);
    const r = await topup.createCreemOrder({
      userId: u.id,
      username: u.username,
      email: '',
      productId: b.product_id ?? '',
    });
    ok(res, { checkout_url: r.url, order_id: r.tradeNo }, 'success');
  });

  api.get('/user/topup/self', guard.user, SelfList, async (req, res) => {
    const q = input(req, SelfList).query;
    const page = pageOf(q);
    const r = await topup.listTopups({ userId: caller(req).id, keyword: q.keyword ?? '', status: '', ...page });
    ok(res, pageAnswer(r.items, { ...page, total: r.total }));
  });

  api.get('/user/topup', guard.admin, AllList, async (req, res) => {
    const q = input(req, AllList).query;
    const page = pageOf(q);
    const r = await topup.listTopups({
      userId: q.user_id ?? 0,
      keyword: q.keyword ?? '',
      status: q.status ?? '',
      ...page,
    });
    ok(res, pageAnswer(r.items, { ...page, total: r.total }));
  });

  api.post('/user/topup/complete', guard.admin, Complete, async (req, res) => {
    const tradeNo = input(req, Complete).body.trade_no ?? '';
    if (!tradeNo) {
      res.status(400).json({ success: false, message: '参数错误' });
      return;
    }
    const r = await topup.completeTopup({ tradeNo });
    ok(res, { credited: r.credited });
  });
}
