import { createHash } from 'node:crypto';
import type { Stack } from '@aigw/local-stack/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, eventually, setOptions, startMoneyStack, userApi } from './billing-harness.ts';

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
  beforeAll(async () => {
    stack = await startMoneyStack();
    user = await userApi(stack);
  });
  afterAll(async () => {
    await stack?.stop();
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

  it('when the payment method or amount is invalid, then the order is refused', async () => {
    expect((await user.api.post('/user/pay', { amount: 3, payment_method: 'btc' })).body.message).toBe(
      '不支持的支付方式',
    );
    expect((await user.api.post('/user/pay', { amount: 1.5, payment_method: 'zfb' })).body.message).toBe(
      '充值数量必须为整数',
    );
  });
});
