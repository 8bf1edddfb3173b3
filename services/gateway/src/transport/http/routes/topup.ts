import { ok } from '@aigw/common';
import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from '../deps.ts';
import { body as object, optional, optText } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { body, caller, str } from './wire.ts';

/** Amounts may be fractional (the service refuses them with its message); never NaN or infinite. */
const amount = optional(
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
const Quote = validate({ body: object({ amount, top_up_code: optText }) });
const Pay = validate({ body: object({ amount, top_up_code: optText, payment_method: optText }) });

/** Online top-up: quote, order, and the payment gateway's notification. */
export function topupRoutes(api: Router, { clients, guard, logger }: RouteDeps): void {
  const { topup } = clients;

  api.post('/user/amount', guard.user, Quote, async (req, res) => {
    const b = input(req, Quote).body;
    const u = caller(req);
    const r = await topup.quoteTopup({
      userId: u.id,
      amount: b.amount ?? Number.NaN,
      topUpCode: b.top_up_code ?? '',
      group: u.group,
    });
    ok(res, r.payable.toFixed(2), 'success');
  });

  api.post('/user/pay', guard.user, Pay, async (req, res) => {
    const b = input(req, Pay).body;
    const u = caller(req);
    const r = await topup.createTopupOrder({
      userId: u.id,
      username: u.username,
      group: u.group,
      amount: b.amount ?? Number.NaN,
      topUpCode: b.top_up_code ?? '',
      paymentMethod: b.payment_method ?? '',
      callbackAddress: '',
    });
    res.json({ success: true, message: 'success', data: r.form, url: r.url });
  });

  // The payment gateway calls back with GET (query) or POST (form); it wants "success" or "fail".
  const notify = async (req: Request, res: Response) => {
    const raw = { ...(req.query as Record<string, unknown>), ...body(req) };
    const params = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, str(v) ?? '']));
    try {
      const r = await topup.handlePaymentNotify({ params });
      res.type('text/plain').send(r.success ? 'success' : 'fail');
    } catch (err) {
      logger.error({ err, tradeNo: params.out_trade_no }, 'payment notification failed');
      res.type('text/plain').send('fail');
    }
  };
  api.get('/user/epay/notify', notify);
  api.post('/user/epay/notify', express.urlencoded({ extended: false }), notify);
}
