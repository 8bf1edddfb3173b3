/**
 * Channel administration as it reads (issue 14, item 4): a channel is tested with a model chosen
 * from its list; at 1440 px the balance, priority and weight cells are not under the fixed action
 * column; in dark mode a greyed row's fixed cells stay opaque; the form holds max_input_tokens; a
 * missing channel shows 渠道未找到，请刷新页面后重试。
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import { clientsFor, createChannel, type RelayStack } from '@aigw/testkit/harness';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, login, startHarness, toast } from './money-support.ts';

async function shot(page: Page, name: string): Promise<void> {
  const dir = process.env.E2E_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`) });
}

/** Whether the centre of the element is the element itself (nothing covers it). */
const uncovered = (page: Page, selector: string) =>
  page.locator(selector).evaluateAll((els) =>
    els.map((el) => {
      const b = el.getBoundingClientRect();
      const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
      return !!hit && (hit === el || el.contains(hit));
    }),
  );

describe('channel admin (browser)', () => {
  let h: Harness;
  let s: RelayStack;
  let fake: FakeProvider;
  beforeAll(async () => {
    h = await startHarness(['users', 'channels', 'billing', 'relay', 'gateway']);
    s = clientsFor(h.stack);
    fake = await startFakeProvider({ kind: 'openai', key: 'k' });
  });
  afterAll(async () => {
    await fake?.close();
    await h?.close();
  });

  it('when a channel is tested with a chosen model, then that model goes upstream; the row reads at 1440 px and in dark mode', async () => {
    const name = `e2e-pick-${Date.now().toString(36)}`;
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'k', models: 'gpt-4o-mini,e2e-second-model', name });
    const grey = `e2e-grey-${Date.now().toString(36)}`;
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'k', models: 'gpt-4o-mini', name: grey });

    const { context, page } = await h.fresh();
    await context.addInitScript(() => localStorage.setItem('notice_dismissed', 'none'));
    await page.setViewportSize({ width: 1440, height: 900 });
    await login(page, 'root', '123456');
    await page.goto('/channel');
    const row = page.locator('tr', { hasText: name });
    await row.waitFor();

    fake.reset();
    await row.getByRole('button', { name: '选择模型' }).click();
    await page.locator('.aigw-channel-test-models .arco-dropdown-menu-item', { hasText: 'e2e-second-model' }).click();
    await toast(page, `渠道 ${name} 测试成功`).waitFor();
    expect(fake.requests.map((r) => (r.body as { model?: string } | undefined)?.model)).toContain('e2e-second-model');

    // Balance, priority and weight are in view at 1440 px, not under the fixed action column.
    for (const selector of [
      `tr:has-text("${name}") .arco-tag:has-text("$")`,
      `tr:has-text("${name}") .arco-input-number input`,
    ]) {
      const seen = await uncovered(page, selector);
      expect(seen.length, selector).toBeGreaterThan(0);
      expect(seen, selector).toEqual(seen.map(() => true));
    }
    await shot(page, 'channel-1440');

    // Dark mode: the greyed row's fixed cells are opaque.
    await page.locator('tr', { hasText: grey }).getByRole('button', { name: '禁用' }).click();
    await page.locator('tr.aigw-row-disabled', { hasText: grey }).waitFor();
    await page.evaluate(() => localStorage.setItem('arco-theme', 'dark'));
    await page.reload();
    const greyRow = page.locator('tr.aigw-row-disabled', { hasText: grey });
    await greyRow.waitFor();
    const alphas = await greyRow
      .locator('td.arco-table-col-fixed-right, td.arco-table-col-fixed-left')
      .evaluateAll((tds) =>
        tds.map((td) => {
          const c = getComputedStyle(td).backgroundColor;
          const m = c.match(/rgba?\(([^)]+)\)/);
          const parts = m?.[1]?.split(',').map((x) => Number.parseFloat(x)) ?? [];
          return parts.length === 4 ? parts[3] : 1;
        }),
      );
    expect(alphas.length).toBeGreaterThan(0);
    expect(alphas).toEqual(alphas.map(() => 1));
    await shot(page, 'channel-dark');

    // The form holds max_input_tokens.
    await greyRow.getByRole('button', { name: '编辑' }).click();
    await page.locator('.arco-drawer').getByText('最大输入 Tokens').waitFor();

    // A channel that is gone: the spec's message instead of an empty form.
    await page.goto('/channel/edit/987654');
    await page.getByText('渠道未找到，请刷新页面后重试。').waitFor();
    expect(await page.locator('input[name="name"]').count()).toBe(0);
    await context.close();
  });

  it('when an admin sets overrides in the form and manages a key in the dialog, then the server holds what was chosen', async () => {
    const name = `e2e-ov-${Date.now().toString(36)}`;
    const id = await createChannel(s, { type: 1, baseUrl: fake.url, key: 'k', models: 'gpt-4o-mini', name });
    const multi = `e2e-keys-${Date.now().toString(36)}`;
    const { ids } = await s.channels.createChannels({
      channel: {
        name: multi,
        type: 1,
        key: 'sk-first-key-0001\nsk-second-key-0002',
        baseUrl: fake.url,
        models: 'gpt-4o-mini',
        group: 'default',
        status: 1,
        multiKeyMode: 'polling',
      },
    });
    const { context, page } = await h.fresh();
    await context.addInitScript(() => localStorage.setItem('notice_dismissed', 'none'));
    await page.setViewportSize({ width: 1440, height: 900 });
    await login(page, 'root', '123456');
    await page.goto('/channel');
    const row = page.locator('tr', { hasText: name });
    await row.getByRole('button', { name: '编辑' }).click();
    const drawer = page.locator('.arco-drawer');
    await drawer.locator('.aigw-channel-overrides .arco-collapse-item-header').click();
    await drawer.locator('textarea[name="param_override"]').fill('{temperature: 0.1}');
    await drawer.getByRole('button', { name: '提交' }).click();
    await toast(page, '参数覆盖必须是合法的 JSON 对象').waitFor();
    await drawer.locator('textarea[name="param_override"]').fill('{"temperature": 0.1}');
    await drawer.locator('textarea[name="system_prompt"]').fill('Be brief');
    await shot(page, 'channel-overrides-form');
    await drawer.getByRole('button', { name: '提交' }).click();
    await toast(page, '渠道更新成功！').waitFor();
    const saved = (await s.channels.getChannel({ id })).channel;
    expect(saved?.paramOverride).toBe('{"temperature": 0.1}');
    expect(JSON.parse(saved?.setting ?? '{}')).toEqual({ system_prompt: 'Be brief' });
    await row.locator('.aigw-overrides').waitFor();

    await page.locator('tr', { hasText: multi }).locator('.aigw-multikey').click();
    const dialog = page.locator('.arco-modal', { hasText: '管理密钥' });
    await dialog.getByText('sk-f********0001').waitFor();
    await dialog.locator('tr', { hasText: 'sk-f********0001' }).getByRole('button', { name: '禁用' }).click();
    await toast(page, '密钥已禁用').waitFor();
    await dialog.getByText('启用 1，手动禁用 1，自动禁用 0').waitFor();
    await shot(page, 'channel-keys-dialog');
    const keys = await s.channels.manageMultiKeys({ channelId: ids[0] ?? 0, action: 'get_key_status' });
    expect(keys.keys.map((k) => k.status)).toEqual([2, 1]);
    await context.close();
  });
});
