/**
 * A peer of the relay that does not answer is an outage the caller can retry, not an internal
 * error: a token the relay has not cached yet is looked up in billing; with the relay-billing
 * network stalled that lookup runs into its deadline, and the client gets 503 服务繁忙，请稍后重试
 * in its route's shape (it got 500 服务器内部错误 before, 1,007 times in one fault-suite run while
 * billing's database was away). When the network is back the same token is served. The services
 * run as separate processes, the relay reaching billing through a TCP proxy that can stall.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@aigw/testkit';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import { clientsFor, type RelayStack, routable, userWithToken } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL, type Platform, priceModel, startPlatform } from '../../../bench/platform.ts';
import { type StallProxy, startStallProxy } from '../../../bench/stall-proxy.ts';

let platform: Platform;
let proxy: StallProxy;
let fake: FakeProvider;
let s: RelayStack;

beforeAll(async () => {
  fake = await startFakeProvider({ kind: 'openai', record: false });
  let billingGrpc = 0;
  proxy = await startStallProxy({ port: () => billingGrpc });
  platform = await startPlatform({
    tag: 'out',
    run: Date.now().toString(36),
    services: ['users', 'channels', 'billing', 'logs', 'relay'],
    logDir: mkdtempSync(join(tmpdir(), 'aigw-outage-')),
    serviceEnvOf: (ports) => {
      billingGrpc = ports.billing.grpc;
      return { relay: { BILLING_ADDR: `127.0.0.1:${proxy.port}` } };
    },
  });
  s = clientsFor(platform.stack);
  await priceModel(s, fake.url);
}, 300_000);

afterAll(async () => {
  proxy?.resume();
  await platform?.stop();
  await proxy?.close();
  await fake?.close();
});

const chat = (key: string) =>
  fetch(`${platform.stack.relayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    signal: AbortSignal.timeout(60_000),
  });

const anthropic = (key: string) =>
  fetch(`${platform.stack.relayUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    signal: AbortSignal.timeout(60_000),
  });

const gemini = (key: string) =>
  fetch(`${platform.stack.relayUrl}/v1beta/models/${MODEL}:generateContent`, {
    method: 'POST',
    headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    signal: AbortSignal.timeout(60_000),
  });

/** Three requests of a known token (cached) whose pre-consume cannot reach billing: each format's answer. */
async function preConsumeWhileStalled(key: string) {
  const answers = await Promise.all([chat(key), anthropic(key), gemini(key)]);
  return Promise.all(
    answers.map(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.json() })),
  );
}

describe('relay with a peer that does not answer', () => {
  it('when billing cannot be reached for a token lookup or a pre-consume, then the client gets 503 in its format (服务繁忙 / 预扣费失败，请稍后重试), nothing is charged or logged as consumption, and it is served once billing answers again', async () => {
    const known = await userWithToken(s);
    await routable(platform.stack.relayUrl, known.key, MODEL);
    const fresh = await userWithToken(s);
    // A small wallet: every request pre-consumes (never skipped), its token cached by routable.
    const poor = await userWithToken(s, { quota: 200_000 });
    await routable(platform.stack.relayUrl, poor.key, MODEL);

    proxy.stall();
    const preConsumes = preConsumeWhileStalled(poor.key);
    const res = await chat(fresh.key);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string; code: string } }).error).toMatchObject({
      message: '服务繁忙，请稍后重试',
      code: 'service_unavailable',
    });
    const res2 = await anthropic(fresh.key);
    expect(res2.status).toBe(503);
    expect(await res2.json()).toMatchObject({
      type: 'error',
      error: { message: '服务繁忙，请稍后重试' },
    });

    const [openai, claude, google] = await preConsumes;
    expect([openai?.status, claude?.status, google?.status]).toEqual([503, 503, 503]);
    expect(openai?.retryAfter).toBe('1');
    expect(openai?.body).toMatchObject({ error: { message: '预扣费失败，请稍后重试', code: 'pre_consume_failed' } });
    expect(claude?.body).toMatchObject({ type: 'error', error: { message: '预扣费失败，请稍后重试' } });
    expect(google?.body).toMatchObject({ error: { code: 503, message: '预扣费失败，请稍后重试' } });

    proxy.resume();
    // Each failure is logged as an error with its 503, none as consumption; the wallet is untouched.
    const errors = await eventually(
      () => s.logs.queryLogs({ filter: { userId: poor.userId, type: 5 }, page: { page: 1, pageSize: 10 } }),
      (r) => r.items.length >= 3,
      { what: 'the three pre-consume failures logged' },
    );
    expect(errors.items.map((l) => l.content)).toEqual(Array(3).fill('预扣费失败，请稍后重试'));
    const consumed = await s.logs.queryLogs({
      filter: { userId: poor.userId, type: 2 },
      page: { page: 1, pageSize: 10 },
    });
    expect(consumed.items).toEqual([]);
    expect((await s.wallet.getWallet({ userId: poor.userId })).wallet).toMatchObject({ quota: 200_000, usedQuota: 0 });
    let status = 0;
    for (let i = 0; i < 40 && status !== 200; i++) {
      const r = await chat(fresh.key);
      status = r.status;
      await r.text();
      if (status !== 200) await new Promise((ok) => setTimeout(ok, 500));
    }
    expect(status).toBe(200);
  }, 180_000);

  it('when the relay starts while billing does not answer, then it is not ready and answers 503 (never 倍率未配置) until its ratios load, which is retried within seconds once billing answers', async () => {
    const u = await userWithToken(s);
    await platform.kill('relay');
    proxy.stall();
    // The relay starts with its ratio load running into the stalled network (it resolves once
    // the relay is ready, which it must not be before the load succeeded).
    const back = platform.restart('relay');
    const ops = `http://127.0.0.1:${platform.proc('relay').http}/readyz`;
    await eventually(
      () =>
        fetch(`${platform.stack.relayUrl}/healthz`).then(
          (r) => r.status,
          () => 0,
        ),
      (st) => st === 200,
      { timeoutMs: 60_000, what: 'the restarted relay listening' },
    );
    expect((await fetch(ops)).status).toBe(503);
    const stalled = await chat(u.key);
    expect(stalled.status).toBe(503);
    await stalled.text();

    proxy.resume();
    const resumed = Date.now();
    const seen: string[] = [];
    await eventually(
      async () => {
        const r = await chat(u.key);
        const text = await r.text();
        if (r.status !== 200) seen.push(`${r.status} ${text.slice(0, 120)}`);
        return r.status;
      },
      (st) => st === 200,
      // Well below the refresh period (RELAY_SNAPSHOT_REFRESH_MS, 60 s), which alone retried a
      // failed load before.
      { timeoutMs: 30_000, intervalMs: 250, what: 'a chat served after billing answers again' },
    );
    await back;
    expect((await fetch(ops)).status).toBe(200);
    // While it was loading, every refusal was the retryable outage, never a business answer.
    expect(seen.filter((x) => !x.startsWith('503') || !x.includes('服务繁忙，请稍后重试'))).toEqual([]);
    console.log(`relay start without billing: served ${Date.now() - resumed} ms after billing answered`);
  }, 180_000);
});
