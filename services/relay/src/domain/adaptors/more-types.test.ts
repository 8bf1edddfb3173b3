/**
 * new-api's channel types 6-13, 44, 46, 47, 49, 53, 59 and 60 (issue 24 point 6), each against
 * a fake speaking the provider's own format: OpenAI-compatible ones against the OpenAI, Claude
 * and Gemini fakes, Coze, MokaAI and Xinference against small fakes of their APIs below.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FakeCoze, type FakeKind, type FakeProvider, startFakeCoze, startFakeProvider } from '@aigw/testkit/fakes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memorySink } from '../../../test/fakes/memory-sink.ts';
import { createUpstreamHttp } from '../../data/upstream-http.ts';
import { runAttempt } from '../exchange/attempt.ts';
import { type ClientRequest, canonicalChat } from '../exchange/build-request.ts';
import { UpstreamFailure } from '../exchange/failure.ts';
import type { ClientFormat } from '../exchange/ports.ts';
import type { Json } from '../protocols/openai.ts';
import { adaptorFor, type RelayMode } from './index.ts';

const http = createUpstreamHttp({ timeoutMs: 10_000 });
const fakes = new Map<FakeKind, FakeProvider>();
const KEY = 'upstream-key';

/** A provider fake of our own: records each request and answers through `handle`. */
interface MiniFake {
  url: string;
  requests: { path: string; headers: IncomingMessage['headers']; body: Json }[];
  close(): Promise<void>;
}
async function miniFake(handle: (path: string, body: Json, req: IncomingMessage, res: ServerResponse) => void) {
  const requests: MiniFake['requests'] = [];
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      const body = text ? (JSON.parse(text) as Json) : {};
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      handle(req.url ?? '', body, req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const fake: MiniFake = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
  return fake;
}
const sendJson = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

// Coze's v3 chat (@aigw/testkit/fakes: fake-coze.ts).
const CHAT = { bot_id: '7342866812345' };
let coze: FakeCoze;
// MokaAI's embeddings: OpenAI's list with input as a list of strings.
let moka: MiniFake;
// Xinference's rerank: results without usage, documents as {text} when asked.
let xinference: MiniFake;
// Replicate's predictions API: a prediction object, `Prefer: wait` answering it finished.
let replicateFake: MiniFake;

beforeAll(async () => {
  for (const kind of ['openai', 'anthropic', 'gemini'] as FakeKind[]) {
    fakes.set(kind, await startFakeProvider({ kind, key: KEY, reply: 'Hello there friend', promptTokens: 7 }));
  }
  coze = await startFakeCoze({ token: KEY, botId: CHAT.bot_id });
  moka = await miniFake((path, body, req, res) => {
    if (path !== '/embeddings') return sendJson(res, 404, { error: { message: `no route ${path}` } });
    if (req.headers.authorization !== `Bearer ${KEY}`) return sendJson(res, 401, { error: { message: 'bad key' } });
    const input = body.input;
    if (!Array.isArray(input) || input.some((s) => typeof s !== 'string'))
      return sendJson(res, 422, { error: { message: 'input must be a list of strings' } });
    sendJson(res, 200, {
      object: 'list',
      model: body.model,
      data: input.map((_, i) => ({ object: 'embedding', index: i, embedding: [0.1 * (i + 1), 0.2] })),
      usage: { prompt_tokens: 5 * input.length, total_tokens: 5 * input.length },
    });
  });
  xinference = await miniFake((path, body, _req, res) => {
    if (path !== '/v1/rerank') return sendJson(res, 404, { detail: 'Not Found' });
    const docs = body.documents as string[];
    const ranked = docs.map((d, index) => ({ index, d, score: d.length / 10 })).sort((a, b) => b.score - a.score);
    sendJson(res, 200, {
      id: 'rerank-1',
      results: ranked.map((r) => ({
        index: r.index,
        relevance_score: r.score,
        document: body.return_documents ? { text: r.d } : null,
      })),
      meta: { api_version: null, billed_units: null, tokens: null, warnings: null },
    });
  });
  replicateFake = await miniFake((path, body, req, res) => {
    const m = /^\/v1\/models\/([^/]+)\/([^/]+)\/predictions$/.exec(path);
    if (!m) return sendJson(res, 404, { detail: 'Not found.', status: 404 });
    if (req.headers.authorization !== `Bearer ${KEY}`)
      return sendJson(res, 401, {
        title: 'Unauthenticated',
        detail: 'You did not pass a valid authentication token',
        status: 401,
      });
    const input = body.input as Json;
    if (typeof input?.prompt !== 'string')
      return sendJson(res, 422, {
        title: 'Input validation failed',
        detail: '- input: prompt is required',
        status: 422,
      });
    const id = 'gm3qorzdhgbfurvjtvhg6dckhu';
    const done = req.headers.prefer === 'wait' && input.prompt !== 'slow';
    const n = Number(input.num_outputs ?? 1);
    sendJson(res, 201, {
      id,
      model: `${m[1]}/${m[2]}`,
      version: 'dp-4d0bcc010b3049749a251855f12800be',
      input,
      logs: '',
      output: done
        ? n === 1
          ? `https://replicate.delivery/xezq/${id}/out-0.webp`
          : Array.from({ length: n }, (_, i) => `https://replicate.delivery/xezq/${id}/out-${i}.webp`)
        : null,
      data_removed: false,
      error: null,
      status: done ? 'succeeded' : 'processing',
      created_at: '2026-11-27T09:00:00.000Z',
      urls: {
        get: `https://api.replicate.com/v1/predictions/${id}`,
        cancel: `https://api.replicate.com/v1/predictions/${id}/cancel`,
      },
    });
  });
});
afterAll(async () => {
  for (const f of fakes.values()) await f.close();
  await Promise.all([coze.close(), moka.close(), xinference.close(), replicateFake.close()]);
  await http.close();
});

interface RunOpts {
  type: number;
  url: string;
  format?: ClientFormat;
  mode?: RelayMode;
  model?: string;
  stream?: boolean;
  body?: Json;
  other?: string;
  key?: string;
  forward?: Record<string, string>;
  /** The channel's settings (new-api's ChannelOtherSettings). */
  settings?: Json;
}

async function run(o: RunOpts) {
  const adaptor = adaptorFor(o.type);
  if (!adaptor) throw new Error(`no adaptor for type ${o.type}`);
  const format = o.format ?? 'openai';
  const model = o.model ?? 'gpt-4o-mini';
  const stream = o.stream ?? false;
  const body = o.body ?? { model, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}) };
  const req: ClientRequest = {
    format,
    mode: o.mode ?? 'chat',
    model,
    stream,
    body,
    includeUsage: false,
    ...(o.forward ? { forward: o.forward } : {}),
  };
  const sink = memorySink();
  let canon: ReturnType<typeof canonicalChat> | undefined;
  const result = await runAttempt({
    req,
    adaptor,
    channel: {
      type: o.type,
      key: o.key ?? KEY,
      baseUrl: o.url,
      other: o.other ?? '',
      organization: '',
      ...(o.settings ? { overrides: { params: undefined, headers: undefined, setting: {}, other: o.settings } } : {}),
    },
    upstreamModel: model,
    canonical: () => {
      canon ??= canonicalChat(req);
      return canon;
    },
    upstream: http,
    sink,
    startedAt: performance.now(),
    firstTokenTimeoutMs: 0,
    estimatePrompt: async () => 3,
    countText: async (t) => Math.ceil(t.length / 4),
  });
  return { result, sink };
}

const fake = (kind: FakeKind) => fakes.get(kind) as FakeProvider;
const last = (kind: FakeKind) => fake(kind).requests.at(-1);

/** The events and text of an OpenAI SSE answer. */
function streamed(text: string): { content: string; chunks: Json[]; done: boolean } {
  const chunks: Json[] = [];
  let done = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    if (line === 'data: [DONE]') done = true;
    else chunks.push(JSON.parse(line.slice(6)));
  }
  const content = chunks
    .map((c) => (c.choices as { delta?: { content?: string } }[] | undefined)?.[0]?.delta?.content ?? '')
    .join('');
  return { content, chunks, done };
}

describe("new-api's OpenAI-compatible types", () => {
  it('when types 6, 7, 9, 10, 12, 13 and 53 answer a chat, then it goes to {base}/v1/chat/completions with the bearer key', async () => {
    for (const type of [6, 7, 9, 10, 12, 13, 53]) {
      const { result, sink } = await run({ type, url: fake('openai').url });
      expect(last('openai')?.path).toBe('/v1/chat/completions');
      expect(last('openai')?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(JSON.parse(sink.text()).choices[0].message.content).toBe('Hello there friend');
      expect(result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
    }
    // Each has new-api's host by default; Submodel serves chat only.
    expect([6, 7, 9, 10, 12, 13, 53].map((t) => adaptorFor(t)?.defaultBaseUrl)).toEqual([
      'https://api.openaimax.com',
      'https://api.ohmygpt.com',
      'https://api.caipacity.com',
      'https://api.aiproxy.io',
      'https://api.api2gpt.com',
      'https://api.aigc2d.com',
      'https://llm.submodel.ai',
    ]);
    expect([...(adaptorFor(53)?.modes ?? [])]).toEqual(['chat']);
    expect(adaptorFor(6)?.modes.has('embeddings')).toBe(true);
  });

  it('when type 46 (Qianfan v2) is called with token|appid, then /v2 gets the bearer token and the appid header', async () => {
    const { sink } = await run({ type: 46, url: fake('openai').url, key: `${KEY}|app-123`, model: 'ernie-4.0-8k' });
    expect(last('openai')?.path).toBe('/v2/chat/completions');
    expect(last('openai')?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(last('openai')?.headers.appid).toBe('app-123');
    expect(JSON.parse(sink.text()).choices[0].message.content).toBe('Hello there friend');

    // A -search model goes as the model with Qianfan's web search on.
    await run({ type: 46, url: fake('openai').url, key: KEY, model: 'ernie-4.0-8k-search', stream: true });
    const sent = last('openai');
    expect(sent?.headers.appid).toBeUndefined();
    expect((sent?.body as Json).model).toBe('ernie-4.0-8k');
    expect((sent?.body as Json).web_search).toEqual({
      enable: true,
      enable_citation: true,
      enable_trace: true,
      enable_status: false,
    });

    const emb = await run({
      type: 46,
      url: fake('openai').url,
      mode: 'embeddings',
      model: 'embedding-v1',
      body: { model: 'embedding-v1', input: ['a'] },
    });
    expect(last('openai')?.path).toBe('/v2/embeddings');
    expect(emb.result.usage.promptTokens).toBe(7);
  });

  it('when type 47 (Xinference) reranks, then the answer is in Jina’s shape with documents as asked and the input billed as estimated', async () => {
    const { result, sink } = await run({
      type: 47,
      url: xinference.url,
      mode: 'rerank',
      model: 'bge-reranker-v2-m3',
      body: { model: 'bge-reranker-v2-m3', query: 'q', documents: ['a', 'bbb', 'cc'], return_documents: true },
    });
    expect(xinference.requests.at(-1)?.body).toMatchObject({ model: 'bge-reranker-v2-m3', query: 'q' });
    expect(JSON.parse(sink.text())).toEqual({
      id: 'rerank-1',
      model: 'bge-reranker-v2-m3',
      results: [
        { index: 1, relevance_score: 0.3, document: { text: 'bbb' } },
        { index: 2, relevance_score: 0.2, document: { text: 'cc' } },
        { index: 0, relevance_score: 0.1, document: { text: 'a' } },
      ],
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
    expect(result.usage).toEqual({ promptTokens: 3, completionTokens: 0 });

    const chat = await run({ type: 47, url: fake('openai').url, model: 'qwen2.5-instruct' });
    expect(last('openai')?.path).toBe('/v1/chat/completions');
    expect(chat.result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
  });

  for (const type of [59, 60]) {
    it(`when type ${type} chains another gateway, then OpenAI, Claude, Gemini and Responses clients pass through with the key in each one's header`, async () => {
      const chat = await run({ type, url: fake('openai').url });
      expect(last('openai')?.path).toBe('/v1/chat/completions');
      expect(last('openai')?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(chat.result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });

      const claudeBody = { model: 'claude-3-5-sonnet', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] };
      const claude = await run({
        type,
        url: fake('anthropic').url,
        format: 'claude',
        model: 'claude-3-5-sonnet',
        body: claudeBody,
        forward: { 'anthropic-beta': 'prompt-caching-2024-07-31' },
      });
      const c = last('anthropic');
      expect(c?.path).toBe('/v1/messages');
      expect(c?.headers['x-api-key']).toBe(KEY);
      expect(c?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(c?.headers['anthropic-version']).toBe('2023-06-01');
      expect(c?.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
      expect(c?.body).toEqual(claudeBody);
      expect(JSON.parse(claude.sink.text())).toMatchObject({
        type: 'message',
        content: [{ type: 'text', text: 'Hello there friend' }],
      });
      expect(claude.result.usage).toMatchObject({ promptTokens: 7, completionTokens: 3 });

      const gemBody = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
      const gem = await run({
        type,
        url: fake('gemini').url,
        format: 'gemini',
        model: 'gemini-2.5-pro',
        body: gemBody,
        stream: true,
      });
      const g = last('gemini');
      expect(g?.path).toBe('/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
      expect(g?.headers['x-goog-api-key']).toBe(KEY);
      expect(gem.sink.text()).toContain('"candidates"');
      expect(gem.result.usage.promptTokens).toBe(7);

      const responses = await run({
        type,
        url: fake('openai').url,
        format: 'responses',
        body: { model: 'gpt-4o-mini', input: 'hi' },
      });
      expect(last('openai')?.path).toBe('/v1/responses');
      expect(JSON.parse(responses.sink.text()).object).toBe('response');
    });
  }
});

describe('Coze (type 49)', () => {
  const body = {
    model: 'coze-bot',
    user: 'user-42',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: [{ type: 'text', text: 'who are you?' }] },
    ],
  };

  it('when a chat is streamed, then the bot of the channel gets the turns as v3 messages and the answer and usage come back', async () => {
    const { result, sink } = await run({
      type: 49,
      url: coze.url,
      model: 'coze-bot',
      other: CHAT.bot_id,
      stream: true,
      body: { ...body, stream: true },
    });
    const sent = coze.requests.at(-1);
    expect(sent?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent?.body).toEqual({
      bot_id: CHAT.bot_id,
      user_id: 'user-42',
      stream: true,
      additional_messages: [
        { role: 'user', type: 'question', content: 'hi', content_type: 'text' },
        { role: 'assistant', type: 'answer', content: 'hello', content_type: 'text' },
        { role: 'user', type: 'question', content: 'who are you?', content_type: 'text' },
      ],
    });
    const out = streamed(sink.text());
    // Only the answer's deltas (not the follow-up suggestion) reach the client.
    expect(out.content).toBe('Hello from Coze');
    expect(out.done).toBe(true);
    expect(out.chunks.some((c) => (c.choices as { finish_reason?: string }[])[0]?.finish_reason === 'stop')).toBe(true);
    expect(result.usage).toEqual({ promptTokens: 17, completionTokens: 4 });
    expect(result.estimated).toBe(false);
  });

  it('when a whole answer is asked for, then Coze’s stream is collected into one chat completion with its usage', async () => {
    const { result, sink } = await run({ type: 49, url: coze.url, model: 'coze-bot', other: CHAT.bot_id, body });
    expect(coze.requests.at(-1)?.body.stream).toBe(true);
    expect(JSON.parse(sink.text())).toMatchObject({
      object: 'chat.completion',
      model: 'coze-bot',
      choices: [{ message: { role: 'assistant', content: 'Hello from Coze' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 17, completion_tokens: 4, total_tokens: 21 },
    });
    expect(result.usage).toEqual({ promptTokens: 17, completionTokens: 4 });
  });

  it('when Coze refuses with a code in a 200 answer, then the attempt fails with a 4xx and its message', async () => {
    const bad = await run({ type: 49, url: coze.url, model: 'coze-bot', other: CHAT.bot_id, key: 'wrong' }).catch(
      (e) => e,
    );
    expect(bad).toBeInstanceOf(UpstreamFailure);
    expect(bad).toMatchObject({ status: 401, message: 'coze error 4100: authentication is invalid' });
    const noBot = await run({ type: 49, url: coze.url, model: 'coze-bot', other: 'bot-other', stream: true }).catch(
      (e) => e,
    );
    expect(noBot).toMatchObject({ status: 400, message: 'coze error 4200: bot not found' });
  });
});

describe('MokaAI (type 44)', () => {
  it('when embeddings are asked with one string, then MokaAI gets a list of strings and the usage is billed', async () => {
    const { result, sink } = await run({
      type: 44,
      url: moka.url,
      mode: 'embeddings',
      model: 'm3e-base',
      body: { model: 'm3e-base', input: 'hello', encoding_format: 'float' },
    });
    expect(moka.requests.at(-1)?.body).toEqual({ input: ['hello'], model: 'm3e-base' });
    expect(JSON.parse(sink.text())).toEqual({
      object: 'list',
      model: 'm3e-base',
      data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }],
      usage: { prompt_tokens: 5, total_tokens: 5 },
    });
    expect(result.usage).toEqual({ promptTokens: 5, completionTokens: 0 });
  });
});

describe('Replicate (type 56)', () => {
  it('when an image is asked for, then a FLUX prediction is made with Prefer: wait and its outputs come back as URLs', async () => {
    const { result, sink } = await run({
      type: 56,
      url: replicateFake.url,
      mode: 'images',
      model: 'black-forest-labs/flux-1.1-pro',
      body: {
        model: 'black-forest-labs/flux-1.1-pro',
        prompt: 'a red fox',
        size: '1792x1024',
        n: 2,
        quality: 'hd',
        input: { seed: 7 },
      },
    });
    const sent = replicateFake.requests.at(-1);
    expect(sent?.path).toBe('/v1/models/black-forest-labs/flux-1.1-pro/predictions');
    expect(sent?.headers.prefer).toBe('wait');
    expect(sent?.body).toEqual({
      input: { prompt: 'a red fox', aspect_ratio: '16:9', num_outputs: 2, prompt_upsampling: true, seed: 7 },
    });
    const out = JSON.parse(sink.text());
    expect(out.data).toEqual([
      { url: 'https://replicate.delivery/xezq/gm3qorzdhgbfurvjtvhg6dckhu/out-0.webp' },
      { url: 'https://replicate.delivery/xezq/gm3qorzdhgbfurvjtvhg6dckhu/out-1.webp' },
    ]);
    expect(typeof out.created).toBe('number');
    expect(result.usage).toEqual({ promptTokens: 3, completionTokens: 0 });
  });

  it('when the size is no FLUX ratio, then a custom size in its bounds is sent; bad input and unfinished predictions fail clearly', async () => {
    await run({
      type: 56,
      url: replicateFake.url,
      mode: 'images',
      model: 'black-forest-labs/flux-1.1-pro',
      body: { prompt: 'a fox', size: '1000x2000' },
    });
    expect(replicateFake.requests.at(-1)?.body).toEqual({
      input: { prompt: 'a fox', aspect_ratio: 'custom', width: 992, height: 1440 },
    });

    const opts = { type: 56, url: replicateFake.url, mode: 'images' as const, model: 'black-forest-labs/flux-1.1-pro' };
    const before = replicateFake.requests.length;
    const noPrompt = await run({ ...opts, body: { prompt: ' ' } }).catch((e) => e);
    expect(noPrompt).toMatchObject({ status: 400, kind: 'refused', message: 'prompt is required' });
    const b64 = await run({ ...opts, body: { prompt: 'x', response_format: 'b64_json' } }).catch((e) => e);
    expect(b64).toMatchObject({ status: 400, kind: 'refused' });
    expect(replicateFake.requests.length).toBe(before);

    const slow = await run({ ...opts, body: { prompt: 'slow' } }).catch((e) => e);
    expect(slow).toBeInstanceOf(UpstreamFailure);
    expect(slow.message).toBe('replicate: prediction gm3qorzdhgbfurvjtvhg6dckhu is processing');
    const denied = await run({ ...opts, key: 'wrong', body: { prompt: 'x' } }).catch((e) => e);
    expect(denied).toMatchObject({ status: 401, message: 'You did not pass a valid authentication token' });
  });
});

describe('Advanced custom (type 58)', () => {
  const routes = () => ({
    advanced_routes: [
      {
        incoming_path: '/v1/chat/completions',
        upstream_path: '/gateway/v9/chat/completions',
        models: ['re:^gpt-'],
        auth: { type: 'header', name: 'Authorization', value: 'Bearer {api_key}' },
      },
      {
        incoming_path: '/v1/chat/completions',
        upstream_path: '/v1/chat/completions',
        models: ['glm-4'],
        converter: 'openai_chat_completions_to_cohere_chat',
      },
      {
        incoming_path: '/v1/chat/completions',
        upstream_path: '/v1/responses',
        models: ['o3'],
        converter: 'openai_chat_completions_to_openai_responses',
      },
      {
        incoming_path: '/v1/responses',
        upstream_path: `${fake('gemini').url}/v1beta/models/{model}:generateContent`,
        models: ['gemini-2.5-flash'],
        converter: 'openai_responses_to_gemini_generate_content',
        auth: { type: 'header', name: 'x-goog-api-key', value: '{api_key}' },
      },
      {
        incoming_path: '/v1beta/models/{model}:generateContent',
        upstream_path: '/v1/chat/completions',
        models: ['qwen-plus'],
        converter: 'gemini_generate_content_to_openai_chat_completions',
      },
      {
        incoming_path: '/v1/messages',
        upstream_path: '/v1/messages',
        models: ['claude-opus-4'],
        converter: 'openai_chat_completions_to_anthropic_messages',
      },
      {
        incoming_path: '/v1/embeddings',
        upstream_path: '/v1/embeddings',
        converter: 'openai_chat_completions_to_gemini_generate_content',
      },
      {
        incoming_path: '/v1/messages',
        upstream_path: `${fake('anthropic').url}/anthropic/v1/messages`,
        auth: { type: 'header', name: 'x-api-key', value: '{api_key}' },
      },
      {
        incoming_path: '/v1beta/models/{model}:generateContent',
        upstream_path: '/v1beta/models/{model}:generateContent',
        auth: { type: 'query', name: 'key', value: '{api_key}' },
      },
    ],
  });

  it("when the channel's routes match the client's endpoint and model, then each call goes to its route's URL with its auth", async () => {
    const chat = await run({ type: 58, url: `${fake('openai').url}/base`, settings: routes(), model: 'gpt-4o-mini' });
    const c = last('openai');
    expect(c?.path).toBe('/base/gateway/v9/chat/completions');
    expect(c?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(JSON.parse(chat.sink.text()).choices[0].message.content).toBe('Hello there friend');
    expect(chat.result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });

    const claudeBody = { model: 'claude-3-5-sonnet', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] };
    const claude = await run({
      type: 58,
      url: fake('openai').url,
      settings: routes(),
      format: 'claude',
      model: 'claude-3-5-sonnet',
      body: claudeBody,
    });
    const a = last('anthropic');
    expect(a?.path).toBe('/anthropic/v1/messages');
    expect(a?.headers['x-api-key']).toBe(KEY);
    expect(a?.headers['anthropic-version']).toBe('2023-06-01');
    expect(a?.body).toEqual(claudeBody);
    expect(JSON.parse(claude.sink.text()).content).toEqual([{ type: 'text', text: 'Hello there friend' }]);

    const gem = await run({
      type: 58,
      url: fake('gemini').url,
      settings: routes(),
      format: 'gemini',
      model: 'gemini-2.5-pro',
      body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
      stream: true,
    });
    const g = last('gemini');
    expect(g?.path).toBe(`/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=${KEY}`);
    expect(g?.headers.authorization).toBeUndefined();
    expect(gem.sink.text()).toContain('"candidates"');
    expect(gem.result.usage.promptTokens).toBe(7);
  });

  it("when a route has a converter, then the call goes upstream in the converter's protocol and comes back in the client's", async () => {
    // OpenAI chat to the Responses API.
    const chat = await run({ type: 58, url: fake('openai').url, settings: routes(), model: 'o3' });
    const r = last('openai');
    expect(r?.path).toBe('/v1/responses');
    expect(r?.body).toMatchObject({
      model: 'o3',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
    });
    expect((r?.body as Json).messages).toBeUndefined();
    expect(JSON.parse(chat.sink.text())).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { content: 'Hello there friend' } }],
    });
    expect(chat.result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });

    // The Responses API, streamed, to Gemini's streamGenerateContent.
    const resp = await run({
      type: 58,
      url: '',
      settings: routes(),
      format: 'responses',
      model: 'gemini-2.5-flash',
      body: { model: 'gemini-2.5-flash', input: 'hi', stream: true },
      stream: true,
    });
    const g = last('gemini');
    expect(g?.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(g?.headers['x-goog-api-key']).toBe(KEY);
    expect(g?.body).toMatchObject({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    expect(resp.sink.text()).toContain('event: response.completed');
    expect(resp.sink.text()).toContain('Hello');
    expect(resp.result.usage).toMatchObject({ promptTokens: 7, completionTokens: 3 });

    // Gemini's generateContent to OpenAI chat.
    const gem = await run({
      type: 58,
      url: fake('openai').url,
      settings: routes(),
      format: 'gemini',
      model: 'qwen-plus',
      body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
    });
    const c = last('openai');
    expect(c?.path).toBe('/v1/chat/completions');
    expect(c?.body).toMatchObject({ model: 'qwen-plus', messages: [{ role: 'user', content: 'hi' }] });
    expect(JSON.parse(gem.sink.text())).toMatchObject({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Hello there friend' }] } }],
      usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 3 },
    });
    expect(gem.result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
  });

  it('when no route serves the call, its converter is unknown or takes another kind of request, or the channel has no routes, then it fails with 400 before any upstream call', async () => {
    const before = fake('openai').requests.length;
    const beforeClaude = fake('anthropic').requests.length;
    const noRoute = await run({ type: 58, url: fake('openai').url, settings: routes(), model: 'qwen-max' }).catch(
      (e) => e,
    );
    expect(noRoute).toMatchObject({
      status: 400,
      message: 'advanced custom channel does not support request path /v1/chat/completions for model qwen-max',
    });
    const converter = await run({ type: 58, url: fake('openai').url, settings: routes(), model: 'glm-4' }).catch(
      (e) => e,
    );
    expect(converter).toMatchObject({
      status: 400,
      kind: 'refused',
      message: 'advanced custom converter openai_chat_completions_to_cohere_chat is not supported by this relay',
    });
    const claude = await run({
      type: 58,
      url: fake('anthropic').url,
      settings: routes(),
      format: 'claude',
      model: 'claude-opus-4',
      body: { model: 'claude-opus-4', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
    }).catch((e) => e);
    expect(claude).toMatchObject({
      status: 400,
      kind: 'refused',
      message: 'converter "openai_chat_completions_to_anthropic_messages" does not support Anthropic Messages requests',
    });
    const embedding = await run({
      type: 58,
      url: fake('openai').url,
      settings: routes(),
      mode: 'embeddings',
      model: 'text-embedding-3-small',
      body: { model: 'text-embedding-3-small', input: 'hi' },
    }).catch((e) => e);
    expect(embedding).toMatchObject({
      status: 400,
      kind: 'refused',
      message: 'converter "openai_chat_completions_to_gemini_generate_content" does not support embedding requests',
    });
    expect(fake('anthropic').requests.length).toBe(beforeClaude);
    const none = await run({ type: 58, url: fake('openai').url, model: 'gpt-4o' }).catch((e) => e);
    expect(none).toMatchObject({
      status: 400,
      kind: 'refused',
      message: 'advanced_custom is required: the channel has no advanced_routes',
    });
    const relative = await run({ type: 58, url: '', settings: routes(), model: 'gpt-4o' }).catch((e) => e);
    expect(relative).toMatchObject({ status: 400, kind: 'refused' });
    expect(fake('openai').requests.length).toBe(before);
  });
});
