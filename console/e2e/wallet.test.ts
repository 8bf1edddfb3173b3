/**
 * Tokens and the wallet in a real browser: a user creates a token, copies its key, redeems a code
 * and sees the balance change; a user buys a subscription plan through (a fake) Stripe Checkout.
 */
import { eventually } from '@aigw/testkit';
import { FakeStripe } from '@aigw/testkit/fakes';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, login, startHarness, toast } from './money-support.ts';

/** Calls the console's API from the page as the logged-in user (the admin pages' own requests). */
const api = (page: Page, method: string, url: string, body?: unknown) =>
  page.evaluate(
    async ([m, u, b]) => {
      const id = JSON.parse(localStorage.getItem('user') ?? '{}').id;
      const res = await fetch(u as string, {
        method: m as string,
        headers: { 'Content-Type': 'application/json', 'New-Api-User': String(id) },
        ...(b === undefined ? {} : { body: JSON.stringify(b) }),
      });
      return (await res.json()) as { success: boolean; message: string; data?: unknown };
    },
    [method, url, body] as const,
  );

describe('console tokens and wallet (browser)', () => {
  let h: Harness;
  // A plan's Stripe price costs what the plan costs (12.50).
  const stripe = new FakeStripe('sk_test_e2e', 'whsec_e2e', 800, { price_e2e_plan: 1250 });
  beforeAll(async () => {
    await stripe.start();
    h = await startHarness(['users', 'channels', 'billing', 'gateway'], { STRIPE_API_BASE: stripe.baseUrl });
    stripe.webhookUrl = `${h.stack.gatewayUrl}/api/stripe/webhook`;
  });
  afterAll(async () => {
    await h?.close();
    await stripe.stop();
  });

  it('when a user creates a token, copies its key and redeems a code, then the key is on the clipboard and the balance grows', async () => {
    const username = `w${Date.now().toString(36).slice(-6)}`;

    // The admin makes the user and a code through the APIs the admin pages use.
    const admin = await h.fresh();
    await login(admin.page, 'root', '123456');
    const keys = await admin.page.evaluate(async (name) => {
      const id = JSON.parse(localStorage.getItem('user') ?? '{}').id;
      const headers = { 'Content-Type': 'application/json', 'New-Api-User': String(id) };
      const made = await fetch('/api/user/', {
        method: 'POST',
        headers,
        body: JSON.stringify({ username: name, display_name: name, password: 'password123' }),
      });
      if (!((await made.json()) as { success: boolean }).success) return [];
      const res = await fetch('/api/redemption/', {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'e2e', quota: 100000, count: 1 }),
      });
      return ((await res.json()) as { data: string[] }).data;
    }, username);
    await admin.context.close();
    expect(keys).toHaveLength(1);

    const { context, page } = await h.fresh();
    await login(page, username, 'password123');
    await page.getByRole('button', { name: '添加令牌' }).click();
    const drawer = page.locator('.arco-drawer');
    await drawer.getByRole('button', { name: '提交' }).click();
    await toast(page, '令牌名称不能为空').waitFor();
    await drawer.locator('input[name="token-name"]').fill('e2e-token');
    await drawer.getByRole('button', { name: '10$' }).click();
    await drawer.getByRole('button', { name: '提交' }).click();
    await toast(page, '1 个令牌创建成功').waitFor();

    const row = page.locator('tr', { hasText: 'e2e-token' });
    await row.waitFor();
    await expect(row.getByText('已启用').count()).resolves.toBe(1);
    await expect(row.getByText('$10.00').count()).resolves.toBe(1);
    await row.getByRole('button', { name: '复制' }).click();
    await toast(page, '已复制到剪贴板！').waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toMatch(/^sk-[0-9a-zA-Z]{48}$/);

    // Editing loads the token into the drawer's form; what is changed there is saved.
    await row.getByRole('button', { name: '编辑' }).click();
    const tokenName = drawer.locator('input[name="token-name"]');
    await eventually(
      () => tokenName.inputValue(),
      (v) => v === 'e2e-token',
      { what: 'the edited token in the drawer' },
    );
    await tokenName.fill('e2e-token-renamed');
    await drawer.getByRole('button', { name: '1$', exact: true }).click();
    await drawer.getByRole('button', { name: '提交' }).click();
    await toast(page, '令牌更新成功！').waitFor();
    const renamed = page.locator('tr', { hasText: 'e2e-token-renamed' });
    await renamed.getByText('$1.00').waitFor();

    await page.goto('/topup');
    const balance = page.locator('.aigw-wallet-balance');
    await expect(balance.getByText('$0.000000').waitFor()).resolves.toBeUndefined();
    // No top-up link is set: the get-code button is not offered, the notice says why (spec 02).
    await page.getByText('超级管理员未设置充值链接！').waitFor();
    await expect(page.getByRole('button', { name: '获取兑换码' }).count()).resolves.toBe(0);
    await page.getByRole('button', { name: '兑换', exact: true }).click();
    await toast(page, '请输入兑换码！').waitFor();
    await page.locator('input[name="redemption-code"]').fill(keys[0] as string);
    await page.getByRole('button', { name: '兑换', exact: true }).click();
    await toast(page, '兑换成功！').waitFor();
    await expect(balance.getByText('$0.200000').waitFor()).resolves.toBeUndefined();

    await page.locator('input[name="redemption-code"]').fill(keys[0] as string);
    await page.getByRole('button', { name: '兑换', exact: true }).click();
    await toast(page, '该兑换码已被使用').waitFor();
    await context.close();
  });

  it('when a user buys a plan with Stripe in the plan dialog, then the browser goes to Stripe Checkout and, once the signed webhook arrives, the plan is active', async () => {
    const username = `s${Date.now().toString(36).slice(-6)}`;
    const title = `Stripe 套餐 ${username}`;
    const admin = await h.fresh();
    await login(admin.page, 'root', '123456');
    for (const [key, value] of Object.entries({
      StripeApiSecret: 'sk_test_e2e',
      StripeWebhookSecret: 'whsec_e2e',
      StripePriceId: 'price_e2e_topup',
      StripeUnitPrice: '8',
    })) {
      expect((await api(admin.page, 'PUT', '/api/option/', { key, value })).success).toBe(true);
    }
    const plan = await api(admin.page, 'POST', '/api/subscription/admin/plans', {
      plan: {
        title,
        price_amount: 12.5,
        duration_unit: 'day',
        duration_value: 30,
        daily_quota: 1_000_000,
        stripe_price_id: 'price_e2e_plan',
      },
    });
    expect(plan.success).toBe(true);
    const made = await api(admin.page, 'POST', '/api/user/', {
      username,
      display_name: username,
      password: 'password123',
    });
    expect(made.success).toBe(true);
    await admin.context.close();

    const { context, page } = await h.fresh();
    // Stripe's hosted checkout page stands in for the real one (the browser leaves for it).
    await context.route('https://checkout.stripe.test/**', (route) =>
      route.fulfill({ contentType: 'text/html', body: '<title>Stripe Checkout</title>' }),
    );
    await login(page, username, 'password123');
    await eventually(
      () => api(page, 'GET', '/api/user/topup/info'),
      (r) => (r.data as { enable_stripe_topup?: boolean } | undefined)?.enable_stripe_topup === true,
    );
    await page.goto('/topup');
    const planRow = page.locator('tr', { hasText: title });
    await planRow.getByRole('button', { name: '购买' }).click();
    const dialog = page.locator('.arco-modal', { hasText: '购买订阅套餐' });
    await dialog.getByRole('button', { name: 'Stripe 支付' }).click();
    await page.waitForURL(/^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_/);

    // The session Stripe was asked for: this plan's price, once, for our order.
    const session = stripe.sessions.get(page.url().split('/').at(-1) as string);
    expect(session?.url).toBe(page.url());
    expect(stripe.created.at(-1)).toMatchObject({
      mode: 'payment',
      'line_items[0][price]': 'price_e2e_plan',
      'line_items[0][quantity]': '1',
    });
    expect((await stripe.complete(session?.client_reference_id as string)).status).toBe(200);

    // Back from Stripe: the wallet page lists the plan among the user's subscriptions, active.
    await page.goto('/topup');
    const mine = page.locator('.arco-card', { hasText: '我的订阅' }).locator('tr', { hasText: title });
    await mine.getByText('生效中').waitFor();
    await context.close();
  });
});
