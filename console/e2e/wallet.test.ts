/**
 * Tokens and the wallet in a real browser: a user creates a token, copies its key, redeems a code
 * and sees the balance change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, login, startHarness, toast } from './money-support.ts';

describe('console tokens and wallet (browser)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(['users', 'channels', 'billing', 'gateway']);
  });
  afterAll(async () => {
    await h?.close();
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
});
