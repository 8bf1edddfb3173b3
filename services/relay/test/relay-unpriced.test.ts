/**
 * Models without a price: refused in each route's error shape with a status the SDKs do not read
 * as an authentication failure (400, naming the model, nothing charged), unless the admin turns
 * UnpricedModelsEnabled on: then served at DefaultModelRatio and billed at it.
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
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let s: RelayStack;
let openaiFake: FakeProvider;
let claudeFake: FakeProvider;
const PROMPT_TOKENS = 12;
const REPLY = 'one two three four five';

beforeAll(async () => {
  s = await startRelayStack();
  openaiFake = await startFakeProvider({ kind: 'openai', key: 'up-openai', reply: REPLY, promptTokens: PROMPT_TOKENS });
  claudeFake = await startFakeProvider({
    kind: 'anthropic',
    key: 'up-claude',
    reply: REPLY,
    promptTokens: PROMPT_TOKENS,
  });
});
afterAll(async () => {
  await s?.stop();
  await Promise.all([openaiFake?.close(), claudeFake?.close()]);
});

const usedQuota = async (userId: number) => (await s.wallet.getWallet({ userId })).wallet?.usedQuota ?? 0;

describe('unpriced models', () => {
  it('when a model has no price, then every format refuses it with a 400 naming it, and nothing reaches the upstream; allowed by the admin, it is billed at the default ratio', async () => {
    const model = modelName('mystery-model');
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: openaiFake.url, key: 'up-openai', models: model });
    await createChannel(s, { type: 14, baseUrl: claudeFake.url, key: 'up-claude', models: model, priority: -1 });
    await routable(s.stack.relayUrl, u.key, model);
    const message = `模型 ${model} 倍率或价格未配置，请联系管理员设置`;

    const openai = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1`, maxRetries: 0 });
    const err = await openai.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({
      status: 400,
      error: { message, type: 'invalid_request_error', code: 'model_price_missing' },
    });

    const claude = new Anthropic({ apiKey: u.key, baseURL: s.stack.gatewayUrl, maxRetries: 0 });
    const cerr = await claude.messages
      .create({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(cerr).toBeInstanceOf(Anthropic.BadRequestError);
    expect(cerr).not.toBeInstanceOf(Anthropic.AuthenticationError);
    expect(cerr).not.toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(cerr).toMatchObject({
      status: 400,
      error: { type: 'error', error: { type: 'invalid_request_error', message } },
    });

    const gemini = await fetch(`${s.stack.gatewayUrl}/v1beta/models/${model}:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': u.key, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    expect(gemini.status).toBe(400);
    expect(await gemini.json()).toEqual({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } });
    expect(openaiFake.requests).toHaveLength(0);
    expect(claudeFake.requests).toHaveLength(0);
    expect(await usedQuota(u.userId)).toBe(0);

    await setOption(s, 'DefaultModelRatio', '2');
    await setOption(s, 'UnpricedModelsEnabled', 'true');
    const served = await eventually(
      () =>
        openai.chat.completions
          .create({ model, messages: [{ role: 'user', content: 'hi' }] })
          .then((r) => r.choices[0]?.message.content)
          .catch(() => undefined),
      (v) => v !== undefined,
      15_000,
    );
    expect(served).toBe(REPLY);
    // (12 prompt + 5 completion x 1) x 2
    const expected = (PROMPT_TOKENS + 5) * 2;
    const used = await eventually(
      () => usedQuota(u.userId),
      (v) => v >= expected,
      10_000,
    );
    expect(used).toBe(expected);
    const logs = await eventually(
      () =>
        s.logs.queryLogs({ filter: { userId: u.userId, modelName: model, type: 2 }, page: { page: 1, pageSize: 5 } }),
      (r) => r.items.length >= 1,
      10_000,
    );
    expect(logs.items[0]).toMatchObject({ quota: expected, promptTokens: PROMPT_TOKENS, completionTokens: 5 });
    expect(JSON.parse(logs.items[0]?.other ?? '{}')).toMatchObject({ model_ratio: 2, completion_ratio: 1 });
    await setOption(s, 'UnpricedModelsEnabled', 'false');
  });

  it('when current models are asked for on a fresh install, then they are priced by default', async () => {
    const u = await userWithToken(s);
    // model -> [model ratio, completion ratio] of the defaults (dated names fall back to the undated entry).
    const expected: Record<string, [number, number]> = {
      'gpt-5': [0.625, 8],
      'o4-mini': [0.55, 4],
      'claude-sonnet-4-5-20250929': [1.5, 5],
      'claude-haiku-4-5': [0.5, 5],
      'gemini-2.5-flash-lite': [0.05, 4],
      'deepseek-chat': [0.135, 2],
      // What coding agents ask for by default: Claude Code (Opus 5.5, Haiku 5.5 for background
      // work), Codex (the GPT-5.6 and 6.1 lines), Gemini CLI (3.1 Pro, 3 Flash).
      'claude-opus-5-5': [2, 5],
      'claude-haiku-5-5': [0.05, 5],
      'claude-sonnet-5-5': [1, 5],
      'gpt-5.6-sol': [2.5, 6],
      'gpt-6.1-terra': [0.5, 5],
      'gemini-3.1-pro-preview': [1, 6],
      'gemini-3-flash-preview': [0.25, 6],
    };
    const models = Object.keys(expected);
    await createChannel(s, { type: 1, baseUrl: openaiFake.url, key: 'up-openai', models: models.join(',') });
    await routable(s.stack.relayUrl, u.key, 'deepseek-chat');
    const openai = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1`, maxRetries: 0 });
    for (const model of models) {
      const r = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
      expect(r.choices[0]?.message.content).toBe(REPLY);
    }
    const logs = await eventually(
      () => s.logs.queryLogs({ filter: { userId: u.userId, type: 2 }, page: { page: 1, pageSize: 20 } }),
      (r) => r.items.length >= models.length,
      10_000,
    );
    expect(logs.items).toHaveLength(models.length);
    for (const log of logs.items) {
      const [ratio, completion] = expected[log.modelName] ?? [0, 0];
      expect(JSON.parse(log.other)).toMatchObject({ model_ratio: ratio, completion_ratio: completion });
      expect(log.quota).toBe(Math.max(1, Math.round((PROMPT_TOKENS + 5 * completion) * ratio)));
    }
  });
});
