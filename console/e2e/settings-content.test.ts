/**
 * What users read, in a real browser: the settings page shows what is stored and a save changes
 * only the key that was edited; About, the home page content and the Notice show as Markdown/HTML
 * (sanitized) or a framed URL, and a dismissed notice stays away until it changes; the chat page
 * without an enabled token and the token row at desktop width.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, login, startHarness, toast } from './money-support.ts';

interface Envelope<T> {
  success: boolean;
  message: string;
  data: T;
}

/** Calls the gateway from the page, with the page's session, as the console does. */
async function api<T>(page: Page, method: string, path: string, body?: unknown): Promise<Envelope<T>> {
  return page.evaluate(
    async ({ method, path, body }) => {
      const id = JSON.parse(localStorage.getItem('user') ?? '{}').id;
      const res = await fetch(path, {
        method,
        headers: { 'Content-Type': 'application/json', 'New-Api-User': String(id) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return res.json();
    },
    { method, path, body },
  ) as Promise<Envelope<T>>;
}

async function options(page: Page): Promise<Record<string, string>> {
  const res = await api<{ key: string; value: string }[]>(page, 'GET', '/api/option/');
  expect(res.success).toBe(true);
  return Object.fromEntries(res.data.map((o) => [o.key, o.value]));
}

async function setOption(page: Page, key: string, value: string): Promise<void> {
  const res = await api(page, 'PUT', '/api/option/', { key, value });
  expect(res, key).toMatchObject({ success: true });
}

/** Waits until a public content route of the gateway serves the text (options follow events). */
async function served(baseUrl: string, path: string, text: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = (await (await fetch(`${baseUrl}${path}`)).json()) as Envelope<string>;
    if (res.data === text) return;
    if (Date.now() > deadline) throw new Error(`${path} still serves ${JSON.stringify(res.data)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Screenshots for a person to look at, when E2E_SCREENSHOTS names a folder. */
async function shot(page: Page, name: string): Promise<void> {
  const dir = process.env.E2E_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`) });
}

describe('console settings and content (browser)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(['users', 'channels', 'billing', 'gateway']);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('when settings are stored, then their fields show them, and saving one edit changes only that key', async () => {
    const { context, page } = await h.fresh();
    await context.addInitScript(() => localStorage.setItem('notice_dismissed', 'none'));
    await login(page, 'root', '123456');
    const ratios = '{"gpt-4":15,"e2e-model":0.75}';
    const groups = '{"default":1,"vip":0.8}';
    await setOption(page, 'SystemName', 'E2E 设置网关');
    await setOption(page, 'QuotaPerUnit', '250000');
    await setOption(page, 'ModelRatio', ratios);
    await setOption(page, 'GroupRatio', groups);
    await setOption(page, 'DataExportDefaultTime', 'week');
    await setOption(page, 'SensitiveWords', '甲词\n乙词');
    await setOption(page, 'ServerAddress', 'https://gw.example.com');

    await page.goto('/setting?tab=operation');
    const field = (key: string) => page.locator(`[data-option="${key}"]`);
    await expect.poll(() => field('QuotaPerUnit').locator('input').inputValue()).toBe('250000');
    expect(await field('ModelRatio').locator('textarea').inputValue()).toBe(ratios);
    expect(await field('GroupRatio').locator('textarea').inputValue()).toBe(groups);
    expect(await field('SensitiveWords').locator('textarea').inputValue()).toBe('甲词\n乙词');
    expect(await field('DataExportDefaultTime').locator('.arco-select-view-value').textContent()).toBe('周');
    // A default the server holds without anyone storing it shows too.
    expect(await field('PreConsumedQuota').locator('input').inputValue()).toMatch(/^\d+$/);
    await page.locator('[data-section="ratio"]').scrollIntoViewIfNeeded();
    await shot(page, 'setting-operation');

    await page.goto('/setting?tab=system');
    await expect.poll(() => field('ServerAddress').locator('input').inputValue()).toBe('https://gw.example.com');
    await page.goto('/setting?tab=other');
    await expect.poll(() => field('SystemName').locator('input').inputValue()).toBe('E2E 设置网关');
    await shot(page, 'setting-other');

    // One entry added to the map shown, saved: ModelRatio alone changes, and keeps its old entries.
    await page.goto('/setting?tab=operation');
    const ratio = field('ModelRatio').locator('textarea');
    await expect.poll(() => ratio.inputValue()).toBe(ratios);
    const before = await options(page);
    const edited = ratios.replace(/}$/, ',"e2e-new":3}');
    await ratio.fill(edited);
    await page.locator('[data-section="ratio"]').getByRole('button', { name: '保存倍率设置' }).click();
    await toast(page, '保存成功').waitFor();
    const after = await options(page);
    expect(after.ModelRatio).toBe(edited);
    const changed = Object.keys({ ...before, ...after }).filter((key) => before[key] !== after[key]);
    expect(changed).toEqual(['ModelRatio']);
    // The page reads back what was stored and still shows every value.
    await expect.poll(() => ratio.inputValue()).toBe(edited);
    expect(await field('QuotaPerUnit').locator('input').inputValue()).toBe('250000');
    await context.close();
  });

  it('when About, the home page and a Notice are set, then visitors see them rendered and safe, and a dismissed notice returns only when it changes', async () => {
    const visitor = await h.fresh();
    await visitor.page.goto('/about');
    await visitor.page.getByText('管理员尚未设置关于内容。').waitFor();

    const admin = await h.fresh();
    await login(admin.page, 'root', '123456');
    const about =
      '# 关于 E2E\n\n这是**关于**页面。\n\n<p class="raw">原样 HTML</p><img src="x" onerror="window.__xss=1"><script>window.__xss=2</script>\n\n[外部链接](https://example.com/docs)';
    const home = '## 欢迎来到 E2E 首页\n\n- 稳定\n- 便宜';
    const notice = '**维护公告**：今晚 22:00 升级';
    await setOption(admin.page, 'About', about);
    await setOption(admin.page, 'HomePageContent', home);
    await setOption(admin.page, 'Notice', notice);
    await served(h.stack.gatewayUrl, '/api/about', about);
    await served(h.stack.gatewayUrl, '/api/home_page_content', home);
    await served(h.stack.gatewayUrl, '/api/notice', notice);

    const { page } = visitor;
    await page.goto('/about');
    const dialog = page.locator('.arco-modal.aigw-notice');
    await dialog.getByText('维护公告').waitFor();
    expect(await dialog.locator('strong').textContent()).toBe('维护公告');
    await dialog.getByRole('button', { name: '关闭公告' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const content = page.locator('.aigw-rich-content');
    await content.getByRole('heading', { name: '关于 E2E', level: 1 }).waitFor();
    expect(await content.locator('strong').textContent()).toBe('关于');
    expect(await content.locator('p.raw').textContent()).toBe('原样 HTML');
    expect(await content.getByRole('link', { name: '外部链接' }).getAttribute('target')).toBe('_blank');
    expect(await content.locator('script').count()).toBe(0);
    expect(await content.locator('img').getAttribute('onerror')).toBeNull();
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => (window as { __xss?: number }).__xss)).toBeUndefined();
    await shot(page, 'about');

    // Dismissed: not shown again, on this page or another, until the text changes.
    const noticeAnswered = () => page.waitForResponse((res) => res.url().endsWith('/api/notice'));
    let answered = noticeAnswered();
    await page.goto('/');
    await answered;
    await page.locator('.aigw-rich-content').getByRole('heading', { name: '欢迎来到 E2E 首页', level: 2 }).waitFor();
    expect(await page.locator('.aigw-rich-content li').allTextContents()).toEqual(['稳定', '便宜']);
    await page.waitForTimeout(500);
    expect(await dialog.count()).toBe(0);
    await shot(page, 'home');

    const changed = '**维护公告**：改为明晚 22:00 升级';
    await setOption(admin.page, 'Notice', changed);
    await served(h.stack.gatewayUrl, '/api/notice', changed);
    answered = noticeAnswered();
    await page.reload();
    await answered;
    await dialog.getByText('改为明晚 22:00 升级').waitFor();

    // A URL alone is shown in a frame.
    const framed = `${h.stack.gatewayUrl}/pricing`;
    await setOption(admin.page, 'About', framed);
    await served(h.stack.gatewayUrl, '/api/about', framed);
    await page.goto('/about');
    await expect.poll(() => page.locator('iframe.aigw-rich-content-frame').getAttribute('src')).toBe(framed);

    for (const key of ['About', 'HomePageContent', 'Notice']) await setOption(admin.page, key, '');
    await admin.context.close();
    await visitor.context.close();
  });

  it('when a user without an enabled token opens /chat/0, then the spec message shows and /token follows 1.5 s later, where a token row keeps its buttons on one line at 1440 px', async () => {
    const { context, page } = await h.fresh();
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/login');
    const username = `c${Date.now().toString(36).slice(-6)}`;
    const made = await api(page, 'POST', '/api/user/register', {
      username,
      password: 'password123',
      password2: 'password123',
    });
    expect(made.success).toBe(true);
    await login(page, username, 'password123');

    await page.goto('/chat/0');
    const message = '当前没有可用的启用令牌，请确认是否有令牌处于启用状态！';
    await page.locator('.arco-result').getByText(message).waitFor();
    const shownAt = Date.now();
    expect(new URL(page.url()).pathname).toBe('/chat/0');
    await toast(page, message).waitFor();
    await page.waitForURL('**/token', { timeout: 5_000 });
    expect(Date.now() - shownAt).toBeGreaterThan(1_000);

    const created = await api(page, 'POST', '/api/token/', {
      name: 'e2e-row',
      remain_quota: 0,
      expired_time: -1,
      unlimited_quota: true,
    });
    expect(created.success).toBe(true);
    await page.reload();
    const row = page.locator('tr', { hasText: 'e2e-row' });
    await row.getByRole('button', { name: '编辑' }).waitFor();
    const names = ['查看', '复制', '聊天', '删除', '禁用', '编辑'];
    const boxes = await Promise.all(names.map(async (name) => row.getByRole('button', { name }).boundingBox()));
    const tops = boxes.map((b) => b?.y ?? -1);
    expect(new Set(tops).size, `button tops ${tops.join(', ')}`).toBe(1);
    // All of them visible: inside their cell and inside the table's visible area, nothing cut off.
    const cell = await row.locator('td').last().boundingBox();
    const table = await page.locator('.arco-table').boundingBox();
    const right = Math.max(...boxes.map((b) => (b ? b.x + b.width : Number.POSITIVE_INFINITY)));
    expect(right, `buttons end at ${right}, cell at ${cell && cell.x + cell.width}`).toBeLessThanOrEqual(
      Math.min((cell?.x ?? 0) + (cell?.width ?? 0), (table?.x ?? 0) + (table?.width ?? 0)),
    );
    await shot(page, 'token-1440');
    await context.close();
  });
});
