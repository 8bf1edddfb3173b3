/**
 * The provider types added for issue 12, end to end on the running stack, each against its fake:
 * new-api's OpenAI-format types (20, 27, 43, 45, 48), AWS Claude on Bedrock (33: SigV4, binary
 * event-stream) and Vertex AI (41: service-account JWT -> OAuth token; Claude and Gemini). Each:
 * whole and streamed answers, errors mapped, usage billed (log rows and wallet checked).
 */
import {
  type FakeBedrock,
  type FakeProvider,
  type FakeVertex,
  startFakeBedrock,
  startFakeProvider,
  startFakeVertex,
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
let openaiFake: FakeProvider;
let bedrock: FakeBedrock;
let vertex: FakeVertex;

beforeAll(async () => {
  s = await startRelayStack();
  openaiFake = await startFakeProvider({
    kind: 'openai',
    key: 'up-family',
    promptTokens: 11,
    reply: 'one two three four',
  });
  bedrock = await startFakeBedrock({
    region: 'us-east-1',
    credentials: { AKIAEXAMPLE: 'bedrock/secret' },
    behaviour: { reply: 'hello from bedrock claude', inputTokens: 21 },
  });
  vertex = await startFakeVertex({
    projectId: 'relay-proj',
    region: 'us-east5',
    behaviour: { reply: 'vertex says hi there', inputTokens: 17 },
  });
  await setOption(s, 'RetryTimes', '0');
});
afterAll(async () => {
  await s?.stop();
  await Promise.all([openaiFake?.close(), bedrock?.close(), vertex?.close()]);
});

async function chatBoth(key: string, model: string) {
  const client = new OpenAI({ apiKey: key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
  const whole = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage: OpenAI.CompletionUsage | undefined | null;
  for await (const c of stream) {
    text += c.choices[0]?.delta?.content ?? '';
    if (c.usage) usage = c.usage;
  }
  return { whole: whole.choices[0]?.message.content, wholeUsage: whole.usage, text, usage };
}

describe("new-api's OpenAI-format types", () => {
  const cases: [number, string, string][] = [
    [20, 'openai/gpt-4o-mini', '/api/v1/chat/completions'],
    [27, 'sonar', '/chat/completions'],
    [43, 'deepseek-chat', '/v1/chat/completions'],
    [45, 'doubao-1.5-pro-32k', '/api/v3/chat/completions'],
    [48, 'grok-3', '/v1/chat/completions'],
  ];
  for (const [type, upstream, path] of cases) {
    it(`when a type ${type} channel serves chat (whole and streamed), then it reaches ${path} and is billed`, async () => {
      const model = modelName('gpt-4o-mini');
      const u = await userWithToken(s);
      await createChannel(s, {
        type,
        baseUrl: openaiFake.url,
        key: 'up-family',
        models: model,
        modelMapping: JSON.stringify({ [model]: upstream }),
      });
      await routable(s.stack.relayUrl, u.key, model);
      const r = await chatBoth(u.key, model);
      expect(r.whole).toBe('one two three four');
      expect(r.text).toBe('one two three four');
      expect(r.usage?.prompt_tokens).toBe(11);
      const sent = openaiFake.requests.slice(-2);
      expect(sent.map((q) => q.path)).toEqual([path, path]);
      expect(sent.map((q) => (q.body as { model: string }).model)).toEqual([upstream, upstream]);
      const logs = await expectBilled(s, u.userId, model, 2);
      expect(logs.every((l) => l.promptTokens === 11 && l.completionTokens === 4)).toBe(true);
    });
  }

  it('when a FastGPT (22) channel serves chat, then the APIKey-AppId key is the bearer token under /api/openapi', async () => {
    const fastgpt = await startFakeProvider({
      kind: 'openai',
      key: 'fastgpt-k3y-app42',
      promptTokens: 5,
      reply: 'from fastgpt',
    });
    try {
      const model = modelName('gpt-4o-mini');
      const u = await userWithToken(s);
      await createChannel(s, {
        type: 22,
        baseUrl: `${fastgpt.url}/api/openapi`,
        key: 'fastgpt-k3y-app42',
        models: model,
      });
      await routable(s.stack.relayUrl, u.key, model);
      const r = await chatBoth(u.key, model);
      expect(r.whole).toBe('from fastgpt');
      expect(r.text).toBe('from fastgpt');
      expect(fastgpt.requests.map((q) => q.path)).toEqual([
        '/api/openapi/v1/chat/completions',
        '/api/openapi/v1/chat/completions',
      ]);
      await expectBilled(s, u.userId, model, 2);
    } finally {
      await fastgpt.close();
    }
  });

  it('when a type 43 key is wrong, then the client gets 401 in its format and nothing is charged', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    await createChannel(s, { type: 43, baseUrl: openaiFake.url, key: 'wrong', models: model, autoBan: 0 });
    await routable(s.stack.relayUrl, u.key, model);
    const res = await fetch(`${s.stack.relayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('Incorrect API key');
    expect((await s.wallet.getWallet({ userId: u.userId })).wallet?.usedQuota ?? 0).toBe(0);
  });
});

describe('AWS Claude (Bedrock)', () => {
  async function setup(key = 'AKIAEXAMPLE|bedrock/secret|us-east-1') {
    const model = modelName('claude-3-5-sonnet');
    const u = await userWithToken(s);
    const id = await createChannel(s, {
      type: 33,
      baseUrl: bedrock.url,
      key,
      models: model,
      autoBan: 0,
      modelMapping: JSON.stringify({ [model]: 'claude-3-5-sonnet-20241022' }),
    });
    await routable(s.stack.relayUrl, u.key, model);
    return { model, u, id };
  }

  it('when OpenAI and Anthropic clients chat through a Bedrock channel (whole and streamed), then the signed calls are answered and billed', async () => {
    const { model, u } = await setup();
    const r = await chatBoth(u.key, model);
    expect(r.whole).toBe('hello from bedrock claude');
    expect(r.text).toBe('hello from bedrock claude');
    expect(r.usage).toMatchObject({ prompt_tokens: 21, completion_tokens: 4 });
    const claude = new Anthropic({ apiKey: u.key, baseURL: s.stack.relayUrl, maxRetries: 0 });
    const stream = claude.messages.stream({ model, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    stream.on('text', (t) => {
      text += t;
    });
    const final = await stream.finalMessage();
    expect(text).toBe('hello from bedrock claude');
    expect(final.usage.output_tokens).toBe(4);
    const calls = bedrock.requests.slice(-3);
    expect(calls.map((c) => c.signatureError)).toEqual([undefined, undefined, undefined]);
    expect(calls.map((c) => c.path)).toEqual([
      '/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke',
      '/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke-with-response-stream',
      '/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke-with-response-stream',
    ]);
    expect(calls.every((c) => !('model' in c.body) && c.body.anthropic_version === 'bedrock-2023-05-31')).toBe(true);
    const logs = await expectBilled(s, u.userId, model, 3);
    expect(logs.every((l) => l.promptTokens === 21 && l.completionTokens === 4)).toBe(true);
  });

  it('when the secret is wrong, then the fake refuses the signature and the client gets 403 with AWS message, unbilled', async () => {
    const { model, u } = await setup('AKIAEXAMPLE|not-the-secret|us-east-1');
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
    const err = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(err.status).toBe(403);
    expect(err.message).toContain('signature we calculated does not match');
    expect(bedrock.requests.at(-1)?.signatureError).toBe('signature');
    expect((await s.wallet.getWallet({ userId: u.userId })).wallet?.usedQuota ?? 0).toBe(0);
  });

  it('when Bedrock throttles (HTTP 429, or an exception inside the stream), then the client gets 429, unbilled', async () => {
    const { model, u } = await setup();
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
    bedrock.set({
      status: 429,
      errorType: 'ThrottlingException',
      message: 'Too many requests, please wait before trying again.',
    });
    try {
      const err = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e) => e);
      expect(err.status).toBe(429);
      expect(err.message).toContain('Too many requests');
    } finally {
      bedrock.set({ status: 0 });
    }
    bedrock.set({ streamException: 'throttlingException', message: 'Rate exceeded in stream' });
    try {
      const err = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true })
        .catch((e) => e);
      expect(err.status).toBe(429);
      expect(err.message).toContain('Rate exceeded in stream');
    } finally {
      bedrock.set({ streamException: undefined });
    }
    await new Promise((r) => setTimeout(r, 500));
    expect((await s.wallet.getWallet({ userId: u.userId })).wallet?.usedQuota ?? 0).toBe(0);
  });
});

describe('Vertex AI', () => {
  async function setup(base: string, upstream: string, key = vertex.serviceAccountJson) {
    const model = modelName(base);
    const u = await userWithToken(s);
    await createChannel(s, {
      type: 41,
      baseUrl: vertex.url,
      key,
      other: JSON.stringify({ default: 'us-east5' }),
      models: model,
      autoBan: 0,
      modelMapping: JSON.stringify({ [model]: upstream }),
    });
    await routable(s.stack.relayUrl, u.key, model);
    return { model, u };
  }

  it('when Claude and Gemini models are used on a Vertex channel, then one token serves every call and all are billed', async () => {
    const before = vertex.tokensIssued;
    const c = await setup('claude-3-5-sonnet', 'claude-3-7-sonnet-20250219');
    const r = await chatBoth(c.u.key, c.model);
    expect(r.whole).toBe('vertex says hi there');
    expect(r.text).toBe('vertex says hi there');
    expect(r.usage).toMatchObject({ prompt_tokens: 17, completion_tokens: 4 });
    const claudeCalls = vertex.requests.slice(-2);
    expect(claudeCalls.map((q) => q.path)).toEqual([
      '/v1/projects/relay-proj/locations/us-east5/publishers/anthropic/models/claude-3-7-sonnet%4020250219:rawPredict',
      '/v1/projects/relay-proj/locations/us-east5/publishers/anthropic/models/claude-3-7-sonnet%4020250219:streamRawPredict',
    ]);
    await expectBilled(s, c.u.userId, c.model, 2);

    const g = await setup('gemini-2.5-pro', 'gemini-2.5-pro');
    const rg = await chatBoth(g.u.key, g.model);
    expect(rg.whole).toBe('vertex says hi there');
    expect(rg.text).toBe('vertex says hi there');
    // Gemini clients pass natively.
    const native = await fetch(`${s.stack.relayUrl}/v1beta/models/${g.model}:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': g.u.key, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    expect(native.status).toBe(200);
    const nj = (await native.json()) as { candidates: { content: { parts: { text: string }[] } }[] };
    expect(nj.candidates[0]?.content.parts[0]?.text).toBe('vertex says hi there');
    expect(vertex.requests.at(-1)?.path).toBe(
      '/v1/projects/relay-proj/locations/us-east5/publishers/google/models/gemini-2.5-pro:generateContent',
    );
    const logs = await expectBilled(s, g.u.userId, g.model, 3);
    expect(logs.every((l) => l.promptTokens === 17 && l.completionTokens === 4)).toBe(true);
    expect(vertex.tokensIssued - before).toBe(1);
  });

  it('when the service account key is not the one Google knows, then the token exchange fails and the client gets 401, unbilled', async () => {
    const other = await startFakeVertex({ projectId: 'relay-proj', region: 'us-east5' });
    try {
      const forged = JSON.stringify({
        ...JSON.parse(vertex.serviceAccountJson),
        private_key: JSON.parse(other.serviceAccountJson).private_key,
        private_key_id: 'other-key',
      });
      const { model, u } = await setup('gemini-2.5-pro', 'gemini-2.5-pro', forged);
      const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
      const err = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e) => e);
      expect(err.status).toBe(401);
      expect(err.message).toContain('Invalid JWT Signature');
      expect((await s.wallet.getWallet({ userId: u.userId })).wallet?.usedQuota ?? 0).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('when Vertex answers 429, then the client gets 429 with its message', async () => {
    const { model, u } = await setup('gemini-2.5-pro', 'gemini-2.5-pro');
    vertex.set({
      status: 429,
      message: 'Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute',
    });
    try {
      const client = new OpenAI({ apiKey: u.key, baseURL: `${s.stack.relayUrl}/v1`, maxRetries: 0 });
      const err = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e) => e);
      expect(err.status).toBe(429);
      expect(err.message).toContain('Quota exceeded');
    } finally {
      vertex.set({ status: 0 });
    }
  });
});
