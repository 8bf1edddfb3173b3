/**
 * Shutdown: a relay told to stop finishes the streams in flight (and bills them) before it
 * closes, and takes no new requests meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProvider, startFakeProvider } from './fakes/fake-provider.ts';
import {
  createChannel,
  modelName,
  type RelayStack,
  routable,
  startRelayStack,
  userWithToken,
} from './relay-harness.ts';

let s: RelayStack;
let slow: FakeProvider;

beforeAll(async () => {
  s = await startRelayStack();
  slow = await startFakeProvider({
    kind: 'openai',
    key: 'k',
    reply: 'one two three four five six seven eight',
    chunkDelayMs: 150,
  });
});
afterAll(async () => {
  await slow?.close();
});

describe('relay shutdown', () => {
  it('when the stack stops during a stream, then the stream still ends with [DONE]', async () => {
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
    // Stop while the answer is still streaming.
    const stopped = s.stop();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(text).toContain('data: [DONE]');
    const words = [...text.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]).join('');
    expect(words).toBe('one two three four five six seven eight');
    await stopped;
    const after = await fetch(`${s.stack.relayUrl}/v1/models`).catch((e) => e);
    expect(after).toBeInstanceOf(Error);
  });
});
