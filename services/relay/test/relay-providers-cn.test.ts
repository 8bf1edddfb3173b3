/**
 * Signed Chinese providers end to end on the running stack, each against a fake that checks the
 * provider's own signature: Tencent Hunyuan (23, TC3-HMAC-SHA256; errors inside HTTP 200) and
 * Baidu ERNIE (15, API Key + Secret Key traded for a cached access token).
 * Whole and streamed answers, errors mapped, usage billed (log rows and wallet checked).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeBaidu, startFakeBaidu } from './fakes/fake-baidu.ts';
import { type FakeHunyuan, startFakeHunyuan } from './fakes/fake-hunyuan.ts';
import {
  createChannel,
  eventually,
  modelName,
  type RelayStack,
  routable,
  setOption,
  startRelayStack,
  userWithToken,
} from './relay-harness.ts';

let s: RelayStack;
let hunyuan: FakeHunyuan;
let baidu: FakeBaidu;

beforeAll(async () => {
  s = await startRelayStack();
  hunyuan = await startFakeHunyuan({ credentials: { AKIDrelayfake: 'tc3-secret-key' } });
  baidu = await startFakeBaidu({ apiKey: 'bd-api-key', secretKey: 'bd-secret' });
  await setOption(s, 'RetryTimes', '0');
});
afterAll(async () => {
  await s?.stop();
  await hunyuan?.close();
  await baidu?.close();
});

async function billed(userId: number, model: string, count: number) {
  const res = await eventually(
    () => s.logs.queryLogs({ filter: { userId, modelName: model, type: 2 }, page: { page: 1, pageSize: 20 } }),
    (r) => r.items.length >= count,
  );
  expect(res.items).toHaveLength(count);
  let sum = 0;
  for (const log of res.items) {
    const o = JSON.parse(log.other) as { model_ratio: number; completion_ratio: number; group_ratio: number };
    expect(log.quota).toBe(
      Math.max(
        1,
        Math.round((log.promptTokens + log.completionTokens * o.completion_ratio) * o.model_ratio * o.group_ratio),
      ),
    );
    sum += log.quota;
  }
  const used = await eventually(
    async () => (await s.wallet.getWallet({ userId })).wallet?.usedQuota ?? 0,
    (v) => v >= sum,
  );
  expect(used).toBe(sum);
  return res.items;
}

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
    await billed(u.userId, model, 2);
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
    await billed(u.userId, model, 2);
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
