/**
 * The log table as it reads (issue 14, item 5): at 1440 px the details column is wide enough to
 * read, a long model name is cut to its cell with the whole name in a tooltip, the cost stays on
 * one line; at 390 px the filter labels keep their words whole and TPM is on the screen; the type
 * filter offers refunds.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '@aigw/testkit';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import { clientsFor, createChannel, type RelayStack, routable, setOption, userWithToken } from '@aigw/testkit/harness';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, login, startHarness } from './money-support.ts';

async function shot(page: Page, name: string): Promise<void> {
  const dir = process.env.E2E_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`) });
}

describe('log table layout (browser)', () => {
  let h: Harness;
  let s: RelayStack;
  let fake: FakeProvider;
  const model = `e2e-an-unusually-long-model-name-${Date.now().toString(36)}`;
  beforeAll(async () => {
    h = await startHarness(['users', 'channels', 'billing', 'logs', 'relay', 'gateway']);
    s = clientsFor(h.stack);
    fake = await startFakeProvider({ kind: 'openai', key: 'k', reply: 'A reply for the log table' });
  });
  afterAll(async () => {
    await fake?.close();
    await h?.close();
  });

  it('when a long model name is logged, then the table reads at 1440 px and at 390 px', async () => {
    await setOption(s, 'ModelRatio', JSON.stringify({ 'gpt-4o-mini': 0.075, [model]: 1.2345 }));
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'k', models: model });
    await routable(h.stack.relayUrl, u.key, model);
    const status = await eventually(
      async () =>
        (
          await fetch(`${h.stack.relayUrl}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
          })
        ).status,
      (code) => code === 200,
    );
    expect(status).toBe(200);

    const { context, page } = await h.fresh();
    await context.addInitScript(() => localStorage.setItem('notice_dismissed', 'none'));
    await page.setViewportSize({ width: 1440, height: 900 });
    await login(page, 'root', '123456');
    await page.goto('/log');
    const row = page.locator('.arco-table-tr', { hasText: model }).first();
    await row.waitFor({ timeout: 20_000 }).catch(async () => {
      await page.reload();
      await row.waitFor({ timeout: 10_000 });
    });

    // Details: at least about twenty characters wide.
    const header = page.locator('.arco-table-th', { hasText: '详情' }).first();
    const headerBox = await header.boundingBox();
    expect(headerBox?.width ?? 0, 'details column width').toBeGreaterThanOrEqual(200);

    // The model name is cut inside its cell, and the tooltip holds all of it.
    const tag = row.locator('.arco-tag', { hasText: model });
    const cut = await tag.evaluate((el) => {
      const content = el.querySelector('.arco-tag-content') ?? el;
      const cell = el.closest('td')?.getBoundingClientRect();
      const box = el.getBoundingClientRect();
      return { cut: content.scrollWidth > content.clientWidth, inside: !!cell && box.right <= cell.right + 0.5 };
    });
    expect(cut).toEqual({ cut: true, inside: true });
    await tag.hover();
    await page.locator('.arco-tooltip-content', { hasText: model }).waitFor();

    // The cost stays on one line.
    const cost = row.locator('.aigw-log-cost');
    const lines = await cost.evaluate((el) => {
      const height = el.getBoundingClientRect().height;
      const line = Number.parseFloat(getComputedStyle(el).lineHeight) || 22;
      return Math.round(height / line);
    });
    expect(lines, `cost ${await cost.innerText()}`).toBe(1);
    await shot(page, 'log-1440');

    // The type filter offers refunds.
    await page.locator('.aigw-log-filters .arco-select').last().click();
    await page.locator('.arco-select-option', { hasText: '退款' }).waitFor();
    await page.keyboard.press('Escape');

    // 390 px: each filter label on one line, TPM inside the screen and not clipped.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.locator('.aigw-log-filters').waitFor();
    const labels = await page.locator('.aigw-log-filters .arco-form-label-item label').evaluateAll((els) =>
      els.map((el) => {
        const line = Number.parseFloat(getComputedStyle(el).lineHeight) || 22;
        return { text: (el as HTMLElement).innerText, lines: Math.round(el.getBoundingClientRect().height / line) };
      }),
    );
    expect(labels.length).toBeGreaterThan(3);
    expect(labels.filter((l) => l.lines > 1)).toEqual([]);
    // The time range shows both ends whole.
    const cutDates = await page
      .locator('.aigw-log-filters .arco-picker input')
      .evaluateAll((els) =>
        els.filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => (el as HTMLInputElement).value),
      );
    expect(cutDates).toEqual([]);
    const tpm = page.locator('.aigw-log-stat span', { hasText: 'TPM' });
    const tpmBox = await tpm.evaluate((el) => {
      const box = el.getBoundingClientRect();
      const header = el.closest('.arco-card-header')?.getBoundingClientRect();
      return {
        onScreen: box.left >= 0 && box.right <= window.innerWidth,
        inHeader: !!header && box.bottom <= header.bottom + 0.5 && box.right <= header.right + 0.5,
      };
    });
    expect(tpmBox).toEqual({ onScreen: true, inHeader: true });
    await shot(page, 'log-390');
    await context.close();
  });
});
