/**
 * The playground and the log page in a real browser: a user chats, the reply streams in (the
 * message goes from loading through incomplete to complete), and the log page shows the request.
 */
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import { clientsFor, createChannel, type RelayStack, routable, userWithToken } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, login, startHarness } from './money-support.ts';

describe('playground and logs (browser)', () => {
  let h: Harness;
  let s: RelayStack;
  let fake: FakeProvider;
  beforeAll(async () => {
    h = await startHarness(['users', 'channels', 'billing', 'logs', 'relay', 'gateway']);
    s = clientsFor(h.stack);
    fake = await startFakeProvider({
      kind: 'openai',
      key: 'k',
      reply: 'Streaming hello from the fake model',
      chunkDelayMs: 120,
      // 4 of the 10 prompt tokens read from the provider's cache (billed at gpt-4o-mini's 0.5).
      cachedTokens: 4,
    });
  });
  afterAll(async () => {
    await fake?.close();
    await h?.close();
  });

  it('when a user chats in the playground, then the reply streams in and the log page shows it, cached tokens included', async () => {
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'k', models: 'gpt-4o-mini' });
    await routable(h.stack.relayUrl, u.key, 'gpt-4o-mini');

    const { context, page } = await h.fresh();
    await login(page, u.username, 'password123');
    await page.goto('/playground');
    const input = page.locator('textarea[name="playground-input"]');
    await input.fill('Say hello');
    await input.press('Enter');

    const reply = page.locator('.aigw-msg-assistant').last();
    // Part of the answer is on screen before the stream ends.
    await page.locator('.aigw-msg-assistant[data-status="incomplete"]').waitFor({ timeout: 20_000 });
    const partial = await reply.locator('.aigw-msg-content').innerText();
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan('Streaming hello from the fake model'.length);
    await page.locator('.aigw-msg-assistant[data-status="complete"]').waitFor({ timeout: 20_000 });
    await expect(reply.locator('.aigw-msg-content').innerText()).resolves.toBe('Streaming hello from the fake model');

    await page.goto('/log');
    const row = page.locator('.arco-table-tr', { hasText: 'gpt-4o-mini' }).first();
    await row.waitFor({ timeout: 20_000 }).catch(async () => {
      // The log lands within a second or two; look again.
      await page.reload();
      await row.waitFor({ timeout: 10_000 });
    });
    await expect(row.getByText('消费').count()).resolves.toBe(1);
    await expect(row.getByText('流', { exact: true }).count()).resolves.toBe(1);
    // The expanded row lists the cached tokens and the ratio they were billed at.
    await row.locator('.arco-table-expand-icon-cell button').click();
    const details = page.locator('.aigw-log-details').first();
    await details.waitFor({ timeout: 10_000 });
    const text = await details.innerText();
    expect(text).toMatch(/缓存 Tokens：\s*4/);
    expect(text).toMatch(/缓存倍率：\s*0\.5/);
    await context.close();
  });
});
