/**
 * Claude clients beyond /v1/messages, with the official `@anthropic-ai/sdk` through the gateway:
 * count_tokens (counted by a Claude channel, estimated on others, Claude's error shape, free) and
 * the anthropic-beta / anthropic-version headers reaching a Claude upstream (context_management,
 * which the fake refuses without its beta as the real API does); reasoning across formats (the
 * fake checks `thinking` as Anthropic does and signs its thinking): new-api's `-thinking` suffix and
 * `reasoning_effort` from chat clients, thinking returned as reasoning_content with its signature,
 * and a tool loop whose signed thinking goes back to Claude intact. Prompt caching: a chat client's
 * `cache_control` (with `ttl: "1h"`) reaches Claude, and cache reads, 5-minute and one-hour writes
 * are billed with CacheRatio and new-api's CreateCacheRatio (the old CacheCreationRatio still read).
 * Bad input: a wrong type in a field the relay reads is a 400 in each API's own error shape.
 */
import { eventually } from '@aigw/testkit';
import {
  CONTEXT_MANAGEMENT_BETA,
  FAKE_THINKING,
  type FakeProvider,
  fakeInputTokens,
  startFakeProvider,
  thinkingSignature,
} from '@aigw/testkit/fakes';
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
import { expectBilled } from './expect-billed.ts';

let s: RelayStack;
let claudeFake: FakeProvider;
let openaiFake: FakeProvider;
const REPLY = 'Context kept short';
const PROMPT_TOKENS = 12;

beforeAll(async () => {
  s = await startRelayStack();
  claudeFake = await startFakeProvider({
    kind: 'anthropic',
    key: 'up-claude',
    reply: REPLY,
    promptTokens: PROMPT_TOKENS,
  });
  openaiFake = await startFakeProvider({ kind: 'openai', key: 'up-openai', reply: REPLY, promptTokens: PROMPT_TOKENS });
});
afterAll(async () => {
  await s?.stop();
  await Promise.all([claudeFake?.close(), openaiFake?.close()]);
});

const usedQuota = async (userId: number) => (await s.wallet.getWallet({ userId })).wallet?.usedQuota ?? 0;

describe('count_tokens', () => {
  it('when the Anthropic SDK counts tokens on a Claude channel, then the upstream counts them, with the client betas, for free', async () => {
    const model = modelName('claude-sonnet-4-5');
    const u = await userWithToken(s);
    await createChannel(s, { type: 14, baseUrl: claudeFake.url, key: 'up-claude', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const client = new Anthropic({ apiKey: u.key, baseURL: s.stack.gatewayUrl, maxRetries: 0 });

    const params = {
      model,
      system: 'You are terse',
      messages: [{ role: 'user' as const, content: 'How many tokens is this sentence?' }],
    };
    const count = await client.messages.countTokens(params);
    expect(count.input_tokens).toBe(fakeInputTokens(params, PROMPT_TOKENS));
    const sent = claudeFake.requests.at(-1);
    expect(sent?.path).toBe('/v1/messages/count_tokens');
    expect(sent?.headers['x-api-key']).toBe('up-claude');
    expect(sent?.body).toMatchObject(params);

    // A beta field in the body with its beta header: the header reaches the upstream with it.
    const beta = await client.beta.messages.countTokens({
      ...params,
      betas: [CONTEXT_MANAGEMENT_BETA],
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
    });
    expect(beta.input_tokens).toBe(fakeInputTokens(params, PROMPT_TOKENS));
    expect(String(claudeFake.requests.at(-1)?.headers['anthropic-beta'])).toContain(CONTEXT_MANAGEMENT_BETA);

    // Counting is free. A billed chat after the counts is the marker: the relay publishes a user's
    // usage events in order on one partition, so once the chat is logged and settled, anything the
    // counts had charged would be too.
    const chat = await client.messages
      .create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    const rid = chat.response.headers.get('x-aigw-request-id') ?? '';
    expect(rid).not.toBe('');
    const logs = await eventually(
      () => s.logs.queryLogs({ filter: { userId: u.userId }, page: { page: 1, pageSize: 10 } }),
      (r) => r.items.some((l) => l.requestId === rid),
      { what: "the marker chat's log" },
    );
    expect(logs.items.map((l) => [l.type, l.requestId])).toEqual([[2, rid]]);
    const charged = logs.items[0]?.quota ?? 0;
    expect(charged).toBeGreaterThan(0);
    expect(
      await eventually(
        () => usedQuota(u.userId),
        (v) => v >= charged,
        { what: 'the marker chat settled' },
      ),
    ).toBe(charged);
  });

  it('when the model is served by a non-Claude channel, then the relay estimates the count without calling it', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: openaiFake.url, key: 'up-openai', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const client = new Anthropic({ apiKey: u.key, baseURL: s.stack.gatewayUrl, maxRetries: 0 });
    const before = openaiFake.requests.length;

    const short = await client.messages
      .countTokens({ model, messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    const long = await client.messages.countTokens({
      model,
      messages: [{ role: 'user', content: 'Hi '.repeat(200) }],
    });
    expect(short.response.headers.get('x-aigw-estimated')).toBe('true');
    // 3 per request, 3 per message, then the text (o200k: "Hi" is one token).
    expect(short.data.input_tokens).toBe(7);
    expect(long.input_tokens).toBeGreaterThan(200);
    expect(openaiFake.requests.length).toBe(before);
  });

  it('when count_tokens is refused, then the error is in Claude’s shape', async () => {
    const u = await userWithToken(s);
    const client = new Anthropic({ apiKey: u.key, baseURL: s.stack.gatewayUrl, maxRetries: 0 });
    const missing = modelName('claude-nowhere');
    await expect(
      client.messages.countTokens({ model: missing, messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 503, error: { type: 'error', error: { type: 'api_error' } } });

    const bad = await fetch(`${s.stack.gatewayUrl}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'x-api-key': u.key, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [] }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'model: Field required' },
    });

    const nokey = await fetch(`${s.stack.gatewayUrl}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: missing, messages: [] }),
    });
    expect(nokey.status).toBe(401);
    expect(await nokey.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });

    const unknown = await fetch(`${s.stack.gatewayUrl}/v1/messages/batches`, {
      method: 'POST',
      headers: { 'x-api-key': u.key, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });
});

describe('Claude to Claude headers', () => {
  it('when Claude Code sends context_management with its beta header, then the header and the API version reach the upstream and the request is served', async () => {
    const model = modelName('claude-sonnet-4-5');
    const u = await userWithToken(s);
    await createChannel(s, { type: 14, baseUrl: claudeFake.url, key: 'up-claude', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const client = new Anthropic({ apiKey: u.key, baseURL: s.stack.gatewayUrl, maxRetries: 0 });

    const msg = await client.beta.messages.create({
      model,
      max_tokens: 100,
      betas: [CONTEXT_MANAGEMENT_BETA],
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(msg.content[0]).toMatchObject({ type: 'text', text: REPLY });
    const sent = claudeFake.requests.at(-1);
    expect(String(sent?.headers['anthropic-beta'])).toContain(CONTEXT_MANAGEMENT_BETA);
    expect(sent?.body).toMatchObject({ context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] } });

    const stream = client.beta.messages.stream({
      model,
      max_tokens: 100,
      betas: [CONTEXT_MANAGEMENT_BETA],
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      messages: [{ role: 'user', content: 'Hello' }],
    });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: REPLY });
    expect(String(claudeFake.requests.at(-1)?.headers['anthropic-beta'])).toContain(CONTEXT_MANAGEMENT_BETA);

    // The client's own API version wins over the relay's default.
    const raw = await fetch(`${s.stack.gatewayUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': u.key, 'content-type': 'application/json', 'anthropic-version': '2023-01-01' },
      body: JSON.stringify({ model, max_tokens: 50, messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(raw.status).toBe(200);
    expect(claudeFake.requests.at(-1)?.headers['anthropic-version']).toBe('2023-01-01');

    // Without the beta header the fake refuses the field, as Anthropic does (the test can fail).
    const refused = await fetch(`${s.stack.gatewayUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': u.key, 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        max_tokens: 50,
        context_management: { edits: [] },
        messages: [{ role: 'user', content: 'Hello' }],
      }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });

    const charged = await eventually(
      () => usedQuota(u.userId),
      (v) => v > 0,
      10_000,
    );
    expect(charged).toBeGreaterThan(0);
  });
});

describe('reasoning through translation', () => {
  const weather = {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  };
  const sentBody = () => claudeFake.requests.at(-1)?.body as Record<string, unknown>;

  it('when a chat client asks for a -thinking model, then Claude gets thinking without the suffix, the answer keeps the signed thinking, and the tool loop sends it back intact', async () => {
    const base = modelName('claude-sonnet-4-5');
    const model = `${base}-thinking`;
    const u = await userWithToken(s);
    await createChannel(s, { type: 14, baseUrl: claudeFake.url, key: 'up-claude', models: `${base},${model}` });
    await routable(s.stack.relayUrl, u.key, model);
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1`, maxRetries: 0 });
    claudeFake.set({ toolCall: { name: 'get_weather', arguments: { city: 'Paris' } } });
    try {
      const first = await client.chat.completions.create({
        model,
        temperature: 0.2,
        max_tokens: 2000,
        tools: [weather],
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
      });
      // The suffix is gone upstream; thinking has 80% of max_tokens (new-api), temperature is dropped.
      expect(sentBody()).toMatchObject({
        model: base,
        max_tokens: 2000,
        thinking: { type: 'enabled', budget_tokens: 1600 },
      });
      expect(sentBody()).not.toHaveProperty('temperature');
      const msg = first.choices[0]?.message as OpenAI.ChatCompletionMessage & Record<string, unknown>;
      expect(msg.reasoning_content).toBe(FAKE_THINKING);
      expect(msg.reasoning_details).toEqual([
        {
          type: 'reasoning.text',
          text: FAKE_THINKING,
          signature: thinkingSignature(FAKE_THINKING),
          format: 'anthropic-claude-v1',
          index: 0,
        },
      ]);
      const call = msg.tool_calls?.[0];
      expect(call).toMatchObject({ function: { name: 'get_weather' } });

      // The next turn as the SDK gave it back: the fake refuses a tool turn without its signed thinking.
      claudeFake.set({ toolCall: undefined });
      const second = await client.chat.completions.create({
        model,
        max_tokens: 2000,
        tools: [weather],
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          msg as OpenAI.ChatCompletionAssistantMessageParam,
          { role: 'tool', tool_call_id: call?.id ?? '', content: 'Sunny' },
        ],
      });
      expect(second.choices[0]?.message.content).toBe(REPLY);
      const turn = (sentBody().messages as { role: string; content: unknown[] }[])[1];
      expect(turn?.content[0]).toEqual({
        type: 'thinking',
        thinking: FAKE_THINKING,
        signature: thinkingSignature(FAKE_THINKING),
      });
      // Priced by the name asked for (no entry with the suffix: the base model's price).
      await expectBilled(s, u.userId, model, 2);
    } finally {
      claudeFake.set({ toolCall: undefined });
    }
  });

  it('when a chat client streams with reasoning_effort, then Claude gets a budget below max_tokens and the stream carries the thinking and its signature', async () => {
    const model = modelName('claude-sonnet-4-5');
    const u = await userWithToken(s);
    await createChannel(s, { type: 14, baseUrl: claudeFake.url, key: 'up-claude', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model,
      reasoning_effort: 'high',
      max_tokens: 1000,
      top_p: 0.5,
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    let reasoning = '';
    let text = '';
    const details: unknown[] = [];
    for await (const c of stream) {
      const d = c.choices[0]?.delta as Record<string, unknown> | undefined;
      reasoning += String(d?.reasoning_content ?? '');
      text += String(d?.content ?? '');
      if (Array.isArray(d?.reasoning_details)) details.push(...d.reasoning_details);
    }
    // new-api's high budget; max_tokens leaves the 1000 asked for the answer; top_p below 0.95 dropped.
    expect(sentBody()).toMatchObject({ model, max_tokens: 5096, thinking: { type: 'enabled', budget_tokens: 4096 } });
    expect(sentBody()).not.toHaveProperty('top_p');
    expect(reasoning).toBe(FAKE_THINKING);
    expect(text).toBe(REPLY);
    expect(details).toEqual([expect.objectContaining({ signature: thinkingSignature(FAKE_THINKING) })]);
  });

  it('when Claude Code asks for a -thinking model on a Claude channel, then the passed-through body gets thinking and the stripped model', async () => {
    const base = modelName('claude-opus-4-5');
    const model = `${base}-thinking`;
    const u = await userWithToken(s);
    await createChannel(s, { type: 14, baseUrl: claudeFake.url, key: 'up-claude', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const client = new Anthropic({ apiKey: u.key, baseURL: s.stack.gatewayUrl, maxRetries: 0 });
    const msg = await client.messages.create({ model, max_tokens: 3000, messages: [{ role: 'user', content: 'hi' }] });
    expect(sentBody()).toMatchObject({
      model: base,
      max_tokens: 3000,
      thinking: { type: 'enabled', budget_tokens: 2400 },
    });
    expect(msg.content[0]).toEqual({
      type: 'thinking',
      thinking: FAKE_THINKING,
      signature: thinkingSignature(FAKE_THINKING),
    });
    // The client's own thinking is kept as it is.
    await client.messages.create({
      model,
      max_tokens: 3000,
      thinking: { type: 'enabled', budget_tokens: 1500 },
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(sentBody()).toMatchObject({ model: base, thinking: { type: 'enabled', budget_tokens: 1500 } });
  });
});

describe('prompt caching', () => {
  it('when a chat client marks one-hour cache breakpoints for Claude, then they reach it, and reads and one-hour writes are billed with CreateCacheRatio x 1.6', async () => {
    const model = modelName('claude-sonnet-4-5');
    // The old name and new-api's for one model: the new one wins.
    await setOption(s, 'CacheCreationRatio', JSON.stringify({ [model]: 1.5 }));
    await setOption(s, 'CreateCacheRatio', JSON.stringify({ [model]: 2 }));
    await createChannel(s, { type: 14, baseUrl: claudeFake.url, key: 'up-claude', models: model });
    const hour = { type: 'ephemeral', ttl: '1h' };
    const ask = (key: string) =>
      new OpenAI({ apiKey: key, baseURL: `${s.stack.gatewayUrl}/v1`, maxRetries: 0 }).chat.completions
        .create({
          model,
          messages: [
            { role: 'system', content: [{ type: 'text', text: 'Long shared instructions', cache_control: hour }] },
            {
              role: 'user',
              content: [{ type: 'text', text: 'The question', cache_control: { type: 'ephemeral' } }],
            },
          ] as unknown as OpenAI.ChatCompletionMessageParam[],
        })
        .withResponse();
    claudeFake.set({ promptTokens: 1000, cachedTokens: 100, cacheWriteTokens: 300 });
    try {
      // The ratio options reach the relay by event: a first user's calls until its log shows them.
      const warm = await userWithToken(s);
      await routable(s.stack.relayUrl, warm.key, model);
      await eventually(
        async () => {
          const { response } = await ask(warm.key);
          const rid = response.headers.get('x-aigw-request-id') ?? '';
          const logs = await eventually(
            () => s.logs.queryLogs({ filter: { userId: warm.userId }, page: { page: 1, pageSize: 20 } }),
            (r) => r.items.some((l) => l.requestId === rid),
            { what: 'the warm-up log' },
          );
          return JSON.parse(logs.items.find((l) => l.requestId === rid)?.other ?? '{}') as Record<string, unknown>;
        },
        (o) => o.cache_creation_ratio === 2,
        { what: 'CreateCacheRatio applied' },
      );

      const u = await userWithToken(s);
      const { data } = await ask(u.key);
      expect(data.choices[0]?.message.content).toBe(REPLY);
      const sent = claudeFake.requests.at(-1)?.body as { system: unknown; messages: { content: unknown[] }[] };
      expect(sent.system).toEqual([{ type: 'text', text: 'Long shared instructions', cache_control: hour }]);
      expect(sent.messages[0]?.content[0]).toEqual({
        type: 'text',
        text: 'The question',
        cache_control: { type: 'ephemeral' },
      });
      // By hand: 600 plain + 100 read x 0.1 + 300 one-hour writes x (2 x 1.6) = 1570 prompt,
      // 3 answer tokens x 5 = 15; (1570 + 15) x model ratio 1.5 = 2377.5 -> 2378.
      const used = await eventually(
        async () => (await s.wallet.getWallet({ userId: u.userId })).wallet?.usedQuota ?? 0,
        (v) => v > 0,
        { what: 'the cached call settled' },
      );
      expect(used).toBe(2378);
      const log = (
        await eventually(
          () => s.logs.queryLogs({ filter: { userId: u.userId, type: 2 }, page: { page: 1, pageSize: 5 } }),
          (r) => r.items.length === 1,
        )
      ).items[0];
      expect(log?.quota).toBe(2378);
      expect(JSON.parse(log?.other ?? '{}')).toMatchObject({
        cache_tokens: 100,
        cache_ratio: 0.1,
        cache_creation_tokens: 300,
        cache_creation_ratio: 2,
        cache_creation_tokens_5m: 0,
        cache_creation_tokens_1h: 300,
        cache_creation_ratio_1h: 3.2,
      });
    } finally {
      claudeFake.set({ promptTokens: PROMPT_TOKENS, cachedTokens: 0, cacheWriteTokens: 0 });
    }
  });
});

describe('long-context price tiers', () => {
  it('when the upstream reports a prompt above a tier threshold (ModelPriceTiers), then the whole call is billed at that tier and the log row names it; below it, at the base price', async () => {
    const model = modelName('claude-sonnet-4-5');
    // Base (the claude-sonnet-4-5 defaults): model ratio 1.5, completion 5, cache reads 0.1.
    // Above 200k prompt tokens: ratio 3 ($6 per M), completion 8, cache reads 0.2.
    await setOption(
      s,
      'ModelPriceTiers',
      JSON.stringify({
        [model]: [{ above_prompt_tokens: 200_000, model_ratio: 3, completion_ratio: 8, cache_ratio: 0.2 }],
      }),
    );
    await createChannel(s, { type: 14, baseUrl: claudeFake.url, key: 'up-claude', models: model });
    const ask = (key: string) =>
      new Anthropic({ apiKey: key, baseURL: s.stack.gatewayUrl, maxRetries: 0 }).messages
        .create({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Summarise the repository' }] })
        .withResponse();
    const rowOf = async (userId: number, requestId?: string) => {
      const logs = await eventually(
        () => s.logs.queryLogs({ filter: { userId, type: 2 }, page: { page: 1, pageSize: 20 } }),
        (r) => r.items.some((l) => !requestId || l.requestId === requestId),
        { what: 'the log row' },
      );
      return logs.items.find((l) => !requestId || l.requestId === requestId);
    };
    const usedOf = (userId: number, what: string) =>
      eventually(
        async () => (await s.wallet.getWallet({ userId })).wallet?.usedQuota ?? 0,
        (v) => v > 0,
        { what },
      );
    claudeFake.set({ promptTokens: 250_000, cachedTokens: 50_000 });
    try {
      // The option reaches the relay by event: a first user's calls until its log shows the tier.
      const warm = await userWithToken(s);
      await routable(s.stack.relayUrl, warm.key, model);
      await eventually(
        async () => {
          const { response } = await ask(warm.key);
          const row = await rowOf(warm.userId, response.headers.get('x-aigw-request-id') ?? '');
          return JSON.parse(row?.other ?? '{}') as Record<string, unknown>;
        },
        (o) => o.matched_tier === '>200000',
        { what: 'ModelPriceTiers applied' },
      );

      // Above: 250,000 prompt tokens, 50,000 of them cache reads, 3 answer tokens, all at the tier:
      // (200,000 + 50,000 x 0.2 + 3 x 8) x 3 = 630,072.
      const big = await userWithToken(s);
      const { data } = await ask(big.key);
      expect(data.content[0]).toMatchObject({ type: 'text', text: REPLY });
      expect(await usedOf(big.userId, 'the long call settled')).toBe(630_072);
      const row = await rowOf(big.userId);
      expect(row).toMatchObject({ quota: 630_072, promptTokens: 250_000, completionTokens: 3 });
      expect(JSON.parse(row?.other ?? '{}')).toMatchObject({
        model_ratio: 3,
        completion_ratio: 8,
        cache_tokens: 50_000,
        cache_ratio: 0.2,
        matched_tier: '>200000',
        tier_above_prompt_tokens: 200_000,
        tier_model_ratio: 3,
        tier_completion_ratio: 8,
        tier_cache_ratio: 0.2,
      });

      // Below: 199,999 prompt tokens at the base price: (199,999 + 3 x 5) x 1.5 = 300,021.
      claudeFake.set({ promptTokens: 199_999, cachedTokens: 0 });
      const small = await userWithToken(s);
      await ask(small.key);
      expect(await usedOf(small.userId, 'the short call settled')).toBe(300_021);
      const base = JSON.parse((await rowOf(small.userId))?.other ?? '{}') as Record<string, unknown>;
      expect(base).toMatchObject({ model_ratio: 1.5, completion_ratio: 5 });
      expect(base).not.toHaveProperty('matched_tier');
    } finally {
      claudeFake.set({ promptTokens: PROMPT_TOKENS, cachedTokens: 0, cacheWriteTokens: 0 });
    }
  });
});

describe('bad input', () => {
  it('when a field the relay reads has the wrong type, then each API answers 400 in its own error shape naming the field, and nothing reaches the upstream or is billed', async () => {
    const model = modelName('claude-sonnet-4-5');
    const u = await userWithToken(s);
    await createChannel(s, { type: 14, baseUrl: claudeFake.url, key: 'up-claude', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const before = claudeFake.requests.length;
    const post = async (path: string, headers: Record<string, string>, body: unknown) => {
      const res = await fetch(`${s.stack.gatewayUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    const bearer = { authorization: `Bearer ${u.key}` };
    // An object where a message's content belongs (it went upstream before, or was turned into "[object Object]").
    expect(
      await post('/v1/chat/completions', bearer, { model, messages: [{ role: 'user', content: { $gt: 1 } }] }),
    ).toEqual({
      status: 400,
      body: {
        error: {
          message: '字段 messages[0].content 的类型无效，应为 string 或 array',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_field',
        },
      },
    });
    expect(
      await post('/v1/responses', bearer, {
        model,
        input: [{ role: 'user', content: [{ type: 'input_text', text: 7 }] }],
      }),
    ).toMatchObject({
      status: 400,
      body: {
        error: { message: '字段 input[0].content[0].text 的类型无效，应为 string', type: 'invalid_request_error' },
      },
    });
    expect(
      await post(
        '/v1/messages',
        { 'x-api-key': u.key },
        { model, max_tokens: 10, system: [{ type: 'text', text: {} }], messages: [{ role: 'user', content: 'hi' }] },
      ),
    ).toEqual({
      status: 400,
      body: {
        type: 'error',
        error: { type: 'invalid_request_error', message: '字段 system[0].text 的类型无效，应为 string' },
      },
    });
    expect(
      await post(
        `/v1beta/models/${model}:generateContent`,
        { 'x-goog-api-key': u.key },
        {
          contents: [{ role: 'user', parts: [{ text: 5 }] }],
        },
      ),
    ).toEqual({
      status: 400,
      body: {
        error: {
          code: 400,
          message: '字段 contents[0].parts[0].text 的类型无效，应为 string',
          status: 'INVALID_ARGUMENT',
        },
      },
    });
    // The same requests with the right types are served (the channel works).
    const ok = await post(
      '/v1/messages',
      { 'x-api-key': u.key },
      {
        model,
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
      },
    );
    expect(ok.status).toBe(200);
    expect(claudeFake.requests.length).toBe(before + 1);
    // Once the served request is logged, it is the user's only row: the refusals left none and cost nothing.
    const logs = await eventually(
      () => s.logs.queryLogs({ filter: { userId: u.userId }, page: { page: 1, pageSize: 10 } }),
      (r) => r.items.length > 0,
    );
    expect(logs.items.map((l) => l.type)).toEqual([2]);
    expect(await usedQuota(u.userId)).toBe(logs.items[0]?.quota);
  });
});
