/**
 * The Vercel AI SDK (`ai` with `@ai-sdk/openai`) pointed at the gateway with its default
 * `openai(model)`, which speaks OpenAI's Responses API: a whole and a streamed answer on an OpenAI
 * channel (passed through) and on a Claude channel (translated), each billed from its usage.
 */
import { createOpenAI } from '@ai-sdk/openai';
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
import { generateText, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let s: RelayStack;
let openaiFake: FakeProvider;
let claudeFake: FakeProvider;
const REPLY = 'The quick brown fox jumps';
const PROMPT_TOKENS = 12;

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

async function usedQuota(userId: number, atLeast: number): Promise<number> {
  return eventually(
    async () => (await s.wallet.getWallet({ userId })).wallet?.usedQuota ?? 0,
    (v) => v >= atLeast,
    10_000,
  );
}

async function logRows(userId: number, model: string, count: number) {
  const res = await eventually(
    () => s.logs.queryLogs({ filter: { userId, modelName: model, type: 2 }, page: { page: 1, pageSize: 10 } }),
    (r) => r.items.length >= count,
    10_000,
  );
  return res.items;
}

describe('the Vercel AI SDK on its default (Responses) model', () => {
  for (const c of [
    { name: 'an OpenAI channel', type: 1, base: 'gpt-4o-mini', path: '/v1/responses', fake: () => openaiFake },
    { name: 'a Claude channel', type: 14, base: 'claude-3-5-sonnet', path: '/v1/messages', fake: () => claudeFake },
  ]) {
    it(`when generateText and streamText run on ${c.name}, then both answer the upstream's text and each is billed once`, async () => {
      const model = modelName(c.base);
      const u = await userWithToken(s);
      const fake = c.fake();
      await createChannel(s, {
        type: c.type,
        baseUrl: fake.url,
        key: c.type === 1 ? 'up-openai' : 'up-claude',
        models: model,
      });
      await routable(s.stack.relayUrl, u.key, model);
      const openai = createOpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1` });

      const whole = await generateText({ model: openai(model), prompt: 'Say something', maxRetries: 0 });
      expect(whole.text).toBe(REPLY);
      expect(whole.usage.inputTokens).toBe(PROMPT_TOKENS);
      expect(whole.usage.outputTokens).toBe(5);
      expect(fake.requests.at(-1)?.path).toBe(c.path);

      const streamed = streamText({ model: openai(model), prompt: 'Say something', maxRetries: 0 });
      let text = '';
      for await (const part of streamed.textStream) text += part;
      expect(text).toBe(REPLY);
      expect((await streamed.usage).outputTokens).toBe(5);

      const rows = await logRows(u.userId, model, 2);
      expect(rows).toHaveLength(2);
      expect(rows.filter((r) => r.isStream)).toHaveLength(1);
      for (const r of rows) expect(r).toMatchObject({ promptTokens: PROMPT_TOKENS, completionTokens: 5 });
      const charged = rows.reduce((sum, r) => sum + r.quota, 0);
      expect(charged).toBeGreaterThan(0);
      expect(await usedQuota(u.userId, charged)).toBe(charged);
    });
  }
});
