/**
 * Fake AI providers for tests and benchmarks: real HTTP servers on 127.0.0.1 speaking each
 * provider's wire format, streaming included. Other services' tests reuse them:
 *
 * @example
 * const fake = await startFakeProvider({ kind: 'openai', key: 'sk-upstream', reply: 'Hello there' });
 * // channel base_url: fake.url
 * fake.set({ status: 500 });        // the next requests fail with 500 (in the provider's error shape)
 * fake.set({ failTimes: 1, status: 429 }); // only the next one
 * fake.requests.at(-1)              // { method, path, headers, body } of what the relay sent
 * await fake.close();
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  cacheControls,
  claudeExtras,
  FAKE_THINKING,
  refuseThinking,
  thinkingSignature,
  thinks,
} from './fake-claude-extras.ts';
import { fakeResponses } from './fake-responses.ts';

export type FakeKind = 'openai' | 'azure' | 'anthropic' | 'gemini' | 'ollama' | 'cohere' | 'jina' | 'cloudflare';

export interface FakeBehaviour {
  /** The assistant's answer; streamed word by word. */
  reply: string;
  /** Prompt tokens reported in usage (cached and cache-written ones included). */
  promptTokens: number;
  /** Of those, read from the provider's prompt cache (each provider's own usage field). */
  cachedTokens: number;
  /** Of those, written to the prompt cache (Anthropic's cache_creation_input_tokens). */
  cacheWriteTokens: number;
  /** Image generations report gpt-image-1's token usage (input split into text and image). */
  imageUsage?: { textTokens: number; imageTokens: number; outputTokens: number };
  /** Report usage at all (OpenAI streams report it only when asked through stream_options). */
  reportUsage: boolean;
  /** Non-zero: answer this HTTP status with the provider's error body. */
  status: number;
  /** The error message (e.g. "Incorrect API key provided"). */
  message: string;
  /** Fail only the next N requests (then answer normally); 0 = every request while status is set. */
  failTimes: number;
  /** Delay before the response headers. */
  delayMs: number;
  /** Delay between the headers and the first streamed chunk. */
  firstChunkDelayMs: number;
  /** Delay between streamed chunks. */
  chunkDelayMs: number;
  /** Answer with a tool call to this function when the request offers tools. */
  toolCall?: { name: string; arguments: Record<string, unknown> };
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** Raw body text (multipart bodies stay raw). */
  raw: string;
  /** The body's bytes as they came (multipart files are binary). */
  bytes: Buffer;
}

export interface FakeProvider {
  url: string;
  port: number;
  kind: FakeKind;
  requests: RecordedRequest[];
  /** Requests whose client went away before the answer ended. */
  aborted: number;
  set(b: Partial<FakeBehaviour>): void;
  reset(): void;
  close(): Promise<void>;
}

export interface FakeOptions extends Partial<FakeBehaviour> {
  kind: FakeKind;
  /** When set, requests without this key get 401. */
  key?: string;
  /** Several accepted keys (multi-key channels); any other gets 401. */
  keys?: string[];
  /** Keep no request log (benchmarks). */
  record?: boolean;
  port?: number;
}

const DEFAULTS: FakeBehaviour = {
  reply: 'Hello from the fake provider',
  promptTokens: 10,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reportUsage: true,
  status: 0,
  message: 'upstream failure',
  failTimes: 0,
  delayMs: 0,
  firstChunkDelayMs: 0,
  chunkDelayMs: 0,
};

const sleep = (ms: number) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

/** Starts a fake provider of one kind. */
export async function startFakeProvider(opts: FakeOptions): Promise<FakeProvider> {
  const { kind, key, keys, record = true, port = 0, ...initial } = opts;
  const accepted = keys ?? (key ? [key] : undefined);
  let b: FakeBehaviour = { ...DEFAULTS, ...initial };
  const requests: RecordedRequest[] = [];
  const state = { aborted: 0 };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const raw = bytes.toString('utf8');
      let body: unknown = raw;
      if ((req.headers['content-type'] ?? '').includes('json') && raw) {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
        }
      }
      const url = new URL(req.url ?? '/', 'http://fake');
      const rec: RecordedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname + url.search,
        headers: req.headers,
        body,
        raw,
        bytes,
      };
      if (record) requests.push(rec);
      res.on('close', () => {
        if (!res.writableFinished) state.aborted++;
      });
      handle(kind, accepted, b, rec, url, res)
        .then(() => {
          if (b.failTimes > 0 && b.status) {
            b.failTimes -= 1;
            if (b.failTimes === 0) b.status = 0;
          }
        })
        .catch(() => res.destroy());
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    kind,
    requests,
    get aborted() {
      return state.aborted;
    },
    set(patch) {
      b = { ...b, ...patch };
    },
    reset() {
      b = { ...DEFAULTS, ...initial };
      requests.length = 0;
      state.aborted = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function words(text: string): string[] {
  const parts = text.split(' ');
  return parts.map((w, i) => (i < parts.length - 1 ? `${w} ` : w));
}

function errorBody(kind: FakeKind, status: number, message: string): unknown {
  switch (kind) {
    case 'anthropic':
      return { type: 'error', error: { type: status === 401 ? 'authentication_error' : 'api_error', message } };
    case 'gemini':
      return { error: { code: status, message, status: status === 401 ? 'UNAUTHENTICATED' : 'INTERNAL' } };
    case 'ollama':
      return { error: message };
    case 'cohere':
      return { message };
    case 'jina':
      return { detail: message };
    default:
      return {
        error: {
          message,
          type: status === 401 ? 'invalid_request_error' : 'server_error',
          param: null,
          code: status === 401 ? 'invalid_api_key' : null,
        },
      };
  }
}

function presentedKey(kind: FakeKind, rec: RecordedRequest, url: URL): string {
  const h = rec.headers;
  if (kind === 'anthropic') return String(h['x-api-key'] ?? '');
  if (kind === 'gemini') return String(h['x-goog-api-key'] ?? url.searchParams.get('key') ?? '');
  if (kind === 'azure') return String(h['api-key'] ?? '');
  return String(h.authorization ?? '').replace(/^Bearer\s+/i, '');
}

async function handle(
  kind: FakeKind,
  accepted: string[] | undefined,
  b: FakeBehaviour,
  rec: RecordedRequest,
  url: URL,
  res: ServerResponse,
) {
  await sleep(b.delayMs);
  if (accepted && !accepted.includes(presentedKey(kind, rec, url))) {
    json(res, 401, errorBody(kind, 401, 'Incorrect API key provided'));
    return;
  }
  if (b.status) {
    json(res, b.status, errorBody(kind, b.status, b.message));
    return;
  }
  const body = (typeof rec.body === 'object' && rec.body ? rec.body : {}) as Record<string, unknown>;
  const path = url.pathname;
  switch (kind) {
    case 'openai':
    case 'azure':
    case 'cloudflare':
      return openai(b, body, path, rec, res);
    case 'anthropic':
      if (claudeExtras(rec.headers, body, path, b.promptTokens, res)) return;
      if (refuseThinking(body, res)) return;
      return anthropic(b, body, res);
    case 'gemini':
      return gemini(b, body, path, res);
    case 'ollama':
      return ollama(b, body, path, res);
    case 'cohere':
      return cohere(b, body, path, res);
    case 'jina':
      return jina(b, body, path, res);
  }
}

async function streamOut(
  res: ServerResponse,
  b: FakeBehaviour,
  events: string[],
  contentType = 'text/event-stream',
): Promise<void> {
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache' });
  res.flushHeaders();
  await sleep(b.firstChunkDelayMs);
  for (let i = 0; i < events.length; i++) {
    if (res.destroyed) return;
    if (i > 0) await sleep(b.chunkDelayMs);
    res.write(events[i]);
  }
  res.end();
}

const sseData = (o: unknown) => `data: ${typeof o === 'string' ? o : JSON.stringify(o)}\n\n`;
const sseEvent = (event: string, o: unknown) => `event: ${event}\ndata: ${JSON.stringify(o)}\n\n`;
const hasTools = (body: Record<string, unknown>) => Array.isArray(body.tools) && body.tools.length > 0;

async function openai(
  b: FakeBehaviour,
  body: Record<string, unknown>,
  path: string,
  rec: RecordedRequest,
  res: ServerResponse,
) {
  const model = String(body.model ?? 'fake-model');
  const created = Math.floor(Date.now() / 1000);
  if (path.endsWith('/models'))
    return json(res, 200, {
      object: 'list',
      data: [{ id: 'gpt-4o-mini', object: 'model', created, owned_by: 'fake' }],
    });
  const responses = fakeResponses(b, body, path, rec.method, res, (events) => streamOut(res, b, events));
  if (responses) return responses;
  const reply: OpenAiReply = { model, created, usage: openaiUsage(b) };
  if (path.endsWith('/chat/completions')) return openaiChat(b, body, reply, res);
  if (path.endsWith('/completions')) return openaiCompletions(b, body, reply, res);
  if (path.endsWith('/embeddings')) {
    const inputs = Array.isArray(body.input) ? body.input : [body.input];
    return json(res, 200, {
      object: 'list',
      data: inputs.map((_x, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3] })),
      model,
      usage: { prompt_tokens: b.promptTokens, total_tokens: b.promptTokens },
    });
  }
  if (path.endsWith('/images/generations') || path.endsWith('/images/edits') || path.endsWith('/images/variations'))
    return openaiImages(b, body, path, rec, created, res);
  if (path.endsWith('/audio/speech')) {
    const audio = Buffer.from('ID3fake-mp3-bytes');
    res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': audio.length });
    res.end(audio);
    return;
  }
  if (path.endsWith('/audio/transcriptions') || path.endsWith('/audio/translations')) {
    const m = /name="model"\r\n\r\n([^\r]*)/.exec(rec.raw);
    return json(res, 200, { text: b.reply, ...(m ? { model: m[1] } : {}) });
  }
  if (path.endsWith('/moderations')) {
    return json(res, 200, {
      id: 'modr-fake',
      model,
      results: [{ flagged: false, categories: {}, category_scores: {} }],
    });
  }
  if (path.endsWith('/rerank')) return rerank(b, body, res);
  json(res, 404, { error: { message: `no route ${path}`, type: 'invalid_request_error' } });
}

/** What every OpenAI completion answer carries: the model asked, the creation time, the usage. */
interface OpenAiReply {
  model: string;
  created: number;
  usage: Record<string, unknown>;
}

/** OpenAI's usage object for a reply of `b.reply` (one completion token per word). */
function openaiUsage(b: FakeBehaviour): Record<string, unknown> {
  const completion = words(b.reply).length;
  return {
    prompt_tokens: b.promptTokens,
    completion_tokens: completion,
    total_tokens: b.promptTokens + completion,
    ...(b.cachedTokens ? { prompt_tokens_details: { cached_tokens: b.cachedTokens } } : {}),
  };
}

/** POST /v1/chat/completions: the reply (or the scripted tool call), whole or as chunks. */
function openaiChat(b: FakeBehaviour, body: Record<string, unknown>, reply: OpenAiReply, res: ServerResponse) {
  const { model, created, usage } = reply;
  const tool = b.toolCall && hasTools(body) ? b.toolCall : undefined;
  if (body.stream === true) return streamOut(res, b, openaiChatChunks(b, body, reply, tool));
  const message: Record<string, unknown> = { role: 'assistant', content: tool ? null : b.reply };
  if (tool)
    message.tool_calls = [
      { id: 'call_fake', type: 'function', function: { name: tool.name, arguments: JSON.stringify(tool.arguments) } },
    ];
  return json(res, 200, {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created,
    model,
    choices: [{ index: 0, message, finish_reason: tool ? 'tool_calls' : 'stop' }],
    ...(b.reportUsage ? { usage } : {}),
  });
}

/** The SSE events of a streamed chat completion: role, the words or the tool call, finish, usage, [DONE]. */
function openaiChatChunks(
  b: FakeBehaviour,
  body: Record<string, unknown>,
  reply: OpenAiReply,
  tool: FakeBehaviour['toolCall'],
): string[] {
  const { model, created, usage } = reply;
  const wantUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created, model };
  const events: string[] = [
    sseData({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
  ];
  if (tool) {
    events.push(
      sseData({
        ...base,
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index: 0, id: 'call_fake', type: 'function', function: { name: tool.name, arguments: '' } },
              ],
            },
            finish_reason: null,
          },
        ],
      }),
    );
    events.push(
      sseData({
        ...base,
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, function: { arguments: JSON.stringify(tool.arguments) } }] },
            finish_reason: null,
          },
        ],
      }),
    );
  } else {
    for (const word of words(b.reply))
      events.push(sseData({ ...base, choices: [{ index: 0, delta: { content: word }, finish_reason: null }] }));
  }
  events.push(sseData({ ...base, choices: [{ index: 0, delta: {}, finish_reason: tool ? 'tool_calls' : 'stop' }] }));
  if (wantUsage && b.reportUsage) events.push(sseData({ ...base, choices: [], usage }));
  events.push('data: [DONE]\n\n');
  return events;
}

/** POST /v1/completions (legacy text completions), whole or streamed word by word. */
function openaiCompletions(b: FakeBehaviour, body: Record<string, unknown>, reply: OpenAiReply, res: ServerResponse) {
  const { model, created, usage } = reply;
  if (body.stream === true) {
    const events = words(b.reply).map((word) =>
      sseData({
        id: 'cmpl-fake',
        object: 'text_completion',
        created,
        model,
        choices: [{ index: 0, text: word, finish_reason: null }],
      }),
    );
    events.push(
      sseData({
        id: 'cmpl-fake',
        object: 'text_completion',
        created,
        model,
        choices: [{ index: 0, text: '', finish_reason: 'stop' }],
        ...(b.reportUsage ? { usage } : {}),
      }),
    );
    events.push('data: [DONE]\n\n');
    return streamOut(res, b, events);
  }
  return json(res, 200, {
    id: 'cmpl-fake',
    object: 'text_completion',
    created,
    model,
    choices: [{ index: 0, text: b.reply, finish_reason: 'stop' }],
    ...(b.reportUsage ? { usage } : {}),
  });
}

/**
 * The image endpoints: generations answer URLs; gpt-image-1's edit (image or image[] files, prompt,
 * n) and DALL-E 2's variation (image, n) take multipart and answer base64 images. Both carry
 * gpt-image-1's token usage when `b.imageUsage` is set.
 */
function openaiImages(
  b: FakeBehaviour,
  body: Record<string, unknown>,
  path: string,
  rec: RecordedRequest,
  created: number,
  res: ServerResponse,
) {
  const usage = b.imageUsage
    ? {
        usage: {
          total_tokens: b.imageUsage.textTokens + b.imageUsage.imageTokens + b.imageUsage.outputTokens,
          input_tokens: b.imageUsage.textTokens + b.imageUsage.imageTokens,
          output_tokens: b.imageUsage.outputTokens,
          input_tokens_details: { text_tokens: b.imageUsage.textTokens, image_tokens: b.imageUsage.imageTokens },
        },
      }
    : {};
  if (path.endsWith('/images/generations')) {
    const n = Number(body.n ?? 1);
    return json(res, 200, {
      created,
      data: Array.from({ length: n }, () => ({
        url: 'https://example.invalid/image.png',
        revised_prompt: String(body.prompt ?? ''),
      })),
      ...usage,
    });
  }
  const n = Number(/name="n"\r\n\r\n(\d+)/.exec(rec.raw)?.[1] ?? 1);
  return json(res, 200, {
    created,
    data: Array.from({ length: n }, () => ({ b64_json: Buffer.from('fake-png').toString('base64') })),
    ...usage,
  });
}

function rerank(b: FakeBehaviour, body: Record<string, unknown>, res: ServerResponse) {
  const docs = (body.documents as unknown[] | undefined) ?? [];
  const results = docs.map((d, index) => ({
    index,
    relevance_score: 1 - index / (docs.length + 1),
    ...(body.return_documents ? { document: typeof d === 'string' ? { text: d } : d } : {}),
  }));
  const topN = typeof body.top_n === 'number' ? body.top_n : results.length;
  return json(res, 200, {
    model: body.model,
    usage: { total_tokens: b.promptTokens },
    results: results.slice(0, topN),
  });
}

async function anthropic(b: FakeBehaviour, body: Record<string, unknown>, res: ServerResponse) {
  const model = String(body.model ?? 'claude-fake');
  const w = words(b.reply);
  const tool = b.toolCall && hasTools(body) ? b.toolCall : undefined;
  // With thinking on, a signed thinking block comes first and the other blocks follow it.
  const thinking = thinks(body);
  if (body.stream === true) return streamOut(res, b, anthropicEvents(b, body, model, tool, thinking));
  const content: Record<string, unknown>[] = tool
    ? [{ type: 'tool_use', id: 'toolu_fake', name: tool.name, input: tool.arguments }]
    : [{ type: 'text', text: b.reply }];
  if (thinking)
    content.unshift({ type: 'thinking', thinking: FAKE_THINKING, signature: thinkingSignature(FAKE_THINKING) });
  return json(res, 200, {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: tool ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { ...claudeInput(b, body), output_tokens: w.length },
  });
}

/**
 * The SSE events of a streamed Messages answer: message_start, the signed thinking block when
 * thinking is on, then the tool_use block or the text word by word, message_delta and message_stop.
 */
function anthropicEvents(
  b: FakeBehaviour,
  body: Record<string, unknown>,
  model: string,
  tool: FakeBehaviour['toolCall'],
  thinking: boolean,
): string[] {
  const w = words(b.reply);
  const at = thinking ? 1 : 0;
  const events = [
    sseEvent('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...claudeInput(b, body), output_tokens: 1 },
      },
    }),
    sseEvent('ping', { type: 'ping' }),
  ];
  if (thinking) {
    events.push(
      sseEvent('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      }),
      sseEvent('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'thinking_delta', thinking: FAKE_THINKING },
      }),
      sseEvent('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'signature_delta', signature: thinkingSignature(FAKE_THINKING) },
      }),
      sseEvent('content_block_stop', { type: 'content_block_stop', index: 0 }),
    );
  }
  if (tool) {
    events.push(
      sseEvent('content_block_start', {
        type: 'content_block_start',
        index: at,
        content_block: { type: 'tool_use', id: 'toolu_fake', name: tool.name, input: {} },
      }),
    );
    events.push(
      sseEvent('content_block_delta', {
        type: 'content_block_delta',
        index: at,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(tool.arguments) },
      }),
    );
  } else {
    events.push(
      sseEvent('content_block_start', {
        type: 'content_block_start',
        index: at,
        content_block: { type: 'text', text: '' },
      }),
    );
    for (const word of w)
      events.push(
        sseEvent('content_block_delta', {
          type: 'content_block_delta',
          index: at,
          delta: { type: 'text_delta', text: word },
        }),
      );
  }
  events.push(sseEvent('content_block_stop', { type: 'content_block_stop', index: at }));
  events.push(
    sseEvent('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: tool ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: w.length },
    }),
  );
  events.push(sseEvent('message_stop', { type: 'message_stop' }));
  return events;
}

/**
 * Anthropic's input fields: input_tokens counts only what was neither read from nor written to the
 * cache; the writes split by lifetime in `cache_creation` (an hour when a breakpoint asked for it).
 */
function claudeInput(b: FakeBehaviour, body: Record<string, unknown>): Record<string, unknown> {
  const hour = cacheControls(body).some((c) => c.ttl === '1h');
  return {
    input_tokens: b.promptTokens - b.cachedTokens - b.cacheWriteTokens,
    ...(b.cachedTokens || b.cacheWriteTokens
      ? {
          cache_read_input_tokens: b.cachedTokens,
          cache_creation_input_tokens: b.cacheWriteTokens,
          cache_creation: {
            ephemeral_5m_input_tokens: hour ? 0 : b.cacheWriteTokens,
            ephemeral_1h_input_tokens: hour ? b.cacheWriteTokens : 0,
          },
        }
      : {}),
  };
}

/** The thought the Gemini fake shows when asked to include thoughts. */
export const FAKE_GEMINI_THOUGHT = 'Considering the question.';

/** Gemini's checks of thinkingConfig: a budget or a level, not both; a budget is a whole number. */
function geminiThinkingError(tc: Record<string, unknown> | undefined): string | undefined {
  if (!tc) return undefined;
  if (tc.thinkingBudget !== undefined && tc.thinkingLevel !== undefined)
    return 'You can only set only one of thinking budget and thinking level.';
  if (tc.thinkingBudget !== undefined && !Number.isInteger(tc.thinkingBudget))
    return "Invalid value at 'generation_config.thinking_config.thinking_budget'";
  if (
    tc.thinkingLevel !== undefined &&
    !['minimal', 'low', 'medium', 'high'].includes(String(tc.thinkingLevel).toLowerCase())
  )
    return `Invalid value at 'generation_config.thinking_config.thinking_level' (${String(tc.thinkingLevel)})`;
  return undefined;
}

async function gemini(b: FakeBehaviour, body: Record<string, unknown>, path: string, res: ServerResponse) {
  const m = /\/models\/([^:]+):(\w+)/.exec(path);
  if (!m) return json(res, 404, errorBody('gemini', 404, `no route ${path}`));
  const model = decodeURIComponent(m[1] ?? '');
  if (m[2] === 'countTokens') {
    // Gemini's count: contents, or a whole generateContentRequest; the prompt's size as configured.
    const counted = (body.generateContentRequest as Record<string, unknown> | undefined) ?? body;
    if (!Array.isArray(counted.contents)) return json(res, 400, errorBody('gemini', 400, 'contents is required'));
    return json(res, 200, { totalTokens: b.promptTokens });
  }
  const w = words(b.reply);
  const thinkingConfig = (body.generationConfig as { thinkingConfig?: Record<string, unknown> } | undefined)
    ?.thinkingConfig;
  const thinkingError = geminiThinkingError(thinkingConfig);
  if (thinkingError)
    return json(res, 400, { error: { code: 400, message: thinkingError, status: 'INVALID_ARGUMENT' } });
  // Thoughts shown only when asked for (includeThoughts), counted apart as thoughtsTokenCount.
  const thought = thinkingConfig?.includeThoughts === true ? [{ text: FAKE_GEMINI_THOUGHT, thought: true }] : [];
  const usage = {
    promptTokenCount: b.promptTokens,
    candidatesTokenCount: w.length,
    totalTokenCount: b.promptTokens + w.length + thought.length * 3,
    ...(b.cachedTokens ? { cachedContentTokenCount: b.cachedTokens } : {}),
    ...(thought.length ? { thoughtsTokenCount: 3 } : {}),
  };
  const tool = b.toolCall && hasTools(body) ? b.toolCall : undefined;
  if (m[2] === 'streamGenerateContent') {
    const events = tool
      ? [
          sseData({
            candidates: [
              {
                content: { role: 'model', parts: [{ functionCall: { name: tool.name, args: tool.arguments } }] },
                finishReason: 'STOP',
                index: 0,
              },
            ],
            usageMetadata: usage,
            modelVersion: model,
          }),
        ]
      : w.map((word, i) =>
          sseData({
            candidates: [
              {
                content: { role: 'model', parts: i === 0 ? [...thought, { text: word }] : [{ text: word }] },
                index: 0,
                ...(i === w.length - 1 ? { finishReason: 'STOP' } : {}),
              },
            ],
            usageMetadata:
              i === w.length - 1 ? usage : { promptTokenCount: b.promptTokens, totalTokenCount: b.promptTokens },
            modelVersion: model,
          }),
        );
    return streamOut(res, b, events);
  }
  const parts = [
    ...thought,
    ...(tool ? [{ functionCall: { name: tool.name, args: tool.arguments } }] : [{ text: b.reply }]),
  ];
  return json(res, 200, {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: usage,
    modelVersion: model,
    responseId: 'fake-response',
  });
}

async function ollama(b: FakeBehaviour, body: Record<string, unknown>, path: string, res: ServerResponse) {
  const model = String(body.model ?? 'llama3');
  const created_at = new Date().toISOString();
  if (path === '/api/embed') {
    const inputs = Array.isArray(body.input) ? body.input : [body.input];
    return json(res, 200, { model, embeddings: inputs.map(() => [0.1, 0.2, 0.3]), prompt_eval_count: b.promptTokens });
  }
  if (path !== '/api/chat') return json(res, 404, { error: `no route ${path}` });
  const w = words(b.reply);
  const done = {
    model,
    created_at,
    message: { role: 'assistant', content: '' },
    done: true,
    done_reason: 'stop',
    prompt_eval_count: b.promptTokens,
    eval_count: w.length,
  };
  if (body.stream !== false) {
    const lines = w.map(
      (word) =>
        `${JSON.stringify({ model, created_at, message: { role: 'assistant', content: word }, done: false })}\n`,
    );
    lines.push(`${JSON.stringify(done)}\n`);
    return streamOut(res, b, lines, 'application/x-ndjson');
  }
  return json(res, 200, { ...done, message: { role: 'assistant', content: b.reply } });
}

async function cohere(b: FakeBehaviour, body: Record<string, unknown>, path: string, res: ServerResponse) {
  const w = words(b.reply);
  const usage = {
    billed_units: { input_tokens: b.promptTokens, output_tokens: w.length },
    tokens: { input_tokens: b.promptTokens, output_tokens: w.length },
  };
  if (path === '/v2/rerank') {
    const docs = (body.documents as unknown[] | undefined) ?? [];
    const results = docs.map((_d, index) => ({ index, relevance_score: 1 - index / (docs.length + 1) }));
    const topN = typeof body.top_n === 'number' ? body.top_n : results.length;
    return json(res, 200, {
      id: 'rerank-fake',
      results: results.slice(0, topN),
      meta: { billed_units: { search_units: 1 } },
    });
  }
  if (path === '/v2/embed') {
    const texts = (body.texts as unknown[] | undefined) ?? [];
    return json(res, 200, {
      id: 'embed-fake',
      embeddings: { float: texts.map(() => [0.1, 0.2, 0.3]) },
      texts,
      meta: { billed_units: { input_tokens: b.promptTokens } },
    });
  }
  if (path !== '/v2/chat') return json(res, 404, { message: `no route ${path}` });
  if (body.stream === true) {
    const events = [
      sseEvent('message-start', {
        id: 'cohere-fake',
        type: 'message-start',
        delta: { message: { role: 'assistant', content: [] } },
      }),
    ];
    events.push(
      sseEvent('content-start', {
        type: 'content-start',
        index: 0,
        delta: { message: { content: { type: 'text', text: '' } } },
      }),
    );
    for (const word of w)
      events.push(
        sseEvent('content-delta', { type: 'content-delta', index: 0, delta: { message: { content: { text: word } } } }),
      );
    events.push(sseEvent('content-end', { type: 'content-end', index: 0 }));
    events.push(sseEvent('message-end', { type: 'message-end', delta: { finish_reason: 'COMPLETE', usage } }));
    return streamOut(res, b, events);
  }
  return json(res, 200, {
    id: 'cohere-fake',
    finish_reason: 'COMPLETE',
    message: { role: 'assistant', content: [{ type: 'text', text: b.reply }] },
    usage,
  });
}

async function jina(b: FakeBehaviour, body: Record<string, unknown>, path: string, res: ServerResponse) {
  if (path === '/v1/rerank') return rerank(b, body, res);
  if (path === '/v1/embeddings') {
    const inputs = Array.isArray(body.input) ? body.input : [body.input];
    return json(res, 200, {
      model: body.model,
      object: 'list',
      data: inputs.map((_x, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3] })),
      usage: { total_tokens: b.promptTokens, prompt_tokens: b.promptTokens },
    });
  }
  return json(res, 404, { detail: `no route ${path}` });
}
