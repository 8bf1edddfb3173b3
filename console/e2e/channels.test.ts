/**
 * Channel administration in a real browser: an admin adds a channel through the drawer and tests
 * it; the test goes through the relay's adaptor to a fake OpenAI-compatible provider.
 */
import { type FakeOpenAi, startFakeOpenAi } from '@aigw/testkit/fakes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, login, startHarness, toast } from './money-support.ts';

describe('console channels (browser)', () => {
  let h: Harness;
  let fake: FakeOpenAi;
  beforeAll(async () => {
    fake = await startFakeOpenAi({ key: 'sk-e2e-upstream' });
    h = await startHarness(['users', 'channels', 'billing', 'relay', 'gateway']);
  });
  afterAll(async () => {
    await h?.close();
    await fake?.close();
  });

  it('when an admin adds a channel in the drawer and tests it, then it is listed and the test passes through the fake provider', async () => {
    const { context, page } = await h.fresh();
    await login(page, 'root', '123456');
    await page.goto('/channel');
    await page.getByRole('button', { name: '添加新的渠道' }).click();
    const drawer = page.locator('.arco-drawer');
    await drawer.locator('input[name="name"]').fill('e2e-openai');
    await drawer.locator('input[name="base_url"]').fill(`${fake.url}/`);
    await drawer.locator('textarea[name="key"]').fill('sk-e2e-upstream');

    // Validation first: no model yet.
    await drawer.getByRole('button', { name: '提交' }).click();
    await toast(page, '请至少选择一个模型！').waitFor();

    await drawer.getByPlaceholder('输入自定义模型名称（多个用英文逗号分隔）').fill('gpt-4o-mini');
    await drawer.getByRole('button', { name: '填入', exact: true }).click();
    await drawer.getByPlaceholder('输入自定义模型名称（多个用英文逗号分隔）').fill('gpt-4o-mini');
    await drawer.getByRole('button', { name: '填入', exact: true }).click();
    await toast(page, '某些模型已存在！').waitFor();
    await drawer.getByRole('button', { name: '提交' }).click();
    await toast(page, '渠道创建成功！').waitFor();

    const row = page.locator('tr', { hasText: 'e2e-openai' });
    await row.waitFor();
    await expect(row.getByText('未测试').count()).resolves.toBe(1);
    await expect(row.getByText('OpenAI').count()).resolves.toBeGreaterThan(0);
    await row.getByRole('button', { name: '测试' }).click();
    await toast(page, '渠道 e2e-openai 测试成功').waitFor();
    expect(fake.calls).toContain('/v1/chat/completions');
    await expect(row.locator('.aigw-response-time').innerText()).resolves.toMatch(/^\d+\.\d{2} 秒$/);

    // The key is kept by the server: the edit form shows it, the list never does.
    await row.getByRole('button', { name: '编辑' }).click();
    await expect(page.locator('.arco-drawer textarea[name="key"]').inputValue()).resolves.toBe('sk-e2e-upstream');
    await context.close();
  });
});
