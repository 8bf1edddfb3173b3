/**
 * Signed Chinese providers end to end on the running stack, each against a fake that checks the
 * provider's own signature: Tencent Hunyuan (23, TC3-HMAC-SHA256; errors inside HTTP 200) and
 * Baidu ERNIE (15, API Key + Secret Key traded for a cached access token); and Dify (37, its
 * chat-messages API with conversation ids).
 * Whole and streamed answers, errors mapped, usage billed (log rows and wallet checked).
 */
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
import { type FakeBaidu, startFakeBaidu } from './fakes/fake-baidu.ts';
import { type FakeDify, startFakeDify } from './fakes/fake-dify.ts';
import { type FakeHunyuan, startFakeHunyuan } from './fakes/fake-hunyuan.ts';

let s: RelayStack;
let hunyuan: FakeHunyuan;
let baidu: FakeBaidu;
let dify: FakeDify;

beforeAll(async () => {
  s = await startRelayStack();
  hunyuan = await startFakeHunyuan({ credentials: { AKIDrelayfake: 'tc3-secret-key' } });
  baidu = await startFakeBaidu({ apiKey: 'bd-api-key', secretKey: 'bd-secret' });
  dify = await startFakeDify({ apiKey: 'app-dify-key' });
  await setOption(s, 'RetryTimes', '0');
});
afterAll(async () => {
  await s?.stop();
  await hunyuan?.close();
  await baidu?.close();
  await dify?.close();
});

async function channelFor(type: number, key: string, upstream: string, baseUrl: string) {
  const model = modelName('gpt-4o-mini');
  const u = await userWithToken(s);
  await createChannel(s, {
    type,
    baseUrl,
    key,
    models: model,
    autoBan: 0,
    modelMapping: JSON.stringify({ [model]: upstream }),
  });
  await routable(s.stack.relayUrl, u.key, model);
  return { model, u, client: new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 }) };
}

describe('Tencent Hunyuan (TC3-HMAC-SHA256)', () => {
  it('when a client chats (whole and streamed), then the signed calls are answered in OpenAI format and billed', async () => {
    const { model, u, client } = await channelFor(
      23,
      '1250000000|AKIDrelayfake|tc3-secret-key',
      'hunyuan-lite',
      hunyuan.url,
    );
    const whole = await client.chat.completions.create({ model, messages: [{ role: 'user', content: '你好' }] });
    expect(whole.choices[0]?.message.content).toBe('你好 from hunyuan');
    expect(whole.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 3 });
    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: '你好' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('你好 from hunyuan');
    expect(usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 3 });
    const sent = hunyuan.requests.slice(-2);
    expect(sent.map((r) => r.signatureError)).toEqual([undefined, undefined]);
    expect(sent.map((r) => r.body.Model)).toEqual(['hunyuan-lite', 'hunyuan-lite']);
    expect(sent[1]?.body.Messages).toEqual([{ Role: 'user', Content: '你好' }]);
    await expectBilled(s, u.userId, model, 2);
  });

  it('when the SecretKey is wrong, then Tencent refuses the signature and the client gets 401, unbilled', async () => {
    const { model, u, client } = await channelFor(23, '1250000000|AKIDrelayfake|wrong', 'hunyuan-lite', hunyuan.url);
    const err = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(err.status).toBe(401);
    expect(err.message).toContain('AuthFailure.SignatureFailure');
    expect(hunyuan.requests.at(-1)?.signatureError).toBe('AuthFailure.SignatureFailure');
    const streamErr = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true })
      .catch((e) => e);
    expect(streamErr.status).toBe(401);
    expect((await s.wallet.getWallet({ userId: u.userId })).wallet?.usedQuota ?? 0).toBe(0);
  });

  it('when Hunyuan answers LimitExceeded inside HTTP 200, then the client gets 429', async () => {
    const { model, client } = await channelFor(
      23,
      '1250000000|AKIDrelayfake|tc3-secret-key',
      'hunyuan-lite',
      hunyuan.url,
    );
    hunyuan.set({ errorCode: 'LimitExceeded', errorMessage: '超过配额限制' });
    try {
      const err = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e) => e);
      expect(err.status).toBe(429);
      expect(err.message).toContain('超过配额限制');
    } finally {
      hunyuan.set({ errorCode: '' });
    }
  });
});

describe('Baidu ERNIE (access token)', () => {
  it('when a client chats (whole and streamed), then one token serves both calls and they are billed', async () => {
    const before = baidu.tokensIssued;
    const { model, u, client } = await channelFor(15, 'bd-api-key|bd-secret', 'ERNIE-4.0-8K', baidu.url);
    const whole = await client.chat.completions.create({
      model,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: '你好' },
      ],
    });
    expect(whole.choices[0]?.message.content).toBe('文心 says hello');
    expect(whole.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 3 });
    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: '你好' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('文心 says hello');
    expect(usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 3 });
    const sent = baidu.requests.slice(-2);
    expect(sent.map((r) => [r.endpoint, r.tokenOk])).toEqual([
      ['completions_pro', true],
      ['completions_pro', true],
    ]);
    expect(sent[0]?.body.system).toBe('be brief');
    expect(baidu.tokensIssued - before).toBe(1);
    await expectBilled(s, u.userId, model, 2);
  });

  it('when the token is revoked, then that call fails with 401 and the next one gets a new token', async () => {
    const { model, client } = await channelFor(15, 'bd-api-key|bd-secret', 'ERNIE-Speed-8K', baidu.url);
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'warm up' }] });
    const before = baidu.tokensIssued;
    baidu.revokeTokens();
    const err = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(err.status).toBe(401);
    expect(err.message).toContain('Access token invalid');
    const again = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    expect(again.choices[0]?.message.content).toBe('文心 says hello');
    expect(baidu.tokensIssued - before).toBe(1);
  });

  it('when the secret key is wrong, then the client gets 401 with Baidu message, unbilled', async () => {
    const { model, u, client } = await channelFor(15, 'bd-api-key|not-it', 'ERNIE-3.5-8K', baidu.url);
    const err = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(err.status).toBe(401);
    expect(err.message).toContain('Client authentication failed');
    expect((await s.wallet.getWallet({ userId: u.userId })).wallet?.usedQuota ?? 0).toBe(0);
  });

  it('when Baidu answers its QPS limit code inside HTTP 200, then the client gets 429', async () => {
    const { model, client } = await channelFor(15, 'bd-api-key|bd-secret', 'ERNIE-Lite-8K', baidu.url);
    baidu.set({ errorCode: 18, errorMsg: 'Open api qps request limit reached' });
    try {
      const err = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true })
        .catch((e) => e);
      expect(err.status).toBe(429);
      expect(err.message).toContain('qps request limit');
    } finally {
      baidu.set({ errorCode: 0 });
    }
  });
});

describe('Dify (chat-messages)', () => {
  it('when a client chats and continues with the conversation id it got, then Dify sees one conversation and both are billed', async () => {
    const { model, u, client } = await channelFor(37, 'app-dify-key', 'dify', dify.url);
    const first = (await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'first question' }],
    })) as OpenAI.ChatCompletion & { conversation_id?: string };
    expect(first.choices[0]?.message.content).toBe('dify answers you');
    expect(first.usage).toMatchObject({ prompt_tokens: 14, completion_tokens: 3 });
    const conversation = first.conversation_id ?? '';
    expect(dify.conversations.has(conversation)).toBe(true);
    expect(dify.requests.at(-1)).toMatchObject({ query: 'first question', response_mode: 'blocking' });

    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'second question' }],
      stream: true,
      stream_options: { include_usage: true },
      // An extra field the relay passes to Dify.
      ...({ conversation_id: conversation } as object),
    });
    let text = '';
    let streamed = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      streamed ||= (c as unknown as { conversation_id?: string }).conversation_id ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('dify answers you');
    expect(usage).toMatchObject({ prompt_tokens: 14, completion_tokens: 3 });
    expect(streamed).toBe(conversation);
    expect(dify.conversations.get(conversation)).toEqual(['first question', 'second question']);
    expect(dify.requests.at(-1)).toMatchObject({ response_mode: 'streaming', conversation_id: conversation });
    await expectBilled(s, u.userId, model, 2);
  });

  it('when Dify refuses (wrong key 401, unknown conversation 404, an error event in the stream), then the client gets that status, unbilled', async () => {
    const bad = await channelFor(37, 'app-wrong', 'dify', dify.url);
    const e401 = await bad.client.chat.completions
      .create({ model: bad.model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(e401.status).toBe(401);
    expect(e401.message).toContain('Access token is invalid');

    const { model, u, client } = await channelFor(37, 'app-dify-key', 'dify', dify.url);
    const e404 = await client.chat.completions
      .create({
        model,
        messages: [{ role: 'user', content: 'hi' }],
        ...({ conversation_id: 'no-such-conversation' } as object),
      })
      .catch((e) => e);
    expect(e404.status).toBe(404);
    expect(e404.message).toContain('Conversation Not Exists.');

    dify.set({
      streamError: {
        status: 400,
        code: 'provider_quota_exceeded',
        message: 'Your quota for Dify Hosted Model Provider has been exhausted.',
      },
    });
    try {
      const eStream = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true })
        .catch((e) => e);
      expect(eStream.status).toBe(400);
      expect(eStream.message).toContain('provider_quota_exceeded');
    } finally {
      dify.set({ streamError: undefined });
    }
    await new Promise((r) => setTimeout(r, 500));
    expect((await s.wallet.getWallet({ userId: u.userId })).wallet?.usedQuota ?? 0).toBe(0);
  });
});
