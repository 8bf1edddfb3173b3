/**
 * End to end with the official SDKs as clients: OpenAI, Anthropic and Google GenAI against the
 * relay (through the gateway, as deployed locally), each stream and not, on channels served by
 * fake providers. Checks the answer, the wallet charge by the formula and the log entry.
 */

import { createKafka, createLogger } from '@aigw/common';
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
import { GoogleGenAI } from '@google/genai';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let s: RelayStack;
let openaiFake: FakeProvider;
let claudeFake: FakeProvider;
let geminiFake: FakeProvider;
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
  geminiFake = await startFakeProvider({ kind: 'gemini', key: 'up-gemini', reply: REPLY, promptTokens: PROMPT_TOKENS });
});
afterAll(async () => {
  await s?.stop();
  await Promise.all([openaiFake?.close(), claudeFake?.close(), geminiFake?.close()]);
});

/** quota = (prompt + completion x completion ratio) x model ratio x group ratio (default group 1). */
const quotaOf = (prompt: number, completion: number, modelRatio: number, completionRatio: number) =>
  Math.max(1, Math.round((prompt + completion * completionRatio) * modelRatio));

async function usedQuota(userId: number): Promise<number> {
  return (await s.wallet.getWallet({ userId })).wallet?.usedQuota ?? 0;
}

async function expectCharged(userId: number, expected: number): Promise<void> {
  const used = await eventually(
    () => usedQuota(userId),
    (v) => v >= expected,
    10_000,
  );
  expect(used).toBe(expected);
}

async function expectLogs(userId: number, model: string, count: number, fields: Record<string, unknown>) {
  const res = await eventually(
    () => s.logs.queryLogs({ filter: { userId, modelName: model, type: 2 }, page: { page: 1, pageSize: 10 } }),
    (r) => r.items.length >= count,
    10_000,
  );
  expect(res.items).toHaveLength(count);
  for (const log of res.items) expect(log).toMatchObject(fields);
  return res.items;
}

describe('relay with the official SDKs', () => {
  it('when the OpenAI SDK chats (whole and streamed), then the answer arrives, the wallet is charged by the formula and the log shows it', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    const channelId = await createChannel(s, { type: 1, baseUrl: openaiFake.url, key: 'up-openai', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1` });

    const whole = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Say something' }],
    });
    expect(whole.choices[0]?.message.content).toBe(REPLY);
    const each = quotaOf(PROMPT_TOKENS, 5, 0.075, 4);
    await expectCharged(u.userId, each);

    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Say something' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(REPLY);
    await expectCharged(u.userId, 2 * each);

    const res = await eventually(
      () =>
        s.logs.queryLogs({ filter: { userId: u.userId, modelName: model, type: 2 }, page: { page: 1, pageSize: 10 } }),
      (r) => r.items.length === 2,
      10_000,
    );
    expect(res.items).toHaveLength(2);
    const streamed = res.items.find((l) => l.isStream);
    expect(streamed).toMatchObject({
      userId: u.userId,
      username: u.username,
      tokenName: 'test-token',
      channel: channelId,
      promptTokens: PROMPT_TOKENS,
      completionTokens: 5,
      quota: each,
    });
    const other = JSON.parse(streamed?.other ?? '{}');
    expect(other.model_ratio).toBe(0.075);
    expect(other.completion_ratio).toBe(4);
    expect(other.group_ratio).toBe(1);
    expect(other.admin_info.use_channel).toEqual([channelId]);
    expect(typeof other.frt).toBe('number');
  });

  it('when the Anthropic SDK sends messages (whole and streamed) to a Claude channel, then it gets Claude answers and is charged', async () => {
    const model = modelName('claude-3-5-sonnet');
    const u = await userWithToken(s);
    await createChannel(s, { type: 14, baseUrl: claudeFake.url, key: 'up-claude', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const client = new Anthropic({ apiKey: u.key, baseURL: s.stack.gatewayUrl });

    const msg = await client.messages.create({
      model,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(msg.content[0]).toMatchObject({ type: 'text', text: REPLY });
    expect(msg.usage).toMatchObject({ input_tokens: PROMPT_TOKENS, output_tokens: 5 });
    const each = quotaOf(PROMPT_TOKENS, 5, 1.5, 5);
    await expectCharged(u.userId, each);

    const stream = client.messages.stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Hello' }] });
    let text = '';
    stream.on('text', (t) => {
      text += t;
    });
    const final = await stream.finalMessage();
    expect(text).toBe(REPLY);
    expect(final.usage.output_tokens).toBe(5);
    await expectCharged(u.userId, 2 * each);
    const logs = await expectLogs(u.userId, model, 2, {
      promptTokens: PROMPT_TOKENS,
      completionTokens: 5,
      quota: each,
    });
    expect(logs.map((l) => l.isStream).sort()).toEqual([false, true]);
  });

  it('when providers report prompt-cache reads and writes, then those tokens are charged at the cache ratios and logged', async () => {
    // Own fakes: the cache fields change what every later request of a shared fake would report.
    const oaCache = await startFakeProvider({
      kind: 'openai',
      key: 'up-oa-cache',
      reply: REPLY,
      promptTokens: 1000,
      cachedTokens: 800,
    });
    const clCache = await startFakeProvider({
      kind: 'anthropic',
      key: 'up-cl-cache',
      reply: REPLY,
      promptTokens: 3600,
      cachedTokens: 3000,
      cacheWriteTokens: 500,
    });
    try {
      // OpenAI: cached input at half the input price (gpt-4o family rule of the billing service).
      const mini = modelName('gpt-4o-mini');
      const u = await userWithToken(s);
      await createChannel(s, { type: 1, baseUrl: oaCache.url, key: 'up-oa-cache', models: mini });
      await routable(s.stack.relayUrl, u.key, mini);
      const openai = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1` });
      const whole = await openai.chat.completions.create({ model: mini, messages: [{ role: 'user', content: 'Hi' }] });
      expect(whole.usage?.prompt_tokens_details?.cached_tokens).toBe(800);
      const stream = await openai.chat.completions.create({
        model: mini,
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
      });
      for await (const _ of stream);
      const oaEach = Math.round((200 + 800 * 0.5 + 5 * 4) * 0.075);
      await expectCharged(u.userId, 2 * oaEach);
      const oaLogs = await expectLogs(u.userId, mini, 2, { promptTokens: 1000, quota: oaEach });
      for (const l of oaLogs) expect(JSON.parse(l.other)).toMatchObject({ cache_tokens: 800, cache_ratio: 0.5 });

      // Claude: reads at 0.1, writes at 1.25 of the input price; native (whole, stream) and
      // through the OpenAI SDK (translated stream).
      const sonnet = modelName('claude-3-5-sonnet');
      const v = await userWithToken(s);
      await createChannel(s, { type: 14, baseUrl: clCache.url, key: 'up-cl-cache', models: sonnet });
      await routable(s.stack.relayUrl, v.key, sonnet);
      const anthropic = new Anthropic({ apiKey: v.key, baseURL: s.stack.gatewayUrl });
      const msg = await anthropic.messages.create({
        model: sonnet,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Hello' }],
      });
      expect(msg.usage).toMatchObject({
        input_tokens: 100,
        cache_read_input_tokens: 3000,
        cache_creation_input_tokens: 500,
      });
      await anthropic.messages
        .stream({ model: sonnet, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] })
        .finalMessage();
      const translated = await new OpenAI({
        apiKey: v.key,
        baseURL: `${s.stack.gatewayUrl}/v1`,
      }).chat.completions.create({
        model: sonnet,
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
      });
      for await (const _ of translated);
      const clEach = Math.round((100 + 3000 * 0.1 + 500 * 1.25 + 5 * 5) * 1.5);
      await expectCharged(v.userId, 3 * clEach);
      const clLogs = await expectLogs(v.userId, sonnet, 3, { promptTokens: 3600, completionTokens: 5, quota: clEach });
      for (const l of clLogs)
        expect(JSON.parse(l.other)).toMatchObject({
          cache_tokens: 3000,
          cache_ratio: 0.1,
          cache_creation_tokens: 500,
          cache_creation_ratio: 1.25,
        });
    } finally {
      await Promise.all([oaCache.close(), clCache.close()]);
    }
  });

  it('when gpt-image-1 reports image input tokens, then they are charged at the image ratio and logged', async () => {
    const fake = await startFakeProvider({
      kind: 'openai',
      key: 'up-img',
      imageUsage: { textTokens: 40, imageTokens: 200, outputTokens: 4160 },
    });
    try {
      const model = modelName('gpt-image-1');
      const u = await userWithToken(s);
      await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-img', models: model });
      await routable(s.stack.relayUrl, u.key, model);
      const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1` });
      const res = await client.images.generate({ model, prompt: 'a lighthouse at dawn' });
      expect(res.data?.[0]?.url).toBe('https://example.invalid/image.png');
      // (40 text + 200 image x 2 + 4,160 output x 8) x 2.5 (gpt-image-1's defaults).
      const quota = Math.round((40 + 200 * 2 + 4160 * 8) * 2.5);
      await expectCharged(u.userId, quota);
      const [log] = await expectLogs(u.userId, model, 1, { promptTokens: 240, completionTokens: 4160, quota });
      expect(JSON.parse(log?.other ?? '{}')).toMatchObject({ image_tokens: 200, image_ratio: 2 });
    } finally {
      await fake.close();
    }
  });

  it('when the OpenAI SDK edits two images with gpt-image-1 (multipart), then both files reach the upstream byte for byte, n images come back, and usage is charged once', async () => {
    const fake = await startFakeProvider({
      kind: 'openai',
      key: 'up-edit',
      imageUsage: { textTokens: 30, imageTokens: 500, outputTokens: 2080 },
    });
    try {
      const model = modelName('gpt-image-1');
      const u = await userWithToken(s);
      await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-edit', models: model });
      await routable(s.stack.relayUrl, u.key, model);
      const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1` });
      // Binary content (a PNG signature, bytes above 0x7f) must arrive unchanged.
      const first = Buffer.from('89504e470d0a1a0a00000001ff00', 'hex');
      const second = Buffer.from('89504e470d0a1a0a00000002fe01', 'hex');
      const res = await client.images.edit({
        model,
        prompt: 'put both in one basket',
        n: 2,
        image: [
          await toFile(first, 'a.png', { type: 'image/png' }),
          await toFile(second, 'b.png', { type: 'image/png' }),
        ],
      });
      expect(res.data).toHaveLength(2);
      expect(res.data?.[0]?.b64_json).toBe(Buffer.from('fake-png').toString('base64'));
      const sent = fake.requests.filter((r) => r.path === '/v1/images/edits');
      expect(sent).toHaveLength(1);
      const form = await new Response(sent[0]?.bytes, {
        headers: { 'content-type': String(sent[0]?.headers['content-type']) },
      }).formData();
      expect([form.get('model'), form.get('prompt'), form.get('n')]).toEqual([model, 'put both in one basket', '2']);
      const files = form.getAll('image[]') as File[];
      expect(files.map((f) => f.name)).toEqual(['a.png', 'b.png']);
      expect(Buffer.from(await (files[0] as File).arrayBuffer())).toEqual(first);
      expect(Buffer.from(await (files[1] as File).arrayBuffer())).toEqual(second);
      // (30 text + 500 image x 2 + 2,080 output x 8) x 2.5 (gpt-image-1's defaults).
      const quota = Math.round((30 + 500 * 2 + 2080 * 8) * 2.5);
      await expectCharged(u.userId, quota);
      await expectLogs(u.userId, model, 1, { promptTokens: 530, completionTokens: 2080, quota });
    } finally {
      await fake.close();
    }
  });

  it('when the OpenAI SDK asks for variations of an image (multipart), then the file reaches the upstream and a per-call price is charged per image made', async () => {
    const fake = await startFakeProvider({ kind: 'openai', key: 'up-var' });
    try {
      const model = modelName('dall-e-2');
      // 0.02 $ per image x 500,000.
      await setOption(s, 'ModelPrice', JSON.stringify({ [model]: 0.02 }));
      const u = await userWithToken(s);
      await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-var', models: model });
      await routable(s.stack.relayUrl, u.key, model);
      const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1` });
      const png = Buffer.from('89504e470d0a1a0a000000ff80', 'hex');
      // Until the relay has the new price the model is refused as unpriced (nothing sent upstream).
      const res = await eventually(
        async () =>
          client.images
            .createVariation({ model, n: 3, image: await toFile(png, 'cat.png', { type: 'image/png' }) })
            .catch((err: Error) => err),
        (r) => !(r instanceof Error && r.message.includes('倍率或价格未配置')),
      );
      if (res instanceof Error) throw res;
      expect(res.data).toHaveLength(3);
      const sent = fake.requests.filter((r) => r.path === '/v1/images/variations');
      expect(sent).toHaveLength(1);
      const form = await new Response(sent[0]?.bytes, {
        headers: { 'content-type': String(sent[0]?.headers['content-type']) },
      }).formData();
      expect([form.get('model'), form.get('n')]).toEqual([model, '3']);
      expect(Buffer.from(await (form.get('image') as File).arrayBuffer())).toEqual(png);
      await expectCharged(u.userId, 3 * 10_000);
      await expectLogs(u.userId, model, 1, { quota: 3 * 10_000 });
    } finally {
      await setOption(s, 'ModelPrice', '{}');
      await fake.close();
    }
  });

  it('when the Anthropic SDK calls an OpenAI channel, then the relay translates both ways, and lists the models in its shape', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: openaiFake.url, key: 'up-openai', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const client = new Anthropic({ apiKey: u.key, baseURL: s.stack.gatewayUrl });
    const msg = await client.messages.create({
      model,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(msg.content[0]).toMatchObject({ type: 'text', text: REPLY });
    const stream = client.messages.stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Hello' }] });
    let text = '';
    stream.on('text', (t) => {
      text += t;
    });
    await stream.finalMessage();
    expect(text).toBe(REPLY);

    // The key's models in Anthropic's list shape (x-api-key and anthropic-version, as the SDK sends).
    const listed: string[] = [];
    for await (const m of client.models.list()) {
      expect(m).toMatchObject({ type: 'model', display_name: m.id });
      listed.push(m.id);
    }
    expect(listed).toContain(model);
    expect(await client.models.retrieve(model)).toMatchObject({ type: 'model', id: model });
    const missing = await client.models.retrieve(modelName('not-mine')).catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    // The same key's OpenAI-style list holds the same models.
    const openaiList = (await (
      await fetch(`${s.stack.gatewayUrl}/v1/models`, { headers: { authorization: `Bearer ${u.key}` } })
    ).json()) as { object: string; data: { id: string }[] };
    expect(openaiList.object).toBe('list');
    expect(openaiList.data.map((m) => m.id).sort()).toEqual([...listed].sort());
  });

  it("when the Google GenAI SDK counts tokens and lists models, then a Gemini channel counts them itself, another channel's model is estimated, nothing is billed, and the key's models are listed", async () => {
    const model = modelName('gemini-2.5-flash');
    const other = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    await createChannel(s, { type: 24, baseUrl: geminiFake.url, key: 'up-gemini', models: model });
    await createChannel(s, { type: 1, baseUrl: openaiFake.url, key: 'up-openai', models: other });
    await routable(s.stack.relayUrl, u.key, model);
    await routable(s.stack.relayUrl, u.key, other);
    const ai = new GoogleGenAI({ apiKey: u.key, httpOptions: { baseUrl: s.stack.gatewayUrl } });
    const openaiBefore = openaiFake.requests.length;

    const native = await ai.models.countTokens({ model, contents: 'How many tokens is this?' });
    expect(native.totalTokens).toBe(PROMPT_TOKENS);
    const sent = geminiFake.requests.at(-1);
    expect(sent?.path).toBe(`/v1beta/models/${model}:countTokens`);
    expect(sent?.body).toMatchObject({ contents: [{ parts: [{ text: 'How many tokens is this?' }] }] });

    // No Gemini channel for this model: the relay's tokenizer counts, the upstream is not asked.
    const estimated = await ai.models.countTokens({ model: other, contents: 'How many tokens is this?' });
    expect(estimated.totalTokens).toBeGreaterThan(3);
    expect(estimated.totalTokens).toBeLessThan(30);
    expect(openaiFake.requests.length).toBe(openaiBefore);

    // The key's models as Gemini lists them (the SDK pages through them), one by name.
    const listed: string[] = [];
    for await (const m of await ai.models.list({ config: { pageSize: 1 } })) listed.push(String(m.name));
    expect(listed).toEqual(expect.arrayContaining([`models/${other}`, `models/${model}`]));
    // Page by page (one model each) the same set as the OpenAI-style list of the key.
    const openaiList = (await (
      await fetch(`${s.stack.gatewayUrl}/v1/models`, { headers: { authorization: `Bearer ${u.key}` } })
    ).json()) as { data: { id: string }[] };
    expect(listed.sort()).toEqual(openaiList.data.map((m) => `models/${m.id}`).sort());
    expect(await ai.models.get({ model })).toMatchObject({ name: `models/${model}`, displayName: model });
    const missing = await ai.models.get({ model: modelName('not-mine') }).catch((err: unknown) => err);
    expect(String((missing as Error).message)).toContain('is not found');

    const none = await ai.models
      .countTokens({ model: modelName('no-channel'), contents: 'x' })
      .catch((err: unknown) => err);
    expect(String((none as Error).message)).toContain('无可用渠道');
    // Counting is free.
    await new Promise((r) => setTimeout(r, 500));
    expect(await usedQuota(u.userId)).toBe(0);
  });

  it('when the Google GenAI SDK generates content (whole and streamed) on a Gemini channel, then it gets Gemini answers and is charged', async () => {
    const model = modelName('gemini-2.5-pro');
    const u = await userWithToken(s);
    await createChannel(s, { type: 24, baseUrl: geminiFake.url, key: 'up-gemini', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const ai = new GoogleGenAI({ apiKey: u.key, httpOptions: { baseUrl: s.stack.gatewayUrl } });

    const res = await ai.models.generateContent({ model, contents: 'Hello' });
    expect(res.text).toBe(REPLY);
    const each = quotaOf(PROMPT_TOKENS, 5, 0.625, 8);
    await expectCharged(u.userId, each);

    const stream = await ai.models.generateContentStream({ model, contents: 'Hello' });
    let text = '';
    for await (const chunk of stream) text += chunk.text ?? '';
    expect(text).toBe(REPLY);
    await expectCharged(u.userId, 2 * each);
  });

  it('when the Google GenAI SDK calls an OpenAI channel, then the relay translates both ways', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: openaiFake.url, key: 'up-openai', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const ai = new GoogleGenAI({ apiKey: u.key, httpOptions: { baseUrl: s.stack.gatewayUrl } });
    const res = await ai.models.generateContent({ model, contents: 'Hello' });
    expect(res.text).toBe(REPLY);
    const stream = await ai.models.generateContentStream({ model, contents: 'Hello' });
    let text = '';
    for await (const chunk of stream) text += chunk.text ?? '';
    expect(text).toBe(REPLY);
  });

  it('when the OpenAI SDK uses embeddings and lists models, then only the token’s models are listed', async () => {
    const model = modelName('text-embedding-3-small');
    const other = modelName('gpt-4o-mini');
    const u = await userWithToken(s, { token: { modelLimitsEnabled: true, modelLimits: model } });
    await createChannel(s, { type: 1, baseUrl: openaiFake.url, key: 'up-openai', models: `${model},${other}` });
    await routable(s.stack.relayUrl, u.key, model);
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.gatewayUrl}/v1` });
    const list = await client.models.list();
    const ids = list.data.map((m) => m.id);
    expect(ids).toContain(model);
    expect(ids).not.toContain(other);
    const emb = await client.embeddings.create({ model, input: ['a', 'b'] });
    expect(emb.data).toHaveLength(2);
    const denied = await client.chat.completions
      .create({ model: other, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(denied.status).toBe(403);
  });

  it('when several stacks share the Kafka cluster, then the usage consumers join groups of their own prefix', async () => {
    // A shared, unprefixed group made stacks steal each other's partitions (charges went missing).
    const prefix = s.stack.env.KAFKA_TOPIC_PREFIX as string;
    const admin = createKafka(
      (s.stack.env.KAFKA_BROKERS as string).split(','),
      'groups-test',
      createLogger('t', 'silent'),
    ).admin();
    await admin.connect();
    try {
      const groups = (await admin.listGroups()).groups.map((g) => g.groupId);
      expect(groups).toContain(`${prefix}billing.settle`);
      expect(groups).toContain(`${prefix}logs.events`);
    } finally {
      await admin.disconnect();
    }
  });
});
