/**
 * The channel form's per-type fields and multi-key channels in a real browser: the type picker
 * lists the server's channel-type catalogue (GET /api/channel/types) and the row tag its name; an AWS Claude
 * channel entered as Access Key, Secret Key and Region is stored as the spec's `Ak|Sk|Region`, a
 * Jimeng channel (51) as `AccessKey|SecretKey`; a channel with three keys in turn shows its key
 * count in the list row.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, login, startHarness, toast } from './money-support.ts';

describe('console channel providers (browser)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(['users', 'channels', 'billing', 'relay', 'gateway']);
  });
  afterAll(async () => {
    await h?.close();
  });

  /** The stored channel as root reads it through the API (root sees keys in full). */
  async function storedKey(page: Page, name: string): Promise<{ key: string; multiKeyMode: string }> {
    const headers = { 'New-Api-User': '1' };
    const found = await page.request.get(`/api/channel/search?keyword=${name}`, { headers });
    const items = ((await found.json()) as { data: { items: { id: number; name: string }[] } }).data.items;
    const id = items.find((c) => c.name === name)?.id ?? 0;
    const one = await page.request.get(`/api/channel/${id}`, { headers });
    const c = ((await one.json()) as { data: { key: string; multi_key_mode: string } }).data;
    return { key: c.key, multiKeyMode: c.multi_key_mode };
  }

  it('when an admin picks AWS Claude, then the form asks for Ak, Sk and Region and stores them as Ak|Sk|Region', async () => {
    const { context, page } = await h.fresh();
    await login(page, 'root', '123456');
    // One catalogue line more (as a new provider adds): the console shows it with no change of its own.
    await page.route('**/api/channel/types', async (route) => {
      const res = await route.fetch();
      const answer = (await res.json()) as { data: Record<string, unknown>[] };
      const line: Record<string, unknown> = {
        ...answer.data[0],
        type: 999,
        name: 'E2E 新供应商',
        name_en: 'E2E provider',
      };
      line.key_parts = {
        sep: '|',
        parts: [
          {
            name: 'Id',
            label: { zh: '账号', en: 'Account' },
            placeholder: { zh: 'e2e-账号', en: 'e2e' },
            secret: false,
          },
        ],
      };
      await route.fulfill({ response: res, json: { ...answer, data: [...answer.data, line] } });
    });
    await page.goto('/channel');
    await page.getByRole('button', { name: '添加新的渠道' }).click();
    const drawer = page.locator('.arco-drawer');
    const typePicker = drawer.locator('.arco-form-item', { hasText: '类型' }).first().locator('.arco-select');
    await typePicker.click();
    // The picker lists the server's catalogue (GET /api/channel/types), in its order.
    const served = await page.request.get('/api/channel/types', { headers: { 'New-Api-User': '1' } });
    const catalogue = ((await served.json()) as { data: { type: number; name: string }[] }).data;
    expect(catalogue.length).toBeGreaterThan(50);
    await page.locator('.arco-select-option').nth(catalogue.length).waitFor();
    expect(await page.locator('.arco-select-option').allInnerTexts()).toEqual([
      ...catalogue.map((e) => e.name),
      'E2E 新供应商',
    ]);
    await page.locator('.arco-select-option', { hasText: 'E2E 新供应商' }).click();
    await expect(drawer.locator('input[name="key_part_0"]').getAttribute('placeholder')).resolves.toBe('e2e-账号');
    await typePicker.click();
    await page.locator('.arco-select-option', { hasText: 'AWS Claude' }).click();
    await drawer.locator('input[name="name"]').fill('e2e-bedrock');
    await expect(drawer.locator('textarea[name="key"]').count()).resolves.toBe(0);
    await expect(drawer.getByText('Access Key（Ak）').count()).resolves.toBe(1);
    await expect(drawer.locator('input[name="key_part_2"]').getAttribute('placeholder')).resolves.toBe(
      'Bedrock 所在区域，例如 us-east-1',
    );
    await drawer.locator('input[name="key_part_0"]').fill('AKIAE2E');
    await drawer.locator('input[name="key_part_2"]').fill('us-west-2');
    await drawer.getByPlaceholder('输入自定义模型名称（多个用英文逗号分隔）').fill('claude-3-5-sonnet-20241022');
    await drawer.getByRole('button', { name: '填入', exact: true }).click();
    // A part left empty: the spec's key format in the message.
    await drawer.getByRole('button', { name: '提交' }).click();
    await toast(page, '密钥格式错误，应为').waitFor();
    await drawer.locator('input[name="key_part_1"]').fill('e2e/secret');
    await drawer.getByRole('button', { name: '提交' }).click();
    await toast(page, '渠道创建成功！').waitFor();
    await page.locator('tr', { hasText: 'e2e-bedrock' }).waitFor();
    // The row's type tag: the catalogue's name and colour.
    const tag = page.locator('tr', { hasText: 'e2e-bedrock' }).locator('.arco-tag', { hasText: 'AWS Claude' });
    await expect(tag.getAttribute('class')).resolves.toContain('arco-tag-orangered');
    expect(await storedKey(page, 'e2e-bedrock')).toEqual({ key: 'AKIAE2E|e2e/secret|us-west-2', multiKeyMode: '' });
    await context.close();
  });

  it('when an admin picks Jimeng (51), then the form asks for AccessKey and SecretKey, stores AccessKey|SecretKey, and the batch box says the format', async () => {
    const { context, page } = await h.fresh();
    await login(page, 'root', '123456');
    await page.goto('/channel');
    await page.getByRole('button', { name: '添加新的渠道' }).click();
    const drawer = page.locator('.arco-drawer');
    await drawer.locator('.arco-form-item', { hasText: '类型' }).first().locator('.arco-select').click();
    await page.locator('.arco-select-option', { hasText: '即梦' }).click();
    await drawer.locator('input[name="name"]').fill('e2e-jimeng');
    await expect(drawer.locator('textarea[name="key"]').count()).resolves.toBe(0);
    await expect(drawer.locator('input[name="key_part_0"]').getAttribute('placeholder')).resolves.toBe(
      '火山引擎访问控制中的 AccessKeyId',
    );
    await expect(drawer.locator('input[name="key_part_1"]').getAttribute('type')).resolves.toBe('password');
    await drawer.locator('input[name="key_part_0"]').fill('AKLTe2e');
    await drawer.getByPlaceholder('输入自定义模型名称（多个用英文逗号分隔）').fill('jimeng_vgfm_t2v_l20');
    await drawer.getByRole('button', { name: '填入', exact: true }).click();
    await drawer.getByRole('button', { name: '提交' }).click();
    await toast(page, '密钥格式错误，应为 AccessKey|SecretKey').waitFor();
    await drawer.locator('input[name="key_part_1"]').fill('e2e-volc-secret');
    await drawer.getByRole('button', { name: '提交' }).click();
    await toast(page, '渠道创建成功！').waitFor();
    await page.locator('tr', { hasText: 'e2e-jimeng' }).waitFor();
    expect(await storedKey(page, 'e2e-jimeng')).toEqual({ key: 'AKLTe2e|e2e-volc-secret', multiKeyMode: '' });

    // Several Jimeng keys at once go in one text area: the hint under it gives each line's format.
    await page.getByRole('button', { name: '添加新的渠道' }).click();
    await drawer.locator('.arco-form-item', { hasText: '类型' }).first().locator('.arco-select').click();
    await page.locator('.arco-select-option', { hasText: '即梦' }).click();
    await drawer.getByText('批量创建（一行一个密钥，每个密钥创建一个渠道）').click();
    await drawer.locator('textarea[name="key"]').waitFor();
    await expect(
      drawer.locator('.arco-form-item', { has: page.locator('textarea[name="key"]') }).innerText(),
    ).resolves.toContain('按照如下格式输入：AccessKey|SecretKey');
    await context.close();
  });

  it('when an admin adds a channel with three keys in turn, then the row shows 多密钥 3/3', async () => {
    const { context, page } = await h.fresh();
    await login(page, 'root', '123456');
    await page.goto('/channel');
    await page.getByRole('button', { name: '添加新的渠道' }).click();
    const drawer = page.locator('.arco-drawer');
    await drawer.locator('input[name="name"]').fill('e2e-multikey');
    await drawer.locator('.arco-form-item', { hasText: '多密钥模式' }).locator('.arco-select').click();
    await page.locator('.arco-select-option', { hasText: '轮询' }).click();
    await drawer.locator('textarea[name="key"]').fill('sk-one\nsk-two\nsk-three');
    await drawer.getByPlaceholder('输入自定义模型名称（多个用英文逗号分隔）').fill('gpt-4o-mini');
    await drawer.getByRole('button', { name: '填入', exact: true }).click();
    await drawer.getByRole('button', { name: '提交' }).click();
    await toast(page, '渠道创建成功！').waitFor();
    const row = page.locator('tr', { hasText: 'e2e-multikey' });
    await row.waitFor();
    await expect(row.locator('.aigw-multikey').innerText()).resolves.toBe('多密钥 3/3');
    expect(await storedKey(page, 'e2e-multikey')).toEqual({ key: 'sk-one\nsk-two\nsk-three', multiKeyMode: 'polling' });
    await context.close();
  });
});
