/**
 * The OpenAI wire format, which is also the relay's canonical chat format: other protocols
 * translate to and from it. Types cover the fields the relay reads or writes; everything else
 * passes through untouched.
 */
import { UpstreamFailure } from '../exchange/failure.ts';
import { effortForBudget, openaiReasons, reasoningOf } from './reasoning.ts';
import { type SseEvent, sse } from './sse.ts';
import type { ChunkEncoder, ClientProtocol, StreamContext, StreamEncoder } from './wire.ts';

export type Json = Record<string, unknown>;

export interface ContentPart {
  type: string;
  text?: string;
  image_url?: { url: string; detail?: string };
  input_audio?: { data: string; format: string };
  [k: string]: unknown;
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  index?: number;
}

export interface ChatMessage {
  role: string;
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  [k: string]: unknown;
}

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Json };
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string | string[];
  tools?: ChatTool[];
  tool_choice?: string | { type: string; function?: { name: string } };
  n?: number;
  user?: string;
  [k: string]: unknown;
}

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: {
    cached_tokens?: number;
    audio_tokens?: number;
    /** Not OpenAI's: Claude's cache writes carried through a translated stream's usage chunk. */
    cache_creation_tokens?: number;
    /** Not OpenAI's: of those, the one-hour writes. */
    cache_creation_1h_tokens?: number;
  };
  completion_tokens_details?: { audio_tokens?: number; reasoning_tokens?: number };
}

export interface ChatChoice {
  index: number;
  message: { role: string; content: string | null; tool_calls?: ToolCall[]; [k: string]: unknown };
  finish_reason: string | null;
}

export interface ChatResponse {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatChoice[];
  usage?: OpenAIUsage;
}

export interface ChunkChoice {
  index: number;
  delta: { role?: string; content?: string | null; tool_calls?: Partial<ToolCall>[]; [k: string]: unknown };
  finish_reason: string | null;
}

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChunkChoice[];
  usage?: OpenAIUsage | null;
}

/** Token counts of one request as the relay bills them. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens read from the provider's prompt cache (part of promptTokens). */
  cachedTokens?: number;
  /** Prompt tokens written to the provider's prompt cache (part of promptTokens; Claude). */
  cacheCreationTokens?: number;
  /** Of those, written for an hour (Claude's `ttl: "1h"`; the rest for 5 minutes). */
  cacheCreation1hTokens?: number;
  audioInputTokens?: number;
  audioOutputTokens?: number;
  /** Prompt tokens that were images (gpt-image-1's input_tokens_details), part of promptTokens. */
  imageInputTokens?: number;
}

/** Reads an OpenAI usage object (chat, completions, embeddings, rerank variants). */
export function usageFromOpenAI(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const o = u as Partial<OpenAIUsage> & {
    input_tokens?: number;
    output_tokens?: number;
    input_tokens_details?: { image_tokens?: number; cached_tokens?: number };
  };
  const prompt = o.prompt_tokens ?? o.input_tokens;
  const completion = o.completion_tokens ?? o.output_tokens ?? 0;
  if (typeof prompt !== 'number') {
    if (typeof o.total_tokens === 'number') return { promptTokens: o.total_tokens, completionTokens: 0 };
    return undefined;
  }
  const usage: Usage = { promptTokens: prompt, completionTokens: completion };
  const cached = o.prompt_tokens_details?.cached_tokens ?? o.input_tokens_details?.cached_tokens;
  if (cached) usage.cachedTokens = cached;
  const written = o.prompt_tokens_details?.cache_creation_tokens;
  if (written) usage.cacheCreationTokens = written;
  const hour = o.prompt_tokens_details?.cache_creation_1h_tokens;
  if (written && hour) usage.cacheCreation1hTokens = hour;
  const audioIn = o.prompt_tokens_details?.audio_tokens;
  if (audioIn) usage.audioInputTokens = audioIn;
  const audioOut = o.completion_tokens_details?.audio_tokens;
  if (audioOut) usage.audioOutputTokens = audioOut;
  const images = o.input_tokens_details?.image_tokens;
  if (images) usage.imageInputTokens = images;
  return usage;
}

/** The OpenAI usage object for relay usage. */
export function usageToOpenAI(u: Usage): OpenAIUsage {
  const out: OpenAIUsage = {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
  };
  if (u.cachedTokens) out.prompt_tokens_details = { cached_tokens: u.cachedTokens };
  return out;
}

/** Text of a message content (string or parts). */
export function contentText(content: ChatMessage['content'] | undefined): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  let s = '';
  for (const p of content) if (p.type === 'text' && typeof p.text === 'string') s += p.text;
  return s;
}

export function chatId(): string {
  return `chatcmpl-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A chunk with one choice, the building block of translated streams. */
export function chunk(
  id: string,
  model: string,
  delta: ChunkChoice['delta'],
  finishReason: string | null = null,
  created = nowSeconds(),
): ChatChunk {
  return {
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** Parses a data URL (`data:image/png;base64,...`) into its media type and base64 data. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const m = /^data:([^;,]+)?(?:;base64)?,(.*)$/s.exec(url);
  if (!m) return undefined;
  return { mediaType: m[1] ?? 'application/octet-stream', data: m[2] ?? '' };
}

/**
 * Follows a canonical chunk stream: usage when the upstream sends it, and the text produced
 * (as a length, for a cheap estimate when the upstream never reports usage).
 */
export interface StreamTally {
  usage?: Usage;
  /** Characters of content and tool arguments produced. */
  chars: number;
  /** Characters outside the Latin range (they cost about a token each). */
  wideChars: number;
  finishReason?: string;
  id?: string;
  /** The id under which the upstream keeps the answer (see WireProtocol.stateId). */
  stateId?: string;
}

export function tallyText(t: StreamTally, s: string | null | undefined): void {
  if (!s) return;
  t.chars += s.length;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x2e7f) t.wideChars++;
}

/** Adds a canonical chunk to a tally; true when it carried content (a "token"). */
export function tallyChunk(t: StreamTally, c: ChatChunk): boolean {
  let produced = false;
  if (c.id && !t.id) t.id = c.id;
  if (c.usage) {
    const u = usageFromOpenAI(c.usage);
    if (u) t.usage = u;
  }
  for (const ch of c.choices ?? []) {
    const d = ch.delta;
    if (d) {
      if (d.content) {
        tallyText(t, d.content);
        produced = true;
      }
      const reasoning = (d as { reasoning_content?: string }).reasoning_content;
      if (reasoning) {
        tallyText(t, reasoning);
        produced = true;
      }
      if (d.tool_calls) {
        for (const tc of d.tool_calls) tallyText(t, tc.function?.arguments);
        produced = true;
      }
    }
    if (ch.finish_reason) t.finishReason = ch.finish_reason;
  }
  return produced;
}

// ---------------------------------------------------------------------------------------------
// The protocol module (registry.ts): OpenAI upstreams, and clients of /v1/chat/completions.
// ---------------------------------------------------------------------------------------------

const USAGE_OPTION = Buffer.from('"stream_options":{"include_usage":true},');

/** OpenAI's error body. */
export function openaiError(status: number, message: string, code?: string): Json {
  const type =
    status === 429
      ? 'rate_limit_error'
      : status >= 500
        ? 'server_error'
        : status === 401 || status === 403
          ? 'authentication_error'
          : 'invalid_request_error';
  return { error: { message, type, param: null, code: code ?? null } };
}

/** OpenAI upstream to OpenAI client: events go out as they came, minus the usage chunk the relay asked for. */
function openaiPassthroughStream(ctx: StreamContext, tally: StreamTally): StreamEncoder {
  const completions = ctx.mode === 'completions';
  const includeUsage = ctx.includeUsage;
  let done = false;
  return {
    event: (e) => {
      const ev = e as SseEvent;
      if (!ev.data) return { out: '', produced: false };
      if (ev.data === '[DONE]') {
        done = true;
        return { out: 'data: [DONE]\n\n', produced: false };
      }
      let c: ChatChunk & { choices: { text?: string }[] };
      try {
        c = JSON.parse(ev.data);
      } catch {
        return { out: sse(ev.data), produced: false };
      }
      if ((c as unknown as { error?: unknown }).error)
        throw new UpstreamFailure(500, JSON.stringify((c as unknown as { error: unknown }).error));
      let produced = tallyChunk(tally, c);
      if (completions) {
        for (const ch of c.choices ?? []) {
          if (ch.text) {
            tallyText(tally, ch.text);
            produced = true;
          }
        }
      }
      // The usage-only chunk the relay asked for on the client's behalf stays with the relay.
      if (!includeUsage && c.usage && (c.choices?.length ?? 0) === 0) return { out: '', produced };
      return { out: `data: ${ev.data}\n\n`, produced };
    },
    end: () => (done ? '' : 'data: [DONE]\n\n'),
  };
}

/** Canonical chunks to an OpenAI client: its model name, usage only at the end and when asked for. */
function openaiChunkEncoder(ctx: StreamContext, tally: StreamTally): ChunkEncoder {
  const model = ctx.model;
  return {
    onChunk(c) {
      if (c.usage !== undefined) delete c.usage;
      if (c.choices.length === 0) return '';
      c.model = model;
      return sse(JSON.stringify(c));
    },
    end(usage) {
      let out = '';
      if (ctx.includeUsage) {
        out += sse(
          JSON.stringify({
            id: tally.id ?? 'chatcmpl-relay',
            object: 'chat.completion.chunk',
            created: Math.floor(Date.now() / 1000),
            model,
            choices: [],
            usage: usageToOpenAI(usage),
          }),
        );
      }
      return `${out}data: [DONE]\n\n`;
    },
  };
}

export const openaiProtocol: ClientProtocol = {
  framing: 'sse',
  request(c, call) {
    const out: Json = { ...c, model: call.model };
    // A translated client's thinking (Claude, Gemini) as an effort, for the models that take one.
    const intent = reasoningOf(c);
    if (intent && out.reasoning_effort === undefined && openaiReasons(call.model)) {
      const effort = intent.enabled ? (intent.effort ?? effortForBudget(intent.budget ?? 2048)) : undefined;
      if (effort) out.reasoning_effort = effort;
    }
    // Signed thinking is Claude's, kept for the relay's own round trip: no OpenAI field.
    if (c.messages.some((m) => m.reasoning_details !== undefined))
      out.messages = c.messages.map(({ reasoning_details: _, ...m }) => m);
    if (call.stream) {
      out.stream = true;
      if (call.streamOptions) out.stream_options = { include_usage: true };
    } else delete out.stream;
    return out;
  },
  toCanonical: (res) => res as unknown as ChatResponse,
  usage: (res) => usageFromOpenAI(res.usage),
  streamDecoder: () => (e) => {
    const ev = e as SseEvent;
    return ev.data && ev.data !== '[DONE]' ? [JSON.parse(ev.data) as ChatChunk] : [];
  },
  client: {
    canonical: (body) => body as unknown as ChatRequest,
    withSuffix: (body, meaning) => ({
      ...body,
      model: meaning.model,
      reasoning_effort: meaning.intent.effort ?? 'none',
    }),
    passthrough(req, call) {
      const body = req.body;
      // Ask for usage in streams so the bill is exact.
      const addUsage = req.stream && !req.includeUsage && call.streamOptions;
      if (req.raw && call.model === req.model) {
        if (!addUsage) return req.raw;
        // The raw text with the option spliced in after its opening brace (no re-serialising).
        if (body.stream_options === undefined) {
          const brace = req.raw.indexOf(0x7b);
          if (brace >= 0)
            return Buffer.concat([req.raw.subarray(0, brace + 1), USAGE_OPTION, req.raw.subarray(brace + 1)]);
        }
      }
      const out: Json = { ...body, model: call.model };
      if (addUsage) out.stream_options = { ...((body.stream_options as Json | undefined) ?? {}), include_usage: true };
      return JSON.stringify(out);
    },
    passthroughStream: openaiPassthroughStream,
    fromCanonical: (res) => res as unknown as Json,
    chunkEncoder: openaiChunkEncoder,
    error: openaiError,
    streamError: (message) => sse(JSON.stringify(openaiError(500, message))),
  },
};
