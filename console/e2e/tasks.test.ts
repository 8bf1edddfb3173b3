/**
 * The drawing (/midjourney) and async-task (/task) pages in a real browser: tasks submitted by the
 * test through the relay APIs show with their status, image or audio, for an admin (with the
 * channel column) and for their owner (without it); the menu shows both entries when the
 * drawing and task flags are on.
 */
import { type FakeMidjourney, type FakeSuno, startFakeMidjourney, startFakeSuno } from '@aigw/testkit/fakes';
import { clientsFor, createChannel, type RelayStack, setOption, userWithToken } from '@aigw/testkit/harness';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Stack, startStack } from '../../deploy/local/stack/in-process.ts';
import { launchBrowser } from '../test/browser/launch.ts';
import { consoleBuild, login } from './money-support.ts';

type Browser = Awaited<ReturnType<typeof launchBrowser>>;

let stack: Stack;
let s: RelayStack;
let browser: Browser;
let mj: FakeMidjourney;
let suno: FakeSuno;
let user: Awaited<ReturnType<typeof userWithToken>>;
let mjId = '';
let sunoId = '';
let mjChannel = 0;

async function api(path: string, key: string, body: unknown) {
  const res = await fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as Record<string, unknown>;
}

async function waitFor(path: string, key: string, done: (v: Record<string, unknown>) => boolean) {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const res = await fetch(`${stack.gatewayUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
    if (res.ok && done((await res.json()) as Record<string, unknown>)) return;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`${path} never finished`);
}

beforeAll(async () => {
  const dir = consoleBuild();
  stack = await startStack({
    services: ['users', 'channels', 'billing', 'logs', 'tasks', 'gateway'],
    env: {
      CONSOLE_DIR: dir,
      RATE_LIMIT_API: '100000',
      RATE_LIMIT_WEB: '100000',
      RATE_LIMIT_CRITICAL: '100000',
      TASKS_POLL_INTERVAL_MS: '300',
      TASKS_POLL_TICK_MS: '100',
    },
  });
  s = clientsFor(stack);
  mj = await startFakeMidjourney({ secret: 'mj-secret', stepMs: 200 });
  suno = await startFakeSuno({ key: 'suno-key', stepMs: 200 });
  mjChannel = await createChannel(s, { type: 2, baseUrl: mj.url, key: 'mj-secret', models: 'mj_imagine' });
  await createChannel(s, { type: 36, baseUrl: suno.url, key: 'suno-key', models: 'suno_music' });
  for (const [k, v] of [
    ['DrawingEnabled', 'true'],
    ['TaskEnabled', 'true'],
    ['ServerAddress', stack.gatewayUrl],
  ])
    await setOption(s, k as string, v as string);
  user = await userWithToken(s, { quota: 1_000_000 });
  // The tasks service follows options through Kafka: retry the submit until drawing is on there.
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await api('/mj/submit/imagine', user.key, { prompt: 'a browser cat' });
    if (r.code === 1) {
      mjId = String(r.result);
      break;
    }
    if (Date.now() > deadline) throw new Error(`imagine refused: ${JSON.stringify(r)}`);
    await new Promise((res) => setTimeout(res, 200));
  }
  sunoId = String((await api('/suno/submit/music', user.key, { prompt: 'a browser song' })).data);
  await waitFor(`/mj/task/${mjId}/fetch`, user.key, (t) => t.status === 'SUCCESS');
  await waitFor(`/suno/fetch/${sunoId}`, user.key, (t) => (t.data as { status?: string })?.status === 'SUCCESS');
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await mj?.close();
  await suno?.close();
  await s?.stop();
});

async function open(username: string, password: string): Promise<Page> {
  const context = await browser.newContext({ baseURL: stack.gatewayUrl });
  const page = await context.newPage();
  await login(page, username, password);
  return page;
}

describe('drawing and async-task pages (browser)', () => {
  it('when an admin opens /midjourney and /task, then the submitted tasks show with status, channel, image and audio', async () => {
    const page = await open('root', '123456');
    await page.locator('.arco-menu-item', { hasText: '绘图' }).first().waitFor();
    await page.locator('.arco-menu-item', { hasText: '异步任务' }).first().waitFor();

    await page.goto('/midjourney');
    const row = page.locator('tr', { hasText: mjId });
    await row.waitFor();
    await expect(row.getByText('成功').count()).resolves.toBe(1);
    await expect(row.getByText('绘图').count()).resolves.toBe(1);
    await expect(page.locator('th', { hasText: '渠道' }).count()).resolves.toBe(1);
    await expect(row.locator('td').nth(2).innerText()).resolves.toBe(String(mjChannel));
    await row.getByRole('button', { name: '查看图片' }).click();
    const img = page.locator('.arco-image-preview img');
    await img.waitFor();
    expect(await img.getAttribute('src')).toBe(`${stack.gatewayUrl}/mj/image/${mjId}`);
    // The forwarded image really loads through the gateway and the tasks service.
    await expect(img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).resolves.toBeGreaterThan(0);
    await page.keyboard.press('Escape');

    await page.goto('/task');
    const trow = page.locator('tr', { hasText: sunoId });
    await trow.waitFor();
    await expect(trow.getByText('成功').count()).resolves.toBe(1);
    await expect(trow.getByText('生成音乐').count()).resolves.toBe(1);
    await trow.getByRole('button', { name: '查看' }).click();
    const audio = page.locator('.arco-modal audio').first();
    await audio.waitFor({ state: 'attached' });
    expect(await audio.getAttribute('src')).toBe(`${suno.url}/files/${sunoId}-1.mp3`);
  });

  it('when the owner opens /midjourney, then the task shows without the channel column', async () => {
    const page = await open(user.username, 'password123');
    await page.goto('/midjourney');
    const row = page.locator('tr', { hasText: mjId });
    await row.waitFor();
    await expect(row.getByText('成功').count()).resolves.toBe(1);
    await expect(page.locator('th', { hasText: '渠道' }).count()).resolves.toBe(0);
    await page.goto('/task');
    await page.locator('tr', { hasText: sunoId }).waitFor();
    await expect(page.locator('th', { hasText: '渠道' }).count()).resolves.toBe(0);
  });
});
