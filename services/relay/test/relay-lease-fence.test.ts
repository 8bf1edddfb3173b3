/**
 * Lease lapse (docs/security.md): a relay that cannot renew its lease in Redis (while billing still
 * reads the leases) may see billing give back its holds once the lease lapses (10 s). So from half
 * that (RELAY_LEASE_FENCE_MS) it ends the requests that hold a reservation: no request is still
 * running when its hold is given back, and what it streamed is charged against the hold it still
 * has. A request served without a hold (ample wallet) runs on. The relay reaches Redis through a
 * TCP proxy the test cuts; billing reaches it directly.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
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

const FENCE_MS = 600;
/** Ten words, one every 400 ms: the stream outlasts the fence by seconds. */
const WORD_MS = 400;

/** A TCP proxy to Redis whose cut() drops every connection and refuses new ones. */
async function redisProxy(target: URL): Promise<{ url: string; cut(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((client) => {
    if (!open) return client.destroy();
    const upstream = tcpConnect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `redis://127.0.0.1:${port}`,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

let s: RelayStack;
let slow: FakeProvider;
let proxy: Awaited<ReturnType<typeof redisProxy>>;

beforeAll(async () => {
  proxy = await redisProxy(new URL(process.env.REDIS_URL as string));
  s = await startRelayStack({}, { REDIS_URL: proxy.url, RELAY_LEASE_FENCE_MS: String(FENCE_MS) });
  slow = await startFakeProvider({
    kind: 'openai',
    key: 'k',
    reply: 'one two three four five six seven eight nine ten',
    chunkDelayMs: WORD_MS,
  });
}, 60_000);
afterAll(async () => {
  await s?.stop();
  await slow?.close();
  await proxy?.close();
});

/** Starts a stream; resolves with its text and whether it ended with [DONE], and when the first chunk came. */
async function stream(key: string, model: string) {
  const res = await fetch(`${s.stack.relayUrl}/v1/chat/completions`, {
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

describe('lease fence', () => {
  it('when the relay cannot renew its lease, then its streams holding a reservation end within the fence and are charged exactly what the log says, while a stream without a hold runs to [DONE]', async () => {
    const model = modelName('gpt-4o-mini');
    // Small: below 100 times a request's reservation, so every request pre-consumes.
    const small = await userWithToken(s, { quota: 5_000 });
    const ample = await userWithToken(s, { quota: 100_000_000 });
    await createChannel(s, { type: 1, baseUrl: slow.url, key: 'k', models: model });
    await routable(s.stack.relayUrl, ample.key, model);
    // The relay reads the ample wallet's balance (a first request pre-consumes): later ones skip.
    const first = await fetch(`${s.stack.relayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ample.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 50 }),
    });
    expect(first.status).toBe(200);

    const held = await stream(small.key, model);
    const free = await stream(ample.key, model);
    const cutAt = performance.now();
    proxy.cut();

    const h = await held.done;
    expect(h.finished).toBe(false);
    // Ended by the fence (600 ms after the last renewal, checked every 150 ms), long before the
    // stream's own end (about four more seconds) and the lapse (10 s).
    expect(h.endedAt - cutAt).toBeLessThan(3_000);
    const f = await free.done;
    expect(f.finished).toBe(true);

    // The cut request settles against its hold: one request charged, the wallet down by exactly
    // its logged quota (no hold left open, nothing charged twice).
    const w = await eventually(
      async () => (await s.wallet.getWallet({ userId: small.userId })).wallet,
      (v) => (v?.requestCount ?? 0) >= 1,
      { what: 'the cut request settled' },
    );
    const log = await eventually(
      () => s.logs.queryLogs({ filter: { userId: small.userId, type: 2 }, page: { page: 1, pageSize: 5 } }),
      (r) => r.items.length >= 1,
      { what: 'the cut request logged' },
    );
    expect(log.items).toHaveLength(1);
    expect(log.items[0]?.quota).toBeGreaterThan(0);
    expect(w?.requestCount).toBe(1);
    expect(5_000 - (w?.quota ?? 0)).toBe(log.items[0]?.quota);
    expect(w?.usedQuota).toBe(log.items[0]?.quota);

    const metrics = await (await fetch(`http://127.0.0.1:${s.stack.ports.relay.metrics}/metrics`)).text();
    expect(metrics).toMatch(/^relay_lease_fenced_requests_total 1$/m);
  });
});
