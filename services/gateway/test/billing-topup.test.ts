import { createHash } from 'node:crypto';
import { connectMongo, createClient } from '@aigw/common';
import type { Stack } from '@aigw/local-stack/stack';
import { WalletService } from '@aigw/proto/billing/v1/billing';
import { eventually } from '@aigw/testkit';
import { FakeStripe } from '@aigw/testkit/fakes';
import { type Api, rootApi, setOptions, startMoneyStack, userApi } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeCreem } from './fakes/creem.ts';

const EPAY_KEY = 'test-merchant-key';

/** What an Epay-compatible gateway signs: sorted non-empty pairs (no sign/sign_type) + key, MD5. */
function sign(params: Record<string, string>, key = EPAY_KEY): string {
  const text = Object.keys(params)
    .filter((k) => k !== 'sign' && k !== 'sign_type' && params[k] !== '')
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
  return createHash('md5')
    .update(text + key)
    .digest('hex');
}

describe('online top-up through the gateway', () => {
  let stack: Stack;
  let user: { api: Api; id: number };
  // price_plan / prod_plan cost a plan's 12.50; the *_cheap ones 1.00 (a wrong amount for it).
  const stripe = new FakeStripe('sk_test_fake', 'whsec_fake', 800, { price_plan: 1250, price_plan_cheap: 100 });
  const creem = new FakeCreem('creem_test_key', 'creem_whsec', {
    prod_ten: 1000,
    prod_plan: 1250,
    prod_plan_cheap: 100,
  });
  beforeAll(async () => {
    await Promise.all([stripe.start(), creem.start()]);
    stack = await startMoneyStack([], { STRIPE_API_BASE: stripe.baseUrl, CREEM_API_BASE: creem.baseUrl });
    stripe.webhookUrl = `${stack.gatewayUrl}/api/stripe/webhook`;
    creem.webhookUrl = `${stack.gatewayUrl}/api/creem/webhook`;
    user = await userApi(stack);
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([stripe.stop(), creem.stop()]);
  });

  const balance = async () => (await user.api.get<{ quota: number }>('/user/self')).body.data?.quota ?? 0;
  const notify = async (params: Record<string, string>) => {
    const url = new URL('/api/user/epay/notify', stack.gatewayUrl);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return (await fetch(url)).text();
  };

  it('when online payment is not configured, then paying is refused; quotes still answer', async () => {
    expect((await user.api.post('/user/pay', { amount: 10, payment_method: 'zfb' })).body).toMatchObject({
      success: false,
      message: '管理员未开启在线充值！',
    });
    expect((await user.api.post('/user/amount', { amount: 10 })).body).toMatchObject({
      success: true,
      message: 'success',
      data: '73.00',
    });
    expect((await user.api.post('/user/amount', { amount: 0 })).body).toMatchObject({
      success: false,
      message: '充值数量不能小于 1',
    });
  });

  it('when a top-up group ratio and minimum apply, then the quote follows them', async () => {
    await setOptions(stack, { TopupGroupRatio: '{"default":0.5,"vip":1}', MinTopUp: '5' });
    const quote = await eventually(
      () => user.api.post<string>('/user/amount', { amount: 10 }),
      (r) => r.body.data === '36.50',
    );
    expect(quote.body.data).toBe('36.50');
    const low = await eventually(
      () => user.api.post('/user/amount', { amount: 4 }),
      (r) => r.body.message === '充值数量不能小于 5',
    );
    expect(low.body.message).toBe('充值数量不能小于 5');
    await setOptions(stack, { TopupGroupRatio: '{"default":1,"vip":1}', MinTopUp: '1' });
  });

  it('when an order is paid and the notification is replayed 5 times, then the wallet is credited once', async () => {
    await setOptions(stack, {
      PayAddress: 'https://pay.example.test/',
      EpayId: '1001',
      EpayKey: EPAY_KEY,
      ServerAddress: 'https://gw.example.test',
    });
    // Each option reaches the gateway on its own: wait for the last one (ServerAddress) too.
    const order = await eventually(
      () => user.api.post<Record<string, string>>('/user/pay', { amount: 2, payment_method: 'zfb' }),
      (r) =>
        r.body.success &&
        (r.body.data as Record<string, string>).notify_url?.startsWith('https://gw.example.test/') === true,
    );
    expect(order.body.url).toBe('https://pay.example.test/submit.php');
    const form = order.body.data as Record<string, string>;
    expect(form).toMatchObject({
      pid: '1001',
      type: 'alipay',
      money: '14.60',
      name: 'TUC2',
      notify_url: 'https://gw.example.test/api/user/epay/notify',
      return_url: 'https://gw.example.test/log',
      sign_type: 'MD5',
    });
    expect(form.sign).toBe(sign(form));

    const paid: Record<string, string> = {
      pid: '1001',
      trade_no: 'EPAY2026001',
      out_trade_no: form.out_trade_no as string,
      type: 'alipay',
      name: form.name as string,
      money: form.money as string,
      trade_status: 'TRADE_SUCCESS',
    };
    paid.sign = sign(paid);
    paid.sign_type = 'MD5';

    const before = await balance();
    const answers = await Promise.all(Array.from({ length: 5 }, () => notify(paid)));
    expect(answers).toEqual(['success', 'success', 'success', 'success', 'success']);
    expect(await notify(paid)).toBe('success');
    expect(await balance()).toBe(before + 2 * 500000);
  });

  it('when a notification has a bad signature, an unknown order or a wrong amount, then nothing is credited', async () => {
    const order = await user.api.post<Record<string, string>>('/user/pay', { amount: 3, payment_method: 'wx' });
    const form = order.body.data as Record<string, string>;
    expect(form.type).toBe('wxpay');
    const base: Record<string, string> = {
      pid: '1001',
      trade_no: 'EPAY2026002',
      out_trade_no: form.out_trade_no as string,
      type: 'wxpay',
      name: form.name as string,
      money: form.money as string,
      trade_status: 'TRADE_SUCCESS',
    };
    const before = await balance();
    expect(await notify({ ...base, sign: sign(base, 'wrong-key'), sign_type: 'MD5' })).toBe('fail');
    expect(await notify({ ...base, sign: 'deadbeef', sign_type: 'MD5' })).toBe('fail');
    const unknown = { ...base, out_trade_no: 'USR0NOunknown' };
    expect(await notify({ ...unknown, sign: sign(unknown), sign_type: 'MD5' })).toBe('fail');
    const cheap = { ...base, money: '0.01' };
    expect(await notify({ ...cheap, sign: sign(cheap), sign_type: 'MD5' })).toBe('fail');
    expect(await balance()).toBe(before);
  });

  it('when a user buys a subscription plan through Epay, then a forged notification starts nothing and the replayed real one starts it once', async () => {
    await setOptions(stack, {
      PayAddress: 'https://pay.example.test/',
      EpayId: '1001',
      EpayKey: EPAY_KEY,
      ServerAddress: 'https://gw.example.test',
    });
    const root = await rootApi(stack);
    const created = await root.post<{ id: number }>('/subscription/admin/plans', {
      plan: {
        title: 'Epay plan',
        price_amount: 3.5,
        duration_unit: 'day',
        duration_value: 30,
        monthly_quota: 1_000_000,
      },
    });
    const planId = created.body.data?.id as number;
    const bad = await user.api.post('/subscription/epay/pay', { plan_id: planId, payment_method: 'btc' });
    expect(bad.body).toMatchObject({ success: false, message: '支付方式不存在' });
    const order = await eventually(
      () => user.api.post<Record<string, string>>('/subscription/epay/pay', { plan_id: planId, payment_method: 'zfb' }),
      (r) =>
        r.body.success &&
        (r.body.data as Record<string, string>).notify_url?.startsWith('https://gw.example.test/') === true,
    );
    expect(order.body.url).toBe('https://pay.example.test/submit.php');
    const form = order.body.data as Record<string, string>;
    expect(form).toMatchObject({
      pid: '1001',
      type: 'alipay',
      money: '3.50',
      name: 'SUB:Epay plan',
      notify_url: 'https://gw.example.test/api/subscription/epay/notify',
    });
    expect(form.sign).toBe(sign(form));
    const paid: Record<string, string> = {
      pid: '1001',
      trade_no: 'EPAYSUB001',
      out_trade_no: form.out_trade_no as string,
      type: 'alipay',
      name: form.name as string,
      money: form.money as string,
      trade_status: 'TRADE_SUCCESS',
    };
    const subNotify = async (params: Record<string, string>) => {
      const url = new URL('/api/subscription/epay/notify', stack.gatewayUrl);
      for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
      return (await fetch(url)).text();
    };
    type Mine = {
      subscriptions: { subscription: { plan_id: number; windows: { period: string; limit: number }[] } }[];
    };
    const ofPlan = async () =>
      ((await user.api.get<Mine>('/subscription/self')).body.data?.subscriptions ?? []).filter(
        (s) => s.subscription.plan_id === planId,
      );
    const before = await balance();
    expect(await subNotify({ ...paid, sign: sign(paid, 'wrong-key'), sign_type: 'MD5' })).toBe('fail');
    const cheap = { ...paid, money: '0.01' };
    expect(await subNotify({ ...cheap, sign: sign(cheap), sign_type: 'MD5' })).toBe('fail');
    // A top-up order's notification address does not take a subscription order.
    expect(await notify({ ...paid, sign: sign(paid), sign_type: 'MD5' })).toBe('fail');
    expect(await ofPlan()).toEqual([]);
    const signed = { ...paid, sign: sign(paid), sign_type: 'MD5' };
    const answers = await Promise.all(Array.from({ length: 5 }, () => subNotify(signed)));
    expect(answers).toEqual(['success', 'success', 'success', 'success', 'success']);
    expect(await subNotify(signed)).toBe('success');
    const subs = await ofPlan();
    expect(subs).toHaveLength(1);
    expect(subs[0]?.subscription.windows).toMatchObject([{ period: 'monthly', limit: 1_000_000 }]);
    expect(await balance()).toBe(before);
  });

  it('when the payment method or amount is invalid, then the order is refused', async () => {
    expect((await user.api.post('/user/pay', { amount: 3, payment_method: 'btc' })).body.message).toBe(
      '不支持的支付方式',
    );
    expect((await user.api.post('/user/pay', { amount: 1.5, payment_method: 'zfb' })).body.message).toBe(
      '充值数量必须为整数',
    );
  });
  type Order = { trade_no: string; status: string; amount: number; money: number; payment_method: string };
  const history = async (api = user.api) =>
    (await api.get<{ items: Order[]; total: number }>('/user/topup/self')).body.data?.items ?? [];

  it('when a user pays with Stripe, then the signed webhook credits the amount once and the history shows it paid', async () => {
    // Webhooks of a provider that is not configured are refused without crediting.
    expect((await stripe.deliver('{}')).status).toBe(404);
    await setOptions(stack, {
      StripeUnitPrice: '8',
      StripeApiSecret: 'sk_test_fake',
      StripeWebhookSecret: 'whsec_fake',
      StripePriceId: 'price_fake',
    });
    await eventually(
      () => user.api.get<{ enable_stripe_topup: boolean }>('/user/topup/info'),
      (r) => r.body.data?.enable_stripe_topup === true,
    );
    expect((await user.api.post('/user/stripe/amount', { amount: 3 })).body).toMatchObject({
      success: true,
      data: '24.00',
    });
    expect((await user.api.post('/user/stripe/amount', { amount: 10001 })).body.message).toBe('充值数量不能大于 10000');
    const pay = await user.api.post<{ pay_link: string; trade_no: string }>('/user/stripe/pay', {
      amount: 3,
      payment_method: 'stripe',
    });
    expect(pay.body.success).toBe(true);
    const tradeNo = pay.body.data?.trade_no as string;
    const session = stripe.sessionOf(tradeNo);
    expect(pay.body.data?.pay_link).toBe(session.url);
    // What Stripe received: form-encoded Checkout parameters with our order as the reference.
    expect(stripe.created.at(-1)).toMatchObject({
      mode: 'payment',
      client_reference_id: tradeNo,
      'line_items[0][price]': 'price_fake',
      'line_items[0][quantity]': '3',
      'metadata[trade_no]': tradeNo,
    });
    expect((await history()).find((o) => o.trade_no === tradeNo)).toMatchObject({
      status: 'pending',
      amount: 3,
      money: 24,
      payment_method: 'stripe',
    });

    const before = await balance();
    const delivery = await stripe.complete(tradeNo);
    expect(delivery.status).toBe(200);
    expect(await balance()).toBe(before + 3 * 500000);
    expect((await history()).find((o) => o.trade_no === tradeNo)?.status).toBe('success');

    // The same event again, and a second event for the same order: nothing more.
    expect((await stripe.deliver(delivery.payload)).status).toBe(200);
    const again = stripe.event('checkout.session.async_payment_succeeded', stripe.sessionOf(tradeNo));
    expect((await stripe.deliver(again)).status).toBe(200);
    expect(await balance()).toBe(before + 3 * 500000);
  });

  it('when a Stripe webhook has a bad signature or an old timestamp, then it is refused with 400 and nothing is credited', async () => {
    const pay = await user.api.post<{ trade_no: string }>('/user/stripe/pay', { amount: 2, payment_method: 'stripe' });
    const tradeNo = pay.body.data?.trade_no as string;
    const session = { ...stripe.sessionOf(tradeNo), status: 'complete' as const, payment_status: 'paid' as const };
    const payload = stripe.event('checkout.session.completed', session);
    const before = await balance();
    expect((await stripe.deliver(payload, { secret: 'whsec_wrong' })).status).toBe(400);
    expect((await stripe.deliver(payload, { signature: 'garbage' })).status).toBe(400);
    expect((await stripe.deliver(payload, { t: Math.floor(Date.now() / 1000) - 301 })).status).toBe(400);
    // A body changed after signing: the raw bytes are what is verified.
    const signed = await stripe.deliver(payload, { secret: 'whsec_wrong' });
    expect((await stripe.deliver(`${payload} `, { signature: signed.signature })).status).toBe(400);
    // A validly signed Epay notification cannot pay a Stripe order.
    const epay: Record<string, string> = {
      pid: '1001',
      trade_no: 'EPAY2026009',
      out_trade_no: tradeNo,
      type: 'alipay',
      name: 'TUC2',
      money: '16.00',
      trade_status: 'TRADE_SUCCESS',
    };
    expect(await notify({ ...epay, sign: sign(epay), sign_type: 'MD5' })).toBe('fail');
    expect(await balance()).toBe(before);
    expect((await history()).find((o) => o.trade_no === tradeNo)?.status).toBe('pending');
  });

  it('when a user pays with Creem, then the signed webhook credits the product quota once', async () => {
    await setOptions(stack, {
      CreemApiKey: 'creem_test_key',
      CreemWebhookSecret: 'creem_whsec',
      CreemProducts: JSON.stringify([
        { productId: 'prod_ten', name: 'Ten', price: 10, currency: 'USD', quota: 5000000 },
      ]),
    });
    await eventually(
      () => user.api.get<{ enable_creem_topup: boolean }>('/user/topup/info'),
      (r) => r.body.data?.enable_creem_topup === true,
    );
    expect((await user.api.post('/user/creem/pay', { product_id: 'nope', payment_method: 'creem' })).body.message).toBe(
      '产品不存在',
    );
    const pay = await user.api.post<{ checkout_url: string; order_id: string }>('/user/creem/pay', {
      product_id: 'prod_ten',
      payment_method: 'creem',
    });
    expect(pay.body.success).toBe(true);
    const tradeNo = pay.body.data?.order_id as string;
    expect(pay.body.data?.checkout_url).toBe(creem.checkoutOf(tradeNo).checkout_url);
    expect(creem.created.at(-1)).toMatchObject({ product_id: 'prod_ten', request_id: tradeNo });

    const before = await balance();
    const bad = await creem.deliver(
      JSON.stringify({ eventType: 'checkout.completed', object: { request_id: tradeNo, order: { status: 'paid' } } }),
      { secret: 'wrong' },
    );
    expect(bad.status).toBe(400);
    expect(await balance()).toBe(before);

    const delivery = await creem.complete(tradeNo);
    expect(delivery.status).toBe(200);
    expect(await balance()).toBe(before + 5000000);
    expect((await creem.deliver(delivery.payload)).status).toBe(200);
    expect(await balance()).toBe(before + 5000000);
    expect((await history()).find((o) => o.trade_no === tradeNo)).toMatchObject({ status: 'success', money: 10 });
  });

  it('when an admin completes a pending order, then it is credited once and later webhooks add nothing', async () => {
    const pay = await user.api.post<{ trade_no: string }>('/user/stripe/pay', { amount: 4, payment_method: 'stripe' });
    const tradeNo = pay.body.data?.trade_no as string;
    const root = await rootApi(stack);
    const listed = await root.get<{ items: Order[]; total: number }>('/user/topup', { keyword: tradeNo });
    expect(listed.body.data?.total).toBe(1);
    expect(listed.body.data?.items[0]).toMatchObject({ trade_no: tradeNo, status: 'pending', user_id: user.id });
    expect((await user.api.post('/user/topup/complete', { trade_no: tradeNo })).status).toBe(403);

    const before = await balance();
    expect((await root.post('/user/topup/complete', { trade_no: tradeNo })).body).toMatchObject({
      success: true,
      data: { credited: true },
    });
    expect((await root.post('/user/topup/complete', { trade_no: tradeNo })).body.data).toEqual({ credited: false });
    expect((await stripe.complete(tradeNo)).status).toBe(200);
    expect(await balance()).toBe(before + 4 * 500000);
    expect((await root.post('/user/topup/complete', { trade_no: 'nope' })).body).toMatchObject({
      success: false,
      message: '充值订单不存在',
    });
  });

  it('when a paid event is not for what the order asked (amount, currency, money), then nothing is credited and the order stays pending', async () => {
    const pending = async (tradeNo: string) =>
      (await user.api.get<{ items: Order[] }>('/user/topup/self', { keyword: tradeNo })).body.data?.items[0]?.status;
    const before = await balance();
    // Stripe: a session paid elsewhere (a Payment Link carrying our order as client_reference_id) for 1.00, or in EUR.
    const pay = await user.api.post<{ trade_no: string }>('/user/stripe/pay', { amount: 3, payment_method: 'stripe' });
    const tradeNo = pay.body.data?.trade_no as string;
    const quoted = { ...stripe.sessionOf(tradeNo), status: 'complete' as const, payment_status: 'paid' as const };
    const other = { ...quoted, id: 'cs_test_link', amount_subtotal: 100, amount_total: 100 };
    expect((await stripe.deliver(stripe.event('checkout.session.completed', other))).status).toBe(400);
    const euros = { ...quoted, currency: 'eur' };
    expect((await stripe.deliver(stripe.event('checkout.session.async_payment_succeeded', euros))).status).toBe(400);
    // A promotion code is accepted only when the admin allows them (the subtotal is still the quote).
    const discounted = { ...quoted, amount_total: 1200 };
    expect((await stripe.deliver(stripe.event('checkout.session.completed', discounted))).status).toBe(400);
    expect(await pending(tradeNo)).toBe('pending');
    expect(await balance()).toBe(before);
    // The real payment still credits it.
    expect((await stripe.complete(tradeNo)).status).toBe(200);
    expect(await balance()).toBe(before + 3 * 500000);

    // Creem: a product listed at 12.50 whose Creem price is 1.00.
    await setOptions(stack, {
      CreemProducts: JSON.stringify([
        { productId: 'prod_ten', name: 'Ten', price: 10, currency: 'USD', quota: 5000000 },
        { productId: 'prod_plan_cheap', name: 'Mispriced', price: 12.5, currency: 'USD', quota: 6000000 },
      ]),
    });
    const creemPay = await eventually(
      () =>
        user.api.post<{ order_id: string }>('/user/creem/pay', {
          product_id: 'prod_plan_cheap',
          payment_method: 'creem',
        }),
      (r) => r.body.success === true,
    );
    const creemTrade = creemPay.body.data?.order_id as string;
    expect((await creem.complete(creemTrade)).status).toBe(400);
    expect(await pending(creemTrade)).toBe('pending');

    // Epay: a notification without the paid money.
    const order = await user.api.post<Record<string, string>>('/user/pay', { amount: 2, payment_method: 'zfb' });
    const form = order.body.data as Record<string, string>;
    const noMoney: Record<string, string> = {
      pid: '1001',
      trade_no: 'EPAY2026010',
      out_trade_no: form.out_trade_no as string,
      type: 'alipay',
      name: form.name as string,
      trade_status: 'TRADE_SUCCESS',
    };
    expect(await notify({ ...noMoney, sign: sign(noMoney), sign_type: 'MD5' })).toBe('fail');
    expect(await pending(form.out_trade_no as string)).toBe('pending');
    expect(await balance()).toBe(before + 3 * 500000);
  });

  type MySub = {
    id: string;
    plan_id: number;
    status: string;
    windows: { period: string; limit: number; used: number }[];
  };
  const subsOf = async (planId: number) =>
    (
      (await user.api.get<{ all_subscriptions: { subscription: MySub }[] }>('/subscription/self')).body.data
        ?.all_subscriptions ?? []
    )
      .map((s) => s.subscription)
      .filter((s) => s.plan_id === planId);
  /** Shorter terms for later plans: a request is paid by the subscription ending first. */
  const cardPlan = async (title: string, ids: Record<string, string>, days = 20) => {
    const root = await rootApi(stack);
    const r = await root.post<{ id: number }>('/subscription/admin/plans', {
      plan: { title, price_amount: 12.5, duration_unit: 'day', duration_value: days, daily_quota: 1_000_000, ...ids },
    });
    expect(r.body.success).toBe(true);
    return r.body.data?.id as number;
  };

  /** Pays a plan's order through the provider; replays; then checks the plan is active, usable and the wallet unchanged. */
  async function buyPlanByCard(provider: 'stripe' | 'creem', planId: number, pay: () => Promise<string>) {
    const tradeNo = await pay();
    const before = await balance();
    const delivery = provider === 'stripe' ? await stripe.complete(tradeNo) : await creem.complete(tradeNo);
    expect(delivery.status).toBe(200);
    const deliver = (payload: string) => (provider === 'stripe' ? stripe : creem).deliver(payload);
    // The same event replayed, concurrently and later: one subscription.
    const replays = await Promise.all([
      deliver(delivery.payload),
      deliver(delivery.payload),
      deliver(delivery.payload),
    ]);
    expect(replays.map((r) => r.status)).toEqual([200, 200, 200]);
    const subs = await subsOf(planId);
    expect(subs).toHaveLength(1);
    expect(subs[0]).toMatchObject({ status: 'active', windows: [{ period: 'daily', limit: 1_000_000, used: 0 }] });
    expect(await balance()).toBe(before);
    // Usable: a request of the user is paid by it, not by the wallet.
    const wallet = createClient(WalletService, stack.env.BILLING_ADDR as string);
    try {
      const rid = `card-plan-${provider}-${Date.now()}`;
      const held = await wallet.preConsume({
        requestId: rid,
        userId: user.id,
        amount: 2000,
        model: 'gpt-4o-mini',
        group: 'default',
      });
      expect(held.subscriptionId).toBe(subs[0]?.id);
      await wallet.settle({ requestId: rid, actual: 1500, userId: user.id });
    } finally {
      wallet.close();
    }
    expect((await subsOf(planId))[0]?.windows[0]?.used).toBe(1500);
    expect(await balance()).toBe(before);
    return tradeNo;
  }

  it('when a user buys a plan with Stripe, then its signed webhook starts it once, usable, the wallet unchanged; a wrong amount starts nothing', async () => {
    const planId = await cardPlan('Stripe plan', { stripe_price_id: 'price_plan' });
    const noPrice = await cardPlan('No Stripe price', {});
    expect((await user.api.post('/subscription/stripe/pay', { plan_id: noPrice })).body).toMatchObject({
      success: false,
      message: '该套餐未配置 StripePriceId',
    });
    const stripePay = (id: number, price: string) => async () => {
      const pay = await user.api.post<{ pay_link: string; trade_no: string }>('/subscription/stripe/pay', {
        plan_id: id,
      });
      expect(pay.body.success).toBe(true);
      const tradeNo = pay.body.data?.trade_no as string;
      expect(pay.body.data?.pay_link).toBe(stripe.sessionOf(tradeNo).url);
      expect(stripe.created.at(-1)).toMatchObject({
        mode: 'payment',
        client_reference_id: tradeNo,
        'line_items[0][price]': price,
        'line_items[0][quantity]': '1',
      });
      return tradeNo;
    };
    const tradeNo = await buyPlanByCard('stripe', planId, stripePay(planId, 'price_plan'));
    // A second event for the same, already granted order: nothing more.
    const again = stripe.event('checkout.session.async_payment_succeeded', stripe.sessionOf(tradeNo));
    expect((await stripe.deliver(again)).status).toBe(200);
    expect(await subsOf(planId)).toHaveLength(1);

    // A plan whose Stripe price charges 1.00 for its 12.50: the paid event is refused, nothing starts.
    const cheap = await cardPlan('Cheap Stripe price', { stripe_price_id: 'price_plan_cheap' });
    const cheapTrade = await stripePay(cheap, 'price_plan_cheap')();
    const before = await balance();
    expect((await stripe.complete(cheapTrade)).status).toBe(400);
    expect(await subsOf(cheap)).toEqual([]);
    // An unknown order: nothing.
    const unknown = { ...stripe.sessionOf(cheapTrade), client_reference_id: 'SUBSTRIPE0NOnothing' };
    expect((await stripe.deliver(stripe.event('checkout.session.completed', unknown))).status).toBe(200);
    expect(await subsOf(cheap)).toEqual([]);
    expect(await balance()).toBe(before);
  });

  it('when a user buys a plan with Creem, then its signed webhook starts it once, usable, the wallet unchanged; a wrong amount starts nothing', async () => {
    const planId = await cardPlan('Creem plan', { creem_product_id: 'prod_plan' }, 10);
    const creemPay = (id: number, product: string) => async () => {
      const pay = await user.api.post<{ checkout_url: string; order_id: string }>('/subscription/creem/pay', {
        plan_id: id,
      });
      expect(pay.body.success).toBe(true);
      const tradeNo = pay.body.data?.order_id as string;
      expect(pay.body.data?.checkout_url).toBe(creem.checkoutOf(tradeNo).checkout_url);
      expect(creem.created.at(-1)).toMatchObject({ request_id: tradeNo, product_id: product });
      return tradeNo;
    };
    await buyPlanByCard('creem', planId, creemPay(planId, 'prod_plan'));
    const bad = await creem.deliver(JSON.stringify({ eventType: 'checkout.completed' }), { secret: 'wrong' });
    expect(bad.status).toBe(400);

    const cheap = await cardPlan('Cheap Creem product', { creem_product_id: 'prod_plan_cheap' });
    const cheapTrade = await creemPay(cheap, 'prod_plan_cheap')();
    const before = await balance();
    expect((await creem.complete(cheapTrade)).status).toBe(400);
    expect(await subsOf(cheap)).toEqual([]);
    expect(await balance()).toBe(before);
  });

  it('when a subscription ends, then the next change takes it out of the ledger state while its history still lists it expired; a request held on it settles to it', async () => {
    const root = await rootApi(stack);
    const created = await root.post<{ id: number }>('/subscription/admin/plans', {
      plan: {
        title: 'Two seconds',
        price_amount: 1,
        duration_unit: 'custom',
        custom_seconds: 2,
        daily_quota: 1_000_000,
        models: ['short-model'],
      },
    });
    const planId = created.body.data?.id as number;
    const buyer = await userApi(stack);
    expect(
      (await root.post(`/subscription/admin/users/${buyer.id}/subscriptions`, { plan_id: planId })).body.success,
    ).toBe(true);
    type Self = { subscriptions: { subscription: MySub }[]; all_subscriptions: { subscription: MySub }[] };
    const self = async () => (await buyer.api.get<Self>('/subscription/self')).body.data as Self;
    const subId = (await self()).subscriptions[0]?.subscription.id as string;
    const quota = async () => (await buyer.api.get<{ quota: number }>('/user/self')).body.data?.quota ?? 0;
    const before = await quota();
    const db = await connectMongo(stack.env.MONGO_URL as string, `aigw_billing_${stack.id}`);
    const wallet = createClient(WalletService, stack.env.BILLING_ADDR as string);
    const latest = async () =>
      (
        await db.collection('ledger_entries').find({ user_id: buyer.id }).sort({ seq: -1 }).limit(1).toArray()
      )[0] as unknown as { state: { subs?: Record<string, unknown> }; ended_subs?: Record<string, unknown> };
    const prefer = (p: string) => buyer.api.put('/subscription/self/preference', { billing_preference: p });
    try {
      const rid = `short-${Date.now()}`;
      const held = await wallet.preConsume({
        requestId: rid,
        userId: buyer.id,
        amount: 500,
        model: 'short-model',
        group: 'default',
      });
      expect(held.subscriptionId).toBe(subId);
      await eventually(self, (s) => s.all_subscriptions[0]?.subscription.status === 'expired', { timeoutMs: 10_000 });
      // A change while the request still holds from it: it stays, and the late settle charges it.
      expect((await prefer('wallet_first')).body.success).toBe(true);
      expect(Object.keys((await latest()).state.subs ?? {})).toEqual([subId]);
      expect((await wallet.settle({ requestId: rid, actual: 400, userId: buyer.id })).delta).toBe(0);
      // The next change takes it out; the history keeps it.
      expect((await prefer('subscription_first')).body.success).toBe(true);
      const entry = await latest();
      expect(entry.state.subs).toEqual({});
      expect(Object.keys(entry.ended_subs ?? {})).toEqual([subId]);
    } finally {
      wallet.close();
      await db.close();
    }
    const after = await self();
    expect(after.subscriptions).toEqual([]);
    expect(after.all_subscriptions.map((s) => [s.subscription.id, s.subscription.status])).toEqual([
      [subId, 'expired'],
    ]);
    expect(await quota()).toBe(before);
  });
});
