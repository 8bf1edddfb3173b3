/**
 * Shutdown: a relay told to stop is not ready at once, yet keeps answering new connections for
 * its drain delay (each answer with Connection: close) so that load balancers see the 503 first;
 * then it takes no new connections, and still finishes the streams in flight before it closes.
 */
import { get } from 'node:http';
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

/** Above the time the test takes to see the 503 and open a new connection, below the stream's length. */
const DRAIN_DELAY_MS = 1_500;
/** Eight words, one every 400 ms: the stream outlasts the delay by about 1.5 s. */
const WORD_MS = 400;

let s: RelayStack;
let slow: FakeProvider;

beforeAll(async () => {
  s = await startRelayStack({ RELAY_DRAIN_DELAY_MS: String(DRAIN_DELAY_MS) });
  slow = await startFakeProvider({
    kind: 'openai',
    key: 'k',
    reply: 'one two three four five six seven eight',
    chunkDelayMs: WORD_MS,
  });
});
afterAll(async () => {
  await slow?.close();
});

/** A GET on a new connection: the status and Connection header, or the connection's error code. */
function fresh(url: string): Promise<{ status?: number; connection?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = get(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
}

/** Polls until `ok(value)`; throws (with the last value) when it does not come within `ms`. */
async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms (last: ${JSON.stringify(v)})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('relay shutdown', () => {
  it('when the stack stops during a stream, then the relay is not ready, serves on with Connection: close for the delay, then refuses new connections, and the stream still ends with [DONE]', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: slow.url, key: 'k', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const res = await fetch(`${s.stack.relayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    expect(res.status).toBe(200);
    const reader = res.body?.getReader();
    if (!reader) throw new Error('no body');
    const decoder = new TextDecoder();
    let text = decoder.decode((await reader.read()).value);
    let ended = false;
    const rest = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      ended = true;
    })();

    // Stop while the answer is still streaming.
    const stopped = s.stop();
    const readyz = `http://127.0.0.1:${s.stack.ports.relay.metrics}/readyz`;
    await until(
      'readiness 503',
      () => fresh(readyz),
      (v) => v.status === 503,
    );
    // A balancer that has not probed yet still connects: answered, and told not to reuse it.
    expect(await fresh(`${s.stack.relayUrl}/healthz`)).toEqual({ status: 200, connection: 'close' });
    // After the delay the listener is closed while the stream goes on.
    await until(
      'new connections refused',
      () => fresh(`${s.stack.relayUrl}/healthz`),
      (v) => v.error !== undefined,
    );
    expect(ended).toBe(false);

    await rest;
    expect(text).toContain('data: [DONE]');
    const words = [...text.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]).join('');
    expect(words).toBe('one two three four five six seven eight');
    await stopped;
    const after = await fetch(`${s.stack.relayUrl}/v1/models`).catch((e) => e);
    expect(after).toBeInstanceOf(Error);
  });
});
