import { type FakeKind, type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
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

beforeAll(async () => {
  for (const kind of [
    'openai',
    'azure',
    'anthropic',
    'gemini',
    'ollama',
    'cohere',
    'jina',
    'cloudflare',
  ] as FakeKind[]) {
    fakes.set(kind, await startFakeProvider({ kind, key: KEY, reply: 'Hello there friend', promptTokens: 7 }));
  }
});
afterAll(async () => {
  for (const f of fakes.values()) await f.close();
  await http.close();
});

interface RunOpts {
  kind: FakeKind;
  type: number;
  format?: ClientFormat;
  mode?: RelayMode;
  model?: string;
  upstreamModel?: string;
  stream?: boolean;
  body?: Json | FormData;
  includeUsage?: boolean;
  /** The client's raw JSON text (sent unchanged when nothing needs rewriting). */
  raw?: string;
  other?: string;
  firstTokenTimeoutMs?: number;
  sink?: ReturnType<typeof memorySink>;
}

const chatBody = (format: ClientFormat, model: string, stream: boolean): Json => {
  if (format === 'claude')
    return { model, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}) };
  if (format === 'gemini') return { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
  return { model, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}) };
};

async function run(o: RunOpts) {
  const fake = fakes.get(o.kind);
  if (!fake) throw new Error('no fake');
  const adaptor = adaptorFor(o.type);
  if (!adaptor) throw new Error('no adaptor');
  const format = o.format ?? 'openai';
  const model = o.model ?? 'gpt-4o-mini';
  const stream = o.stream ?? false;
  const body = o.body ?? chatBody(format, model, stream);
  const req: ClientRequest = {
    format,
    mode: o.mode ?? 'chat',
    model,
    stream,
    body,
    ...(o.raw !== undefined ? { raw: Buffer.from(o.raw) } : {}),
    includeUsage: o.includeUsage ?? false,
  };
  const sink = o.sink ?? memorySink();
  let canon: ReturnType<typeof canonicalChat> | undefined;
  const result = await runAttempt({
    req,
    adaptor,
    channel: { type: o.type, key: KEY, baseUrl: fake.url, other: o.other ?? '', organization: '' },
    upstreamModel: o.upstreamModel ?? model,
    canonical: () => {
      canon ??= canonicalChat(req);
      return canon;
    },
    upstream: http,
    sink,
    startedAt: performance.now(),
    firstTokenTimeoutMs: o.firstTokenTimeoutMs ?? 0,
    estimatePrompt: async () => 3,
    countText: async (t) => Math.ceil(t.length / 4),
  });
  return { result, sink, fake, sent: fake.requests.at(-1) };
}

/** Concatenated content of an OpenAI SSE answer. */
function openaiStreamText(text: string): { content: string; done: boolean; chunks: Json[] } {
  const chunks: Json[] = [];
  let done = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    const d = line.slice(6);
    if (d === '[DONE]') done = true;
    else chunks.push(JSON.parse(d));
  }
  const content = chunks
    .map((c) => (c.choices as { delta?: { content?: string } }[])[0]?.delta?.content ?? '')
    .join('');
  return { content, done, chunks };
}

describe('OpenAI-compatible adaptors', () => {
  for (const [type, kind] of [
    [1, 'openai'],
    [8, 'openai'],
    [25, 'openai'],
    [31, 'openai'],
    [40, 'openai'],
    [42, 'openai'],
  ] as const) {
    it(`when type ${type} answers a chat, then the answer and its usage come back unchanged`, async () => {
      const { result, sink, sent } = await run({ kind, type });
      expect(sent?.path).toBe('/v1/chat/completions');
      expect(sent?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(JSON.parse(sink.text()).choices[0].message.content).toBe('Hello there friend');
      expect(result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
      expect(result.estimated).toBe(false);
    });
  }

  it('when an OpenAI stream is relayed, then chunks pass through, usage is asked for and kept from the client', async () => {
    const { result, sink, sent } = await run({ kind: 'openai', type: 1, stream: true });
    expect((sent?.body as Json).stream_options).toEqual({ include_usage: true });
    const out = openaiStreamText(sink.text());
    expect(out.content).toBe('Hello there friend');
    expect(out.done).toBe(true);
    expect(out.chunks.some((c) => c.usage)).toBe(false);
    expect(sink.headers['content-type']).toBe('text/event-stream');
    expect(result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
    expect(result.firstTokenMs).toBeGreaterThanOrEqual(0);
  });

  it('when the client’s raw JSON is relayed as a stream, then stream_options is spliced in and the rest is unchanged', async () => {
    const body = {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: '你好 "q"' }],
      stream: true,
      temperature: 0.5,
    };
    const raw = ` \n${JSON.stringify(body, null, 2)}`;
    const { result, sent } = await run({ kind: 'openai', type: 1, stream: true, body, raw });
    expect(sent?.body).toEqual({ ...body, stream_options: { include_usage: true } });
    expect(result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
  });

  it('when the client asks for stream usage, then it gets the usage chunk', async () => {
    const body = {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    };
    const { sink } = await run({ kind: 'openai', type: 1, stream: true, body, includeUsage: true });
    const out = openaiStreamText(sink.text());
    expect(out.chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3 });
  });

  it('when the upstream reports no usage, then the relay estimates it', async () => {
    fakes.get('openai')?.set({ reportUsage: false });
    try {
      const { result } = await run({ kind: 'openai', type: 1, stream: true });
      expect(result.estimated).toBe(true);
      expect(result.usage.completionTokens).toBeGreaterThan(0);
    } finally {
      fakes.get('openai')?.set({ reportUsage: true });
    }
  });

  it('when the channel maps the model, then the upstream gets the mapped name', async () => {
    const { sent } = await run({
      kind: 'openai',
      type: 1,
      model: 'gpt-4o-mini',
      upstreamModel: 'gpt-4o-mini-2024-07-18',
    });
    expect((sent?.body as Json).model).toBe('gpt-4o-mini-2024-07-18');
  });

  it('when type 3 (Azure) is called, then the deployment URL, api-version and api-key are used', async () => {
    const { sink, sent } = await run({ kind: 'azure', type: 3, model: 'gpt-3.5-turbo', other: '2024-06-01' });
    expect(sent?.path).toBe('/openai/deployments/gpt-35-turbo/chat/completions?api-version=2024-06-01');
    expect(sent?.headers['api-key']).toBe(KEY);
    expect(JSON.parse(sink.text()).choices[0].message.content).toBe('Hello there friend');
  });

  it('when type 39 (Cloudflare) is called, then the account URL is used', async () => {
    const { sink, sent } = await run({
      kind: 'cloudflare',
      type: 39,
      model: '@cf/meta/llama-3-8b-instruct',
      other: 'acc123',
      stream: true,
    });
    expect(sent?.path).toBe('/client/v4/accounts/acc123/ai/v1/chat/completions');
    expect(openaiStreamText(sink.text()).content).toBe('Hello there friend');
  });

  it('when embeddings, images, speech, transcription, moderation and rerank are relayed, then each reaches its path', async () => {
    const emb = await run({
      kind: 'openai',
      type: 1,
      mode: 'embeddings',
      model: 'text-embedding-3-small',
      body: { model: 'text-embedding-3-small', input: ['a', 'b'] },
    });
    expect(emb.sent?.path).toBe('/v1/embeddings');
    expect(JSON.parse(emb.sink.text()).data).toHaveLength(2);
    expect(emb.result.usage.promptTokens).toBe(7);

    const img = await run({
      kind: 'openai',
      type: 1,
      mode: 'images',
      model: 'dall-e-3',
      body: { model: 'dall-e-3', prompt: 'a cat', n: 2 },
    });
    expect(img.sent?.path).toBe('/v1/images/generations');
    expect(img.result.units).toBe(2);

    const tts = await run({
      kind: 'openai',
      type: 1,
      mode: 'speech',
      model: 'tts-1',
      body: { model: 'tts-1', input: 'hello', voice: 'alloy' },
    });
    expect(tts.sink.headers['content-type']).toBe('audio/mpeg');
    expect(tts.sink.text()).toContain('fake-mp3');

    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('file', new Blob([Buffer.from('RIFFfake')], { type: 'audio/wav' }), 'a.wav');
    const stt = await run({
      kind: 'openai',
      type: 1,
      mode: 'transcriptions',
      model: 'whisper-1',
      upstreamModel: 'whisper-large',
      body: form,
    });
    expect(stt.sent?.path).toBe('/v1/audio/transcriptions');
    expect(JSON.parse(stt.sink.text())).toMatchObject({ text: 'Hello there friend', model: 'whisper-large' });

    const mod = await run({
      kind: 'openai',
      type: 1,
      mode: 'moderations',
      model: 'omni-moderation-latest',
      body: { model: 'omni-moderation-latest', input: 'x' },
    });
    expect(mod.sent?.path).toBe('/v1/moderations');

    const rr = await run({
      kind: 'openai',
      type: 40,
      mode: 'rerank',
      model: 'bge-reranker',
      body: { model: 'bge-reranker', query: 'q', documents: ['a', 'b'] },
    });
    expect(rr.sent?.path).toBe('/v1/rerank');
    expect(JSON.parse(rr.sink.text()).results).toHaveLength(2);
  });

  it('when the upstream fails, then the attempt fails with its status and message', async () => {
    const fake = fakes.get('openai');
    fake?.set({ status: 500, message: 'boom', failTimes: 1 });
    const err = await run({ kind: 'openai', type: 1 }).catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect(err.status).toBe(500);
    expect(err.message).toBe('boom');
  });

  it('when the upstream is slower than the first-token timeout, then the attempt fails before anything reaches the client', async () => {
    const fake = fakes.get('openai');
    fake?.set({ firstChunkDelayMs: 400 });
    try {
      const sink = memorySink();
      const err = await run({ kind: 'openai', type: 1, stream: true, firstTokenTimeoutMs: 100, sink }).catch((e) => e);
      expect(err).toBeInstanceOf(UpstreamFailure);
      expect(err.kind).toBe('first_token_timeout');
      expect(sink.started).toBe(false);
    } finally {
      fake?.set({ firstChunkDelayMs: 0 });
    }
  });

  it('when the client goes away mid-stream, then the upstream call is cancelled and what was produced is billed', async () => {
    const fake = fakes.get('openai');
    fake?.set({ chunkDelayMs: 100, reply: 'one two three four five six seven eight' });
    try {
      const sink = memorySink();
      setTimeout(() => sink.abort(), 250);
      const { result } = await run({ kind: 'openai', type: 1, stream: true, sink });
      expect(result.aborted).toBe(true);
      expect(result.usage.completionTokens).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 100));
      expect(fake?.aborted).toBeGreaterThan(0);
    } finally {
      fake?.set({ chunkDelayMs: 0, reply: 'Hello there friend' });
    }
  });
});

describe('Anthropic adaptor (type 14)', () => {
  it('when an OpenAI chat goes to Claude, then it is translated both ways', async () => {
    const body = {
      model: 'claude-3-5-sonnet',
      messages: [
        { role: 'system', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
      max_tokens: 50,
    };
    const { result, sink, sent } = await run({ kind: 'anthropic', type: 14, model: 'claude-3-5-sonnet', body });
    expect(sent?.path).toBe('/v1/messages');
    expect(sent?.headers['x-api-key']).toBe(KEY);
    expect(sent?.headers['anthropic-version']).toBe('2023-06-01');
    const up = sent?.body as Json;
    expect(up.system).toBe('be brief');
    expect(up.max_tokens).toBe(50);
    expect((up.messages as Json[])[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      ],
    });
    const out = JSON.parse(sink.text());
    expect(out.object).toBe('chat.completion');
    expect(out.choices[0].message.content).toBe('Hello there friend');
    expect(out.choices[0].finish_reason).toBe('stop');
    expect(result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
  });

  it('when tools are offered, then Claude tool_use comes back as OpenAI tool_calls (also streamed)', async () => {
    const fake = fakes.get('anthropic');
    fake?.set({ toolCall: { name: 'get_weather', arguments: { city: 'Paris' } } });
    try {
      const tools = [
        {
          type: 'function',
          function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        },
      ];
      const body = {
        model: 'claude-3-5-sonnet',
        messages: [{ role: 'user', content: 'weather?' }],
        tools,
        tool_choice: 'required',
      };
      const { sink, sent } = await run({ kind: 'anthropic', type: 14, model: 'claude-3-5-sonnet', body });
      expect((sent?.body as Json).tools).toEqual([
        { name: 'get_weather', input_schema: tools[0]?.function.parameters },
      ]);
      expect((sent?.body as Json).tool_choice).toEqual({ type: 'any' });
      const msg = JSON.parse(sink.text()).choices[0];
      expect(msg.finish_reason).toBe('tool_calls');
      expect(msg.message.tool_calls[0].function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });

      const s = await run({
        kind: 'anthropic',
        type: 14,
        model: 'claude-3-5-sonnet',
        body: { ...body, stream: true },
        stream: true,
      });
      const chunks = openaiStreamText(s.sink.text()).chunks;
      const calls = chunks.flatMap(
        (c) =>
          (c.choices as { delta: { tool_calls?: { function: { name?: string; arguments?: string } }[] } }[])[0]?.delta
            .tool_calls ?? [],
      );
      expect(calls[0]?.function.name).toBe('get_weather');
      expect(calls.map((c) => c.function.arguments ?? '').join('')).toBe('{"city":"Paris"}');
    } finally {
      fake?.set({ toolCall: undefined });
    }
  });

  it('when an OpenAI stream goes to Claude, then Claude events become OpenAI chunks with usage', async () => {
    const { result, sink } = await run({
      kind: 'anthropic',
      type: 14,
      model: 'claude-3-5-sonnet',
      stream: true,
      includeUsage: true,
      body: {
        model: 'claude-3-5-sonnet',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        stream_options: { include_usage: true },
      },
    });
    const out = openaiStreamText(sink.text());
    expect(out.content).toBe('Hello there friend');
    expect(out.done).toBe(true);
    expect(out.chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3 });
    expect(result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
  });

  it('when a Claude client calls a Claude channel, then the request and answer pass natively', async () => {
    const { result, sink, sent } = await run({
      kind: 'anthropic',
      type: 14,
      format: 'claude',
      model: 'claude-3-5-sonnet',
      stream: true,
    });
    expect((sent?.body as Json).messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(sink.text()).toContain('event: message_start');
    expect(sink.text()).toContain('"text_delta"');
    expect(result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
  });

  it('when a Claude client calls an OpenAI channel, then the answer is a Claude message (and stream)', async () => {
    const { sink, sent } = await run({ kind: 'openai', type: 1, format: 'claude', model: 'gpt-4o-mini' });
    expect((sent?.body as Json).messages).toEqual([{ role: 'user', content: 'hi' }]);
    const msg = JSON.parse(sink.text());
    expect(msg).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'Hello there friend' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 7, output_tokens: 3 },
    });

    const s = await run({ kind: 'openai', type: 1, format: 'claude', model: 'gpt-4o-mini', stream: true });
    const text = s.sink.text();
    const events = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(events[0]).toBe('message_start');
    expect(events).toContain('content_block_delta');
    expect(events.at(-1)).toBe('message_stop');
    const deltas = [...text.matchAll(/"text_delta","text":"([^"]*)"/g)].map((m) => m[1]).join('');
    expect(deltas).toBe('Hello there friend');
  });
});

describe('Gemini adaptor (type 24)', () => {
  it('when an OpenAI chat goes to Gemini, then it is translated both ways', async () => {
    const body = {
      model: 'gemini-2.5-pro',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hi' },
      ],
      max_tokens: 20,
      temperature: 0.5,
    };
    const { result, sink, sent } = await run({ kind: 'gemini', type: 24, model: 'gemini-2.5-pro', body });
    expect(sent?.path).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
    expect(sent?.headers['x-goog-api-key']).toBe(KEY);
    expect(sent?.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      systemInstruction: { parts: [{ text: 'sys' }] },
      generationConfig: { temperature: 0.5, maxOutputTokens: 20 },
    });
    expect(JSON.parse(sink.text()).choices[0].message.content).toBe('Hello there friend');
    expect(result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
  });

  it('when an OpenAI stream goes to Gemini, then SSE events become chunks', async () => {
    const { result, sink, sent } = await run({ kind: 'gemini', type: 24, model: 'gemini-2.5-pro', stream: true });
    expect(sent?.path).toBe('/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
    expect(openaiStreamText(sink.text()).content).toBe('Hello there friend');
    expect(result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
  });

  it('when a Gemini client calls a Gemini channel or an OpenAI channel, then it gets Gemini answers', async () => {
    const native = await run({ kind: 'gemini', type: 24, format: 'gemini', model: 'gemini-2.5-pro', stream: true });
    expect(native.sink.text()).toContain('"candidates"');
    expect(native.result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });

    const viaOpenAI = await run({ kind: 'openai', type: 1, format: 'gemini', model: 'gpt-4o-mini' });
    const res = JSON.parse(viaOpenAI.sink.text());
    expect(res.candidates[0].content.parts[0].text).toBe('Hello there friend');
    expect(res.usageMetadata).toEqual({ promptTokenCount: 7, candidatesTokenCount: 3, totalTokenCount: 10 });

    const streamed = await run({ kind: 'openai', type: 1, format: 'gemini', model: 'gpt-4o-mini', stream: true });
    const texts = [...streamed.sink.text().matchAll(/"text":"([^"]*)"/g)].map((m) => m[1]).join('');
    expect(texts).toBe('Hello there friend');
  });

  it('when tools are offered to Gemini, then functionCall comes back as tool_calls', async () => {
    const fake = fakes.get('gemini');
    fake?.set({ toolCall: { name: 'lookup', arguments: { q: 'x' } } });
    try {
      const body = {
        model: 'gemini-2.5-pro',
        messages: [{ role: 'user', content: 'hi' }],
        tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      };
      const { sink, sent } = await run({ kind: 'gemini', type: 24, model: 'gemini-2.5-pro', body });
      expect((sent?.body as Json).tools).toEqual([
        { functionDeclarations: [{ name: 'lookup', parametersJsonSchema: { type: 'object' } }] },
      ]);
      const choice = JSON.parse(sink.text()).choices[0];
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.tool_calls[0].function).toEqual({ name: 'lookup', arguments: '{"q":"x"}' });
    } finally {
      fake?.set({ toolCall: undefined });
    }
  });
});

describe('Ollama (4), Cohere (34), Jina (38)', () => {
  it('when Ollama is called, then /api/chat answers (streamed as NDJSON) and /api/embed serves embeddings', async () => {
    const whole = await run({ kind: 'ollama', type: 4, model: 'llama3' });
    expect(whole.sent?.path).toBe('/api/chat');
    expect((whole.sent?.body as Json).stream).toBe(false);
    expect(JSON.parse(whole.sink.text()).choices[0].message.content).toBe('Hello there friend');
    expect(whole.result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });

    const s = await run({ kind: 'ollama', type: 4, model: 'llama3', stream: true });
    expect(openaiStreamText(s.sink.text()).content).toBe('Hello there friend');
    expect(s.result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });

    const emb = await run({
      kind: 'ollama',
      type: 4,
      mode: 'embeddings',
      model: 'nomic-embed-text',
      body: { model: 'nomic-embed-text', input: ['a'] },
    });
    expect(emb.sent?.path).toBe('/api/embed');
    expect(JSON.parse(emb.sink.text()).data[0].embedding).toEqual([0.1, 0.2, 0.3]);
  });

  it('when Cohere is called, then v2 chat (and stream) and rerank are translated', async () => {
    const whole = await run({ kind: 'cohere', type: 34, model: 'command-r' });
    expect(whole.sent?.path).toBe('/v2/chat');
    expect(JSON.parse(whole.sink.text()).choices[0].message.content).toBe('Hello there friend');
    const s = await run({ kind: 'cohere', type: 34, model: 'command-r', stream: true });
    expect(openaiStreamText(s.sink.text()).content).toBe('Hello there friend');
    expect(s.result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });

    const rr = await run({
      kind: 'cohere',
      type: 34,
      mode: 'rerank',
      model: 'rerank-v3.5',
      body: { model: 'rerank-v3.5', query: 'q', documents: ['a', 'b', 'c'], top_n: 2, return_documents: true },
    });
    expect(rr.sent?.path).toBe('/v2/rerank');
    const out = JSON.parse(rr.sink.text());
    expect(out.results).toHaveLength(2);
    expect(out.results[0].document).toEqual({ text: 'a' });
  });

  it('when Jina is called, then rerank and embeddings work', async () => {
    const rr = await run({
      kind: 'jina',
      type: 38,
      mode: 'rerank',
      model: 'jina-reranker-v2',
      body: { model: 'jina-reranker-v2', query: 'q', documents: ['a', 'b'] },
    });
    expect(rr.sent?.path).toBe('/v1/rerank');
    expect(JSON.parse(rr.sink.text()).usage).toEqual({ prompt_tokens: 7, total_tokens: 7 });
    expect(rr.result.usage.promptTokens).toBe(7);
    const emb = await run({
      kind: 'jina',
      type: 38,
      mode: 'embeddings',
      model: 'jina-embeddings-v3',
      body: { model: 'jina-embeddings-v3', input: ['a'] },
    });
    expect(emb.sent?.path).toBe('/v1/embeddings');
    expect(emb.result.usage.promptTokens).toBe(7);
  });
});
