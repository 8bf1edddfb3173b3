/**
 * The playground's replies as a user reads them (issue 14, item 6): Markdown rendered, code
 * highlighted, HTML sanitized; the stop button ends the stream, the reply keeps what arrived and
 * the upstream call is closed.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '@aigw/testkit';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import { clientsFor, createChannel, type RelayStack, routable, userWithToken } from '@aigw/testkit/harness';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, login, startHarness } from './money-support.ts';

async function shot(page: Page, name: string): Promise<void> {
  const dir = process.env.E2E_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`) });
}

describe('playground replies (browser)', () => {
  let h: Harness;
  let s: RelayStack;
  let fake: FakeProvider;
  beforeAll(async () => {
    h = await startHarness(['users', 'channels', 'billing', 'logs', 'relay', 'gateway']);
    s = clientsFor(h.stack);
    fake = await startFakeProvider({ kind: 'openai', key: 'k' });
  });
  afterAll(async () => {
    await fake?.close();
    await h?.close();
  });

  it('when a reply holds Markdown and code, then it shows formatted and highlighted; stop ends a stream with what arrived', async () => {
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'k', models: 'gpt-4o-mini' });
    await routable(h.stack.relayUrl, u.key, 'gpt-4o-mini');
    fake.set({
      reply:
        'Here is **bold** text <img src=x onerror="window.__xss=1"> and code:\n\n```js\nconst answer = 42; // why\n```\n',
      chunkDelayMs: 0,
    });

    const { context, page } = await h.fresh();
    await page.setViewportSize({ width: 1440, height: 900 });
    await login(page, u.username, 'password123');
    await page.goto('/playground');
    const input = page.locator('textarea[name="playground-input"]');
    await input.fill('Show me code');
    await input.press('Enter');
    const reply = page.locator('.aigw-msg-assistant[data-status="complete"]').last();
    await reply.waitFor({ timeout: 20_000 });
    expect(await reply.locator('strong').textContent()).toBe('bold');
    expect(await reply.locator('pre code .aigw-hl-keyword').first().textContent()).toBe('const');
    expect(await reply.locator('pre code .aigw-hl-number').first().textContent()).toBe('42');
    expect(await reply.locator('pre code .aigw-hl-comment').first().textContent()).toBe('// why');
    expect(await reply.locator('img').getAttribute('onerror')).toBeNull();
    expect(await page.evaluate(() => (window as { __xss?: number }).__xss)).toBeUndefined();
    await shot(page, 'playground-markdown');

    // A slow answer, stopped half way.
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`);
    fake.set({ reply: words.join(' '), chunkDelayMs: 150 });
    const abortedBefore = fake.aborted;
    await input.fill('Count slowly');
    await input.press('Enter');
    await page.locator('.aigw-msg-assistant[data-status="incomplete"]').waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: '停止' }).click();
    const stopped = page.locator('.aigw-msg-assistant').last();
    await expect.poll(() => stopped.getAttribute('data-status')).toBe('complete');
    const kept = await stopped.locator('.aigw-msg-content').innerText();
    expect(kept).toMatch(/^word0/);
    expect(kept.split(/\s+/).length).toBeLessThan(words.length);
    // The send button is back, and nothing more arrives.
    await page.getByRole('button', { name: '发送' }).waitFor();
    await page.waitForTimeout(600);
    expect(await stopped.locator('.aigw-msg-content').innerText()).toBe(kept);
    // The gateway closed the upstream call.
    const aborted = await eventually(
      async () => fake.aborted,
      (n) => n > abortedBefore,
      10_000,
    );
    expect(aborted).toBeGreaterThan(abortedBefore);
    // What was produced before the stop is billed: a consumption log with some completion tokens.
    const billed = await eventually(
      () =>
        page.evaluate(async () => {
          const id = JSON.parse(localStorage.getItem('user') ?? '{}').id;
          const res = await fetch('/api/log/self/?p=1&page_size=10&type=2', {
            headers: { 'New-Api-User': String(id) },
          });
          const body = (await res.json()) as {
            data?: { items?: { id: number; completion_tokens: number; quota: number }[] };
          };
          return body.data?.items ?? [];
        }),
      (items) => items.length >= 2,
      15_000,
    );
    // The newest log is the stopped answer's.
    const last = [...billed].sort((x, y) => y.id - x.id)[0];
    expect(billed.length, JSON.stringify(billed)).toBeGreaterThanOrEqual(2);
    expect(last?.completion_tokens ?? 0).toBeGreaterThan(0);
    expect(last?.completion_tokens ?? 0).toBeLessThan(words.length);
    await context.close();
  });
});
