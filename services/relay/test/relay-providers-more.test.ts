/**
 * More providers end to end on the running stack, each against a fake speaking its wire format:
 * MiniMax (35, chat completion v2 with `base_resp` errors inside HTTP 200), the AI Proxy
 * knowledge base (21, `/api/library/ask` with the library id from `other`) and PaLM 2 (11,
 * generateMessage with the key as a query parameter; no streaming upstream, no token counts) and
 * iFlytek Spark (18, a WebSocket per call to an HMAC-SHA256-signed URL, frames turned into SSE)
 * and Coze (49, chat v3 with the bot from `other`, SSE events; whole answers collected from it),
 * and advanced custom routes (58) whose converters send calls upstream in another protocol.
 * Whole and streamed answers, errors mapped, usage billed (log rows and wallet checked).
 */
import { eventually } from '@aigw/testkit';
import { type FakeCoze, type FakeProvider, startFakeCoze, startFakeProvider } from '@aigw/testkit/fakes';
import {
  createChannel,
  modelName,
  type RelayStack,
  routable,
  setOption,
  startRelayStack,
  userWithToken,
} from '@aigw/testkit/harness';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBilled } from './expect-billed.ts';
import { type FakeAiproxy, startFakeAiproxy } from './fakes/fake-aiproxy.ts';
import { type FakeMinimax, startFakeMinimax } from './fakes/fake-minimax.ts';
import { type FakePalm, startFakePalm } from './fakes/fake-palm.ts';
import { type FakeSpark, startFakeSpark } from './fakes/fake-spark.ts';

let s: RelayStack;
let minimax: FakeMinimax;
let aiproxy: FakeAiproxy;
let palm: FakePalm;
let spark: FakeSpark;
let coze: FakeCoze;
// Advanced custom's upstreams, each with its own prompt size: the bill shows whose usage it took.
let openai: FakeProvider;
let anthropic: FakeProvider;
let gemini: FakeProvider;

beforeAll(async () => {
  s = await startRelayStack();
  minimax = await startFakeMinimax({ apiKey: 'mm-api-key' });
  aiproxy = await startFakeAiproxy({ apiKey: 'ap-key', libraryId: 'lib-42' });
  palm = await startFakePalm({ apiKey: 'AIza-palm-key' });
  spark = await startFakeSpark({ credentials: { 'spark-api-key': { appId: 'a1b2c3', secret: 'spark-secret' } } });
  coze = await startFakeCoze({ token: 'pat_coze', botId: '7342866812345' });
  const reply = 'Hello there friend';
  openai = await startFakeProvider({ kind: 'openai', key: 'up-58', reply, promptTokens: 11 });
  anthropic = await startFakeProvider({ kind: 'anthropic', key: 'up-58', reply, promptTokens: 13 });
  gemini = await startFakeProvider({ kind: 'gemini', key: 'up-58', reply, promptTokens: 17 });
  await setOption(s, 'RetryTimes', '0');
});
afterAll(async () => {
  await s?.stop();
  await minimax?.close();
  await aiproxy?.close();
  await palm?.close();
  await spark?.close();
  await coze?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

async function channelFor(type: number, key: string, upstream: string, baseUrl: string, other = '') {
  const model = modelName('gpt-4o-mini');
  const u = await userWithToken(s);
  await createChannel(s, {
    type,
    baseUrl,
    key,
    models: model,
    autoBan: 0,
    other,
    modelMapping: JSON.stringify({ [model]: upstream }),
  });
  await routable(s.stack.relayUrl, u.key, model);
  return { model, u, client: new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 }) };
}

async function streamed(client: OpenAI, model: string, content: string) {
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage: OpenAI.CompletionUsage | null | undefined;
  let finish: string | null | undefined;
  for await (const c of stream) {
    text += c.choices[0]?.delta?.content ?? '';
    finish = c.choices[0]?.finish_reason ?? finish;
    if (c.usage) usage = c.usage;
  }
  return { text, usage, finish };
}

async function unbilled(userId: number) {
  expect((await s.wallet.getWallet({ userId })).wallet?.usedQuota ?? 0).toBe(0);
}

describe('MiniMax (chat completion v2)', () => {
  it('when a client chats (whole and streamed), then the answers come in OpenAI format, the text once, and are billed', async () => {
    const { model, u, client } = await channelFor(35, 'mm-api-key', 'abab6.5s-chat', minimax.url);
    const whole = await client.chat.completions.create({
      model,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: '你好' },
      ],
    });
    expect(whole.choices[0]?.message.content).toBe('你好，我是 MiniMax');
    expect(whole.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 6 });
    const st = await streamed(client, model, '你好');
    // The closing chunk repeats the whole text as `message`: the client must not get it twice.
    expect(st.text).toBe('你好，我是 MiniMax');
    expect(st.finish).toBe('stop');
    expect(st.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 6 });
    const sent = minimax.requests.slice(-2);
    expect(sent.map((r) => [r.path, r.body.model, r.body.stream])).toEqual([
      ['/v1/text/chatcompletion_v2', 'abab6.5s-chat', undefined],
      ['/v1/text/chatcompletion_v2', 'abab6.5s-chat', true],
    ]);
    expect(sent[0]?.body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: '你好' },
    ]);
    expect(sent[1]?.body.stream_options).toBeUndefined();
    const logs = await expectBilled(s, u.userId, model, 2);
    expect(logs.map((l) => [l.promptTokens, l.completionTokens])).toEqual([
      [11, 6],
      [11, 6],
    ]);
  });

  it('when the key is wrong, then MiniMax answers 1004 inside HTTP 200 and the client gets 401, unbilled', async () => {
    const { model, u, client } = await channelFor(35, 'wrong-key', 'abab6.5s-chat', minimax.url);
    const err = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(err.status).toBe(401);
    expect(err.message).toContain('1004: login fail');
    const streamErr = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true })
      .catch((e) => e);
    expect(streamErr.status).toBe(401);
    await unbilled(u.userId);
  });

  it('when MiniMax answers 1002 (rate limit) or 1008 (balance), then the client gets 429 or 402', async () => {
    const { model, u, client } = await channelFor(35, 'mm-api-key', 'abab6.5s-chat', minimax.url);
    try {
      minimax.set({ errorCode: 1002, errorMessage: 'rate limit exceeded(RPM)' });
      const err = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true })
        .catch((e) => e);
      expect(err.status).toBe(429);
      expect(err.message).toContain('rate limit exceeded(RPM)');
      minimax.set({ errorCode: 1008, errorMessage: 'insufficient balance' });
      const err2 = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e) => e);
      expect(err2.status).toBe(402);
      expect(err2.message).toContain('insufficient balance');
    } finally {
      minimax.set({ errorCode: 0 });
    }
    await unbilled(u.userId);
  });
});

describe('AI Proxy knowledge base (type 21)', () => {
  const answer = '根据知识库，答案是 42\n\n参考文档：\n- [手册](https://kb.example/manual)';

  it('when a client chats (whole and streamed), then the library answers with its documents and the estimated usage is billed', async () => {
    const { model, u, client } = await channelFor(21, 'ap-key', 'gpt-3.5-turbo', aiproxy.url, 'lib-42');
    const whole = await client.chat.completions.create({
      model,
      messages: [
        { role: 'user', content: '第一问' },
        { role: 'assistant', content: '第一答' },
        { role: 'user', content: '生命的意义是什么？' },
      ],
    });
    expect(whole.choices[0]?.message.content).toBe(answer);
    expect(whole.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(whole.usage?.completion_tokens).toBeGreaterThan(0);
    const st = await streamed(client, model, '生命的意义是什么？');
    expect(st.text).toBe(answer);
    expect(st.finish).toBe('stop');
    expect(st.usage?.completion_tokens).toBeGreaterThan(0);
    const sent = aiproxy.requests.slice(-2);
    expect(sent.map((r) => r.body)).toEqual([
      { model: 'gpt-3.5-turbo', query: '生命的意义是什么？', libraryId: 'lib-42', stream: false },
      { model: 'gpt-3.5-turbo', query: '生命的意义是什么？', libraryId: 'lib-42', stream: true },
    ]);
    const logs = await expectBilled(s, u.userId, model, 2);
    for (const l of logs) expect(l.completionTokens).toBeGreaterThan(0);
  });

  it('when the key is wrong, then AI Proxy answers success:false inside HTTP 200 and the client gets 401, unbilled', async () => {
    const { model, u, client } = await channelFor(21, 'bad-key', 'gpt-3.5-turbo', aiproxy.url, 'lib-42');
    const err = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(err.status).toBe(401);
    expect(err.message).toContain('Invalid Api-Key');
    const streamErr = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true })
      .catch((e) => e);
    expect(streamErr.status).toBe(401);
    await unbilled(u.userId);
  });

  it('when the channel has no library id, then nothing is sent upstream and the client gets a clear error', async () => {
    const { model, u, client } = await channelFor(21, 'ap-key', 'gpt-3.5-turbo', aiproxy.url, '');
    const before = aiproxy.requests.length;
    const err = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(err.status).toBe(500);
    expect(err.message).toContain('未填写知识库 ID');
    expect(aiproxy.requests.length).toBe(before);
    await unbilled(u.userId);
  });
});

describe('PaLM 2 (type 11)', () => {
  it('when a client chats (whole and streamed), then generateMessage answers in OpenAI format and the estimated usage is billed', async () => {
    const { model, u, client } = await channelFor(11, 'AIza-palm-key', 'chat-bison-001', palm.url);
    const whole = await client.chat.completions.create({
      model,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'hi' },
        { role: 'user', content: 'how are you?' },
      ],
    });
    expect(whole.choices[0]?.message.content).toBe('PaLM says hello');
    expect(whole.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(whole.usage?.completion_tokens).toBeGreaterThan(0);
    // PaLM cannot stream: the client still gets an SSE stream, with the whole answer in it.
    const st = await streamed(client, model, 'hello');
    expect(st.text).toBe('PaLM says hello');
    expect(st.finish).toBe('stop');
    expect(st.usage?.completion_tokens).toBeGreaterThan(0);
    const sent = palm.requests.slice(-2);
    expect(sent.map((r) => [r.model, r.query.key])).toEqual([
      ['chat-bison-001', 'AIza-palm-key'],
      ['chat-bison-001', 'AIza-palm-key'],
    ]);
    expect(sent[0]?.body.prompt).toEqual({
      context: 'be brief',
      messages: [
        { author: '0', content: 'hello' },
        { author: '1', content: 'hi' },
        { author: '0', content: 'how are you?' },
      ],
    });
    const logs = await expectBilled(s, u.userId, model, 2);
    for (const l of logs) expect(l.completionTokens).toBeGreaterThan(0);
  });

  it("when the key is invalid or the quota exhausted, then the client gets Google's status and message, unbilled", async () => {
    const { model, u, client } = await channelFor(11, 'AIza-wrong', 'chat-bison-001', palm.url);
    const err = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.message).toContain('API key not valid');
    const ok = await channelFor(11, 'AIza-palm-key', 'chat-bison-001', palm.url);
    try {
      palm.set({ errorStatus: 429 });
      const e2 = await ok.client.chat.completions
        .create({ model: ok.model, messages: [{ role: 'user', content: 'hi' }], stream: true })
        .catch((e) => e);
      expect(e2.status).toBe(429);
      expect(e2.message).toContain('Resource has been exhausted');
    } finally {
      palm.set({ errorStatus: 0 });
    }
    await unbilled(u.userId);
    await unbilled(ok.u.userId);
  });

  it('when the safety filter blocks the prompt, then the answer is empty with finish_reason content_filter', async () => {
    const { model, client } = await channelFor(11, 'AIza-palm-key', 'chat-bison-001', palm.url);
    try {
      palm.set({ blocked: true });
      const whole = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] });
      expect(whole.choices[0]?.message.content).toBe('');
      expect(whole.choices[0]?.finish_reason).toBe('content_filter');
    } finally {
      palm.set({ blocked: false });
    }
  });
});

describe('iFlytek Spark (type 18, WebSocket)', () => {
  it('when a client chats (whole and streamed), then the signed WebSocket calls are answered in OpenAI format and billed', async () => {
    const { model, u, client } = await channelFor(
      18,
      'a1b2c3|spark-secret|spark-api-key',
      'SparkDesk-v3.5',
      spark.url,
      'v2.1',
    );
    const whole = await client.chat.completions.create({
      model,
      messages: [
        { role: 'system', content: '简短回答' },
        { role: 'user', content: '你是谁' },
      ],
      max_tokens: 100,
    });
    expect(whole.choices[0]?.message.content).toBe('你好，我是讯飞星火');
    expect(whole.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 7 });
    const st = await streamed(client, model, '你是谁');
    expect(st.text).toBe('你好，我是讯飞星火');
    expect(st.finish).toBe('stop');
    expect(st.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 7 });
    const sent = spark.requests.slice(-2);
    // The model names its version (v3.5), ahead of the channel's v2.1.
    expect(sent.map((r) => r.path)).toEqual(['/v3.5/chat', '/v3.5/chat']);
    expect(sent[0]?.frame).toMatchObject({
      header: { app_id: 'a1b2c3' },
      parameter: { chat: { domain: 'generalv3.5', max_tokens: 100 } },
      payload: {
        message: {
          text: [
            { role: 'system', content: '简短回答' },
            { role: 'user', content: '你是谁' },
          ],
        },
      },
    });
    const logs = await expectBilled(s, u.userId, model, 2);
    expect(logs.map((l) => [l.promptTokens, l.completionTokens])).toEqual([
      [9, 7],
      [9, 7],
    ]);
  });

  it("when the model names no version, then the channel's version picks the path and domain", async () => {
    const { model, client } = await channelFor(18, 'a1b2c3|spark-secret|spark-api-key', 'spark-any', spark.url, 'v4.0');
    const whole = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    expect(whole.choices[0]?.message.content).toBe('你好，我是讯飞星火');
    expect(spark.requests.at(-1)?.path).toBe('/v4.0/chat');
    expect(spark.requests.at(-1)?.frame).toMatchObject({ parameter: { chat: { domain: '4.0Ultra' } } });
  });

  it('when a Claude-format client streams, then the WebSocket frames reach it as Claude events with the usage', async () => {
    const { model, u } = await channelFor(18, 'a1b2c3|spark-secret|spark-api-key', 'SparkDesk-v3.5', spark.url);
    const res = await fetch(`${s.stack.relayUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': u.key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model, max_tokens: 50, stream: true, messages: [{ role: 'user', content: '你是谁' }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map(
        (l) =>
          JSON.parse(l.slice(6)) as { type: string; delta?: { text?: string }; usage?: { output_tokens?: number } },
      );
    expect(
      events
        .filter((e) => e.type === 'content_block_delta')
        .map((e) => e.delta?.text)
        .join(''),
    ).toBe('你好，我是讯飞星火');
    expect(events.find((e) => e.type === 'message_delta')?.usage?.output_tokens).toBe(7);
    expect(events.at(-1)?.type).toBe('message_stop');
    const logs = await expectBilled(s, u.userId, model, 1);
    expect([logs[0]?.promptTokens, logs[0]?.completionTokens]).toEqual([9, 7]);
  });

  it('when the APISecret is wrong, then the handshake is refused and the client gets 401, unbilled', async () => {
    const { model, u, client } = await channelFor(18, 'a1b2c3|wrong-secret|spark-api-key', 'SparkDesk-v3.5', spark.url);
    const before = spark.refused.length;
    const err = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(err.status).toBe(401);
    expect(err.message).toContain('HMAC signature cannot be verified');
    const streamErr = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true })
      .catch((e) => e);
    expect(streamErr.status).toBe(401);
    expect(spark.refused.length - before).toBe(2);
    await unbilled(u.userId);
  });

  it('when Spark answers an error frame (11202 QPS, 10013 content review), then the client gets 429 or 400, unbilled', async () => {
    const { model, u, client } = await channelFor(18, 'a1b2c3|spark-secret|spark-api-key', 'SparkDesk-v3.5', spark.url);
    try {
      spark.set({ errorCode: 11202, errorMessage: 'licc failed: QPS over limit' });
      const err = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true })
        .catch((e) => e);
      expect(err.status).toBe(429);
      expect(err.message).toContain('11202: licc failed');
      spark.set({ errorCode: 10013, errorMessage: '输入内容审核不通过' });
      const err2 = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e) => e);
      expect(err2.status).toBe(400);
      expect(err2.message).toContain('输入内容审核不通过');
    } finally {
      spark.set({ errorCode: 0 });
    }
    await unbilled(u.userId);
  });
});

describe('Coze (type 49)', () => {
  it('when a client chats (whole and streamed), then the bot of the channel answers through v3 chat and the usage is billed', async () => {
    const { model, u, client } = await channelFor(49, 'pat_coze', 'coze-bot', coze.url, '7342866812345');
    const whole = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'hi' }],
      user: 'u-7',
    });
    expect(whole.choices[0]?.message.content).toBe('Hello from Coze');
    expect(whole.usage).toMatchObject({ prompt_tokens: 17, completion_tokens: 4 });
    const st = await streamed(client, model, 'hi');
    expect(st.text).toBe('Hello from Coze');
    expect(st.finish).toBe('stop');
    expect(st.usage).toMatchObject({ prompt_tokens: 17, completion_tokens: 4 });
    const sent = coze.requests.slice(-2);
    expect(sent.map((r) => [r.path, r.headers.authorization, r.body.bot_id, r.body.stream, r.body.user_id])).toEqual([
      ['/v3/chat', 'Bearer pat_coze', '7342866812345', true, 'u-7'],
      ['/v3/chat', 'Bearer pat_coze', '7342866812345', true, 'aigw-relay'],
    ]);
    expect(sent[0]?.body.additional_messages).toEqual([
      { role: 'user', type: 'question', content: 'hi', content_type: 'text' },
    ]);
    const logs = await expectBilled(s, u.userId, model, 2);
    expect(logs.map((l) => [l.promptTokens, l.completionTokens])).toEqual([
      [17, 4],
      [17, 4],
    ]);

    // A wrong token: Coze's 4100 inside HTTP 200 reaches the client as 401, unbilled.
    const bad = await channelFor(49, 'pat_wrong', 'coze-bot', coze.url, '7342866812345');
    const err = await bad.client.chat.completions
      .create({ model: bad.model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain(
      'coze error 4100: authentication is invalid',
    );
    await unbilled(bad.u.userId);
  });
});

describe('Advanced custom converters (58)', () => {
  it("when a route has a converter, then the upstream gets the call in the converter's protocol, the client its own format, and the upstream's usage is billed", async () => {
    const m = {
      toClaude: modelName('gpt-4o-mini'),
      fromClaude: modelName('claude-3-5-haiku'),
      toGemini: modelName('gemini-2.0-flash'),
      fromResponses: modelName('gpt-4o'),
      mismatched: modelName('claude-3-5-sonnet'),
    };
    const chat = '/v1/chat/completions';
    const settings = {
      advanced_routes: [
        {
          incoming_path: chat,
          upstream_path: `${anthropic.url}/v1/messages`,
          models: [m.toClaude],
          converter: 'openai_chat_completions_to_anthropic_messages',
          auth: { type: 'header', name: 'x-api-key', value: '{api_key}' },
        },
        {
          incoming_path: '/v1/messages',
          upstream_path: chat,
          models: [m.fromClaude],
          converter: 'anthropic_messages_to_openai_chat_completions',
        },
        {
          incoming_path: chat,
          upstream_path: `${gemini.url}/v1beta/models/{model}:generateContent`,
          models: [m.toGemini],
          converter: 'openai_chat_completions_to_gemini_generate_content',
          auth: { type: 'query', name: 'key', value: '{api_key}' },
        },
        {
          incoming_path: '/v1/responses',
          upstream_path: chat,
          models: [m.fromResponses],
          converter: 'openai_responses_to_openai_chat_completions',
        },
        {
          incoming_path: '/v1/messages',
          upstream_path: `${anthropic.url}/v1/messages`,
          models: [m.mismatched],
          converter: 'openai_chat_completions_to_anthropic_messages',
        },
      ],
    };
    await createChannel(s, {
      type: 58,
      baseUrl: openai.url,
      key: 'up-58',
      models: Object.values(m).join(','),
      autoBan: 0,
      settings: JSON.stringify(settings),
    });
    // A user per call: each wallet shows one charge.
    const [toClaude, fromClaude, toGemini, fromResponses, mismatched] = await Promise.all(
      Object.keys(m).map(() => userWithToken(s)),
    );
    const users = { toClaude, fromClaude, toGemini, fromResponses, mismatched } as Record<
      keyof typeof m,
      Awaited<ReturnType<typeof userWithToken>>
    >;
    await routable(s.stack.relayUrl, users.toClaude.key, m.mismatched);
    const post = (path: string, key: string, body: unknown) =>
      fetch(`${s.stack.relayUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const billed = async (user: { userId: number }, model: string) =>
      (await expectBilled(s, user.userId, model, 1)).map((l) => [l.promptTokens, l.completionTokens]);

    // OpenAI chat, streamed, to Anthropic's Messages.
    const sdk = new OpenAI({ apiKey: users.toClaude.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
    const st = await streamed(sdk, m.toClaude, 'hi');
    expect(st).toMatchObject({ text: 'Hello there friend', finish: 'stop' });
    expect(st.usage).toMatchObject({ prompt_tokens: 13, completion_tokens: 3 });
    const a = anthropic.requests.at(-1);
    expect(a?.path).toBe('/v1/messages');
    expect(a?.headers['x-api-key']).toBe('up-58');
    expect(a?.headers['anthropic-version']).toBe('2023-06-01');
    expect(a?.body).toMatchObject({
      model: m.toClaude,
      stream: true,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    });
    expect((a?.body as { max_tokens?: number }).max_tokens).toBeGreaterThan(0);

    // Anthropic's Messages to OpenAI chat, under the channel's base URL.
    const claude = await post('/v1/messages', users.fromClaude.key, {
      model: m.fromClaude,
      max_tokens: 64,
      system: 'be brief',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(claude.status).toBe(200);
    expect(await claude.json()).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'Hello there friend' }],
      usage: { input_tokens: 11, output_tokens: 3 },
    });
    const c = openai.requests.at(-1);
    expect(c?.path).toBe('/v1/chat/completions');
    expect(c?.headers.authorization).toBe('Bearer up-58');
    expect(c?.body).toMatchObject({
      model: m.fromClaude,
      max_tokens: 64,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ],
    });

    // OpenAI chat to Gemini's generateContent, the key as Gemini's query parameter.
    const gem = await post(chat, users.toGemini.key, {
      model: m.toGemini,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(gem.status).toBe(200);
    expect(await gem.json()).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { role: 'assistant', content: 'Hello there friend' } }],
      usage: { prompt_tokens: 17, completion_tokens: 3 },
    });
    const g = gemini.requests.at(-1);
    expect(g?.path).toBe(`/v1beta/models/${m.toGemini}:generateContent?key=up-58`);
    expect(g?.body).toMatchObject({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });

    // OpenAI's Responses to OpenAI chat.
    const resp = await post('/v1/responses', users.fromResponses.key, { model: m.fromResponses, input: 'hi' });
    expect(resp.status).toBe(200);
    expect(await resp.json()).toMatchObject({
      object: 'response',
      status: 'completed',
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hello there friend' }] }],
      usage: { input_tokens: 11, output_tokens: 3 },
    });
    const r = openai.requests.at(-1);
    expect(r?.path).toBe('/v1/chat/completions');
    expect(r?.body).toMatchObject({ model: m.fromResponses, messages: [{ role: 'user', content: 'hi' }] });

    // A chat converter on a Claude call: 400 in Anthropic's format, no upstream call, nothing billed.
    const sent = anthropic.requests.length + openai.requests.length + gemini.requests.length;
    const bad = await post('/v1/messages', users.mismatched.key, {
      model: m.mismatched,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      type: 'error',
      error: {
        message: expect.stringContaining(
          'converter "openai_chat_completions_to_anthropic_messages" does not support Anthropic Messages requests',
        ),
      },
    });
    expect(anthropic.requests.length + openai.requests.length + gemini.requests.length).toBe(sent);

    // Each bill takes the usage its upstream reported (Anthropic 13, Gemini 17, OpenAI 11 prompt tokens).
    expect(
      await Promise.all([
        billed(users.toClaude, m.toClaude),
        billed(users.fromClaude, m.fromClaude),
        billed(users.toGemini, m.toGemini),
        billed(users.fromResponses, m.fromResponses),
      ]),
    ).toEqual([[[13, 3]], [[11, 3]], [[17, 3]], [[11, 3]]]);
    // The refusal's error log row is the marker that the relay is done with it: nothing charged.
    const refused = await eventually(
      () => s.logs.queryLogs({ filter: { userId: users.mismatched.userId, type: 5 }, page: { page: 1, pageSize: 5 } }),
      (r) => r.items.length > 0,
    );
    expect(refused.items[0]?.quota).toBe(0);
    await unbilled(users.mismatched.userId);
  });
});
