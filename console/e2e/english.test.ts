/**
 * With English chosen, the pages and their drawers read English (issue 14, item 3): a page's text
 * holds no Chinese outside the data the test stored, and a few labels show in English.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, login, startHarness } from './money-support.ts';

/** Screenshots for a person to look at, when E2E_SCREENSHOTS names a folder. */
async function shot(page: Page, name: string): Promise<void> {
  const dir = process.env.E2E_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`) });
}

const CJK = /[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]/;

/** The visible text of the page (menus, tables, drawers, modals) with its Chinese lines. */
async function chineseOn(page: Page): Promise<string[]> {
  const text = await page.evaluate(() => document.body.innerText);
  // The language picker names Chinese in Chinese on purpose. A log's content is the server's
  // words, shown in English too (root's 初始额度 reads Initial quota).
  return text
    .split('\n')
    .map((line) => line.replaceAll('简体中文', ''))
    .filter((line) => CJK.test(line));
}

async function api(page: Page, method: string, path: string, body?: unknown): Promise<{ success: boolean }> {
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
  );
}

describe('console in English (browser)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(['users', 'channels', 'billing', 'logs', 'gateway']);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('when English is chosen, then every page and drawer reads English', async () => {
    const { context, page } = await h.fresh();
    await context.addInitScript(() => {
      localStorage.setItem('lang', 'en-US');
      localStorage.setItem('notice_dismissed', 'none');
    });
    await page.setViewportSize({ width: 1440, height: 900 });
    await login(page, 'root', '123456');
    expect(
      await api(page, 'POST', '/api/token/', {
        name: 'en-token',
        remain_quota: 0,
        expired_time: -1,
        unlimited_quota: true,
      }),
    ).toMatchObject({ success: true });
    expect(
      await api(page, 'POST', '/api/channel/', {
        type: 1,
        name: 'en-channel',
        key: 'sk-en',
        models: 'gpt-4o-mini',
        groups: ['default'],
        group: 'default',
      }),
    ).toMatchObject({ success: true });

    const visits: { path: string; shows: string; open?: string; drawerShows?: string }[] = [
      { path: '/token', shows: 'Add token', open: 'Add token', drawerShows: 'New token' },
      { path: '/channel', shows: 'Add channel' },
      { path: '/channel/add', shows: 'Base URL' },
      { path: '/user', shows: 'Add user', open: 'Add user', drawerShows: 'Display name' },
      { path: '/log', shows: 'Log type' },
      { path: '/topup', shows: 'Redeem a code' },
      { path: '/pricing', shows: 'Billing' },
      { path: '/playground', shows: 'Clear context' },
      { path: '/detail', shows: 'Time range' },
      { path: '/redemption', shows: 'Add redemption code', open: 'Add redemption code', drawerShows: 'Count' },
      { path: '/setting', shows: 'Profile' },
      { path: '/setting?tab=operation', shows: 'Model ratios' },
    ];
    const found: Record<string, string[]> = {};
    for (const v of visits) {
      await page.goto(v.path);
      await page.getByText(v.shows, { exact: false }).first().waitFor();
      await page.waitForLoadState('networkidle');
      const lines = await chineseOn(page);
      if (lines.length) found[v.path] = lines;
      await shot(page, `en${v.path.replaceAll(/[/?=]/g, '-')}`);
      if (v.open) {
        await page.getByRole('button', { name: v.open }).first().click();
        await page
          .getByText(v.drawerShows ?? '', { exact: false })
          .first()
          .waitFor();
        await page.waitForTimeout(300);
        await shot(page, `en${v.path.replaceAll(/[/?=]/g, '-')}-drawer`);
        const inDrawer = await chineseOn(page);
        if (inDrawer.length) found[`${v.path} drawer`] = inDrawer;
      }
    }
    expect(found).toEqual({});
    await context.close();
  });

  it('when the language is switched in the navbar, then the page on screen follows without a reload', async () => {
    const { context, page } = await h.fresh();
    await context.addInitScript(() => localStorage.setItem('notice_dismissed', 'none'));
    await login(page, 'root', '123456');
    await page.evaluate(() => localStorage.setItem('lang', 'zh-CN'));
    await page.goto('/log');
    await page.getByText('日志类型').first().waitFor();
    await page.evaluate(() => {
      (window as { __same?: boolean }).__same = true;
    });
    await page.getByRole('button', { name: '语言' }).hover();
    await page.locator('.arco-dropdown-menu-item', { hasText: 'English' }).click();
    await page.getByText('Log type').first().waitFor();
    expect(await page.locator('.arco-table-th', { hasText: 'Details' }).count()).toBe(1);
    expect(await page.evaluate(() => (window as { __same?: boolean }).__same)).toBe(true);
    expect(await chineseOn(page)).toEqual([]);
    await context.close();
  });
});
