/**
 * Lease lapse (docs/security.md): billing gives back the holds of a relay process whose lease
 * lapsed (10 s without a renewal). A relay whose own renewal in Redis fails renews through billing
 * (RelayLeaseService), so a relay cut off from Redis alone keeps its lease and its streams. A relay
 * that reaches neither is fenced from RELAY_LEASE_FENCE_MS: it ends the requests that hold a
 * reservation, so no request is still running when its hold is given back, and what it streamed is
 * charged against the hold it still has. A request served without a hold (ample wallet) runs on.
 * Relay A (the stack's) reaches Redis through a TCP proxy the test cuts; relay B (a second replica
 * in this process) reaches Redis and billing through proxies the test cuts; billing reaches Redis
 * directly.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { createClient, createInternalAuth, keysOf } from '@aigw/common';
import { stackKeys } from '@aigw/local-stack/stack';
import { RelayLeaseService } from '@aigw/proto/billing/v1/billing';
import { eventually } from '@aigw/testkit';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import {
  createChannel,
  modelName,
  type RelayStack,
  routable,
  startRelayStack,
  userWithToken,
} from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RelayApp, startSecondRelay } from './second-relay.ts';

const FENCE_MS = 1_000;
/** Ten words, one every 400 ms: the stream outlasts the fence by seconds. */
const WORD_MS = 400;

type Proxy = { host: string; cut(): void; close(): Promise<void> };

/** A TCP proxy to `target` (host:port) whose cut() drops every connection and refuses new ones. */
async function tcpProxy(target: string): Promise<Proxy> {
  const [host, port] = target.split(':') as [string, string];
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((client) => {
    if (!open) return client.destroy();
    const upstream = tcpConnect(Number(port), host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    host: `127.0.0.1:${(server.address() as { port: number }).port}`,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

let s: RelayStack;
let slow: FakeProvider;
/** Relay A's Redis; relay B's Redis and billing. */
let redisA: Proxy;
let redisB: Proxy;
let billingB: Proxy;
let relayB: RelayApp;
let relayBUrl: string;

beforeAll(async () => {
  const redisHost = new URL(process.env.REDIS_URL as string).host;
  redisA = await tcpProxy(redisHost);
  s = await startRelayStack({}, { REDIS_URL: `redis://${redisA.host}`, RELAY_LEASE_FENCE_MS: String(FENCE_MS) });
  redisB = await tcpProxy(redisHost);
  billingB = await tcpProxy(s.stack.env.BILLING_ADDR as string);
  ({ app: relayB, url: relayBUrl } = await startSecondRelay(
    s.stack,
    { REDIS_URL: `redis://${redisB.host}`, BILLING_ADDR: billingB.host, RELAY_LEASE_FENCE_MS: String(FENCE_MS) },
    'relay-b',
  ));
  slow = await startFakeProvider({
    kind: 'openai',
    key: 'k',
    reply: 'one two three four five six seven eight nine ten',
    chunkDelayMs: WORD_MS,
  });
}, 60_000);
afterAll(async () => {
  await relayB?.stop();
  await s?.stop();
  await slow?.close();
  for (const p of [redisA, redisB, billingB]) await p?.close();
});

/** Starts a stream; resolves with its text and whether it ended with [DONE], and when the first chunk came. */
async function stream(relayUrl: string, key: string, model: string) {
  const res = await fetch(`${relayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 50 }),
  });
  expect(res.status).toBe(200);
  const reader = res.body?.getReader();
  if (!reader) throw new Error('no body');
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value);
  const done = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      // The connection was cut: what came is the answer.
    }
    return { text, finished: text.includes('data: [DONE]'), endedAt: performance.now() };
  })();
  return { rid: res.headers.get('x-aigw-request-id') ?? '', done };
}

/** The user's wallet once its one request settled, and that request's log row. */
async function charged(userId: number) {
  const w = await eventually(
    async () => (await s.wallet.getWallet({ userId })).wallet,
    (v) => (v?.requestCount ?? 0) >= 1,
    { what: 'the request settled' },
  );
  const log = await eventually(
    () => s.logs.queryLogs({ filter: { userId, type: 2 }, page: { page: 1, pageSize: 5 } }),
    (r) => r.items.length >= 1,
    { what: 'the request logged' },
  );
  expect(log.items).toHaveLength(1);
  return { wallet: w, quota: log.items[0]?.quota ?? 0 };
}

describe('lease fence', () => {
  it('when billing is asked to renew a lease, then it writes it for a relay, refuses a malformed one with INVALID_ARGUMENT and any other caller with PERMISSION_DENIED', async () => {
    const leases = createClient(RelayLeaseService, s.stack.env.BILLING_ADDR as string);
    const asGateway = createClient(RelayLeaseService, s.stack.env.BILLING_ADDR as string, {
      auth: createInternalAuth(keysOf(stackKeys(), 'gateway')),
    });
    try {
      await expect(asGateway.renewRelayLease({ instance: 'beef0001', score: 1_000_000 })).rejects.toMatchObject({
        code: 'PERMISSION_DENIED',
      });
      expect(await leases.renewRelayLease({ instance: 'beef0001', score: 1_000_001 })).toEqual(
        expect.objectContaining({ renewed: true }),
      );
      for (const bad of [
        { instance: 'beef-0001', score: 1 },
        { instance: '', score: 1 },
        { instance: 'beef0001', score: 1.5 },
        { instance: 'beef0001', score: -1 },
      ]) {
        await expect(leases.renewRelayLease(bad)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      }
    } finally {
      leases.close();
      asGateway.close();
    }
  });

  it('when a relay is cut off from Redis alone, then it renews through billing and its stream runs to [DONE]; when one reaches neither, then its streams holding a reservation end within the fence, charged exactly what the log says, while a stream without a hold runs to [DONE]', async () => {
    const model = modelName('gpt-4o-mini');
    // Small: below 100 times a request's reservation, so every request pre-consumes.
    const smallA = await userWithToken(s, { quota: 5_000 });
    const smallB = await userWithToken(s, { quota: 5_000 });
    const ample = await userWithToken(s, { quota: 100_000_000 });
    await createChannel(s, { type: 1, baseUrl: slow.url, key: 'k', models: model });
    await routable(s.stack.relayUrl, ample.key, model);
    await routable(relayBUrl, ample.key, model);
    // Relay B reads the ample wallet's balance (a first request pre-consumes): later ones skip.
    const first = await fetch(`${relayBUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ample.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 50 }),
    });
    expect(first.status).toBe(200);

    const heldA = await stream(s.stack.relayUrl, smallA.key, model);
    const heldB = await stream(relayBUrl, smallB.key, model);
    const free = await stream(relayBUrl, ample.key, model);
    const cutAt = performance.now();
    redisA.cut();
    redisB.cut();
    billingB.cut();

    // Relay B: ended by the fence (1 s after the last renewal, checked every 250 ms), long before
    // the stream's own end (about four more seconds) and the lapse (10 s).
    const b = await heldB.done;
    expect(b.finished).toBe(false);
    expect(b.endedAt - cutAt).toBeLessThan(3_000);
    expect((await free.done).finished).toBe(true);
    // Relay A: its lease renewed through billing the whole time, never fenced.
    expect((await heldA.done).finished).toBe(true);

    // Each held request settles against its hold: one request charged, the wallet down by exactly
    // its logged quota (no hold left open, nothing charged twice).
    for (const u of [smallA, smallB]) {
      const { wallet, quota } = await charged(u.userId);
      expect(quota).toBeGreaterThan(0);
      expect(wallet?.requestCount).toBe(1);
      expect(5_000 - (wallet?.quota ?? 0)).toBe(quota);
      expect(wallet?.usedQuota).toBe(quota);
    }

    // Both relays share this process's metrics: only relay B's held request was ended.
    const metrics = await (await fetch(`http://127.0.0.1:${s.stack.ports.relay.metrics}/metrics`)).text();
    expect(metrics).toMatch(/^relay_lease_fenced_requests_total 1$/m);
  });
});
