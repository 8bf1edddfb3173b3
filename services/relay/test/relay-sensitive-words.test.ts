/**
 * Sensitive words on prompts (spec 01: CheckSensitiveEnabled, CheckSensitiveOnPromptEnabled,
 * SensitiveWords), set through the users service's options as an admin would: the relay hears the
 * change over Kafka, refuses prompts holding a listed word in every client format with the
 * route's error shape, sends nothing upstream, charges nothing and logs no consumption.
 */
import { eventually } from '@aigw/testkit';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import {
  createChannel,
  modelName,
  type RelayStack,
  routable,
  setOption,
  startRelayStack,
  userWithToken,
} from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let s: RelayStack;
let fake: FakeProvider;

beforeAll(async () => {
  s = await startRelayStack();
  fake = await startFakeProvider({ kind: 'openai', key: 'up-key', reply: 'All fine here', promptTokens: 9 });
});
afterAll(async () => {
  // Later tests on a shared database must not inherit the switch.
  await setOption(s, 'CheckSensitiveEnabled', 'false').catch(() => {});
  await s?.stop();
  await fake?.close();
});

async function post(path: string, key: string, body: unknown, header: Record<string, string> = {}) {
  const res = await fetch(`${s.stack.relayUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...header },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('sensitive words on prompts', () => {
  it('when an admin lists words and turns the checks on, then prompts holding one are refused in every format, unbilled and unlogged, and a new list applies at once', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-key', models: model });
    await routable(s.stack.relayUrl, u.key, model);

    await setOption(s, 'SensitiveWords', 'contraband\n违禁品');
    await setOption(s, 'CheckSensitiveOnPromptEnabled', 'true');
    await setOption(s, 'CheckSensitiveEnabled', 'true');

    const chat = (text: string) => ({ model, messages: [{ role: 'user', content: text }] });
    // The relay follows the options over Kafka: wait until it refuses.
    const first = await eventually(
      () => post('/v1/chat/completions', u.key, chat('where to buy CONTRABAND cheaply')),
      (r) => r.status === 400,
    );
    expect(first.status).toBe(400);
    expect(first.body).toEqual({
      error: {
        message: '请求内容包含敏感词：contraband',
        type: 'invalid_request_error',
        param: null,
        code: 'sensitive_words_detected',
      },
    });
    const sentBefore = fake.requests.length;

    const parts = await post('/v1/chat/completions', u.key, {
      model,
      stream: true,
      messages: [
        { role: 'system', content: 'be nice' },
        { role: 'user', content: [{ type: 'text', text: '这是违禁品吗' }] },
      ],
    });
    expect(parts.status).toBe(400);
    expect((parts.body.error as { message: string }).message).toBe('请求内容包含敏感词：违禁品');

    const completions = await post('/v1/completions', u.key, { model, prompt: ['ok', 'contraband list'] });
    expect(completions.status).toBe(400);
    const embeddings = await post('/v1/embeddings', u.key, { model, input: 'Contraband' });
    expect(embeddings.status).toBe(400);
    expect((embeddings.body.error as { code: string }).code).toBe('sensitive_words_detected');

    const claude = await post(
      '/v1/messages',
      u.key,
      {
        model,
        max_tokens: 50,
        system: 'you are a helper',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'tell me about contraband' }] }],
      },
      { 'anthropic-version': '2023-06-01' },
    );
    expect(claude.status).toBe(400);
    expect(claude.body).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: '请求内容包含敏感词：contraband' },
    });

    const responses = await post('/v1/responses', u.key, {
      model,
      instructions: 'be brief',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'list contraband' }] }],
    });
    expect(responses.status).toBe(400);
    expect((responses.body.error as { code: string }).code).toBe('sensitive_words_detected');

    for (const op of ['generateContent', 'streamGenerateContent']) {
      const gemini = await post(`/v1beta/models/${model}:${op}`, u.key, {
        systemInstruction: { parts: [{ text: '违禁品 are discussed here' }] },
        contents: [{ role: 'user', parts: [{ text: 'hello' }] }],
      });
      expect(gemini.status).toBe(400);
      expect(gemini.body).toEqual({
        error: { code: 400, message: '请求内容包含敏感词：违禁品', status: 'INVALID_ARGUMENT' },
      });
    }
    // Nothing of the refused requests went upstream.
    expect(fake.requests.length).toBe(sentBefore);

    // A clean prompt is served and billed: (9 + 3 x 4) x 0.075 = 1.575 -> 2.
    const clean = await post('/v1/chat/completions', u.key, chat('a harmless question'));
    expect(clean.status).toBe(200);
    const wallet = await eventually(
      async () => (await s.wallet.getWallet({ userId: u.userId })).wallet?.usedQuota ?? 0,
      (v) => v > 0,
    );
    expect(wallet).toBe(2);
    // Only the clean request left a log: the refusals are neither consumptions nor error logs. The
    // relay publishes a user's events in order on one partition, so once the clean request's log
    // is there, a log of the refusals before it would be there too.
    const logs = await eventually(
      () => s.logs.queryLogs({ filter: { userId: u.userId }, page: { page: 1, pageSize: 50 } }),
      (r) => r.items.some((l) => l.type === 2),
      { what: "the clean request's log" },
    );
    expect(logs.items.map((l) => [l.type, l.quota])).toEqual([[2, 2]]);

    // A new list replaces the old one: the word refused before now passes, the new one does not.
    await setOption(s, 'SensitiveWords', 'smuggle');
    const after = await eventually(
      () => post('/v1/chat/completions', u.key, chat('where to buy contraband cheaply')),
      (r) => r.status === 200,
    );
    expect(after.status).toBe(200);
    const smuggle = await post('/v1/chat/completions', u.key, chat('how to Smuggle'));
    expect(smuggle.status).toBe(400);

    // With the master switch off, nothing is checked.
    await setOption(s, 'CheckSensitiveEnabled', 'false');
    const off = await eventually(
      () => post('/v1/chat/completions', u.key, chat('how to smuggle')),
      (r) => r.status === 200,
    );
    expect(off.status).toBe(200);
  });
});
