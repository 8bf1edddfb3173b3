import { ok } from '@aigw/common';
import express, { type Request, type Response, type Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { body, caller, num, str } from './wire.ts';

/** Online top-up: quote, order, and the payment gateway's notification. */
export function topupRoutes(api: Router, { clients, guard, logger }: RouteDeps): void {
  const { topup } = clients;

  api.post('/user/amount', guard.user, async (req, res) => {
    const b = body(req);
    const u = caller(req);
    const r = await topup.quoteTopup({
      userId: u.id,
      amount: num(b.amount) ?? Number.NaN,
      topUpCode: str(b.top_up_code) ?? '',
      group: u.group,
    });
    ok(res, r.payable.toFixed(2), 'success');
  });

  api.post('/user/pay', guard.user, async (req, res) => {
    const b = body(req);
    const u = caller(req);
    const r = await topup.createTopupOrder({
      userId: u.id,
      username: u.username,
      group: u.group,
      amount: num(b.amount) ?? Number.NaN,
      topUpCode: str(b.top_up_code) ?? '',
      paymentMethod: str(b.payment_method) ?? '',
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
