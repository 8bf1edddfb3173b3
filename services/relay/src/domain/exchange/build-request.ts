import type { Adaptor, ChannelTarget, RelayMode } from '../adaptors/index.ts';
import { claudeToOpenAIRequest, openaiToClaudeRequest } from '../protocols/claude.ts';
import { openaiToCohereRequest } from '../protocols/cohere.ts';
import { geminiToOpenAIRequest, openaiToGeminiRequest } from '../protocols/gemini.ts';
import { openaiToOllamaRequest } from '../protocols/ollama.ts';
import type { ChatRequest, Json } from '../protocols/openai.ts';
import type { ClientFormat } from './ports.ts';

/** The client's request as the relay received it. */
export interface ClientRequest {
  format: ClientFormat;
  mode: RelayMode;
  /** The model the client asked for. */
  model: string;
  stream: boolean;
  /** Parsed JSON body, or the multipart form of audio uploads. */
  body: Json | FormData;
  /** The raw JSON text, sent unchanged when nothing needs rewriting. */
  raw?: Buffer;
  /** The client asked for usage in its stream (OpenAI stream_options.include_usage). */
  includeUsage: boolean;
}

/** The chat request in the OpenAI (canonical) format, built once per client request. */
export function canonicalChat(req: ClientRequest): ChatRequest {
  const body = req.body as Json;
  if (req.format === 'openai') return body as ChatRequest;
  if (req.format === 'claude') return claudeToOpenAIRequest(body);
  return geminiToOpenAIRequest(body, req.model, req.stream);
}

const USAGE_OPTION = Buffer.from('"stream_options":{"include_usage":true},');

/** Upstreams that reject stream_options (they report usage without being asked, or never). */
const NO_STREAM_OPTIONS = new Set([42]);

/** Builds the upstream body for one channel: `upstreamModel` is the model after model_mapping. */
export function buildUpstreamBody(
  req: ClientRequest,
  adaptor: Adaptor,
  ch: ChannelTarget,
  upstreamModel: string,
  canonical: () => ChatRequest,
): string | Buffer | FormData {
  if (req.body instanceof FormData) {
    if (upstreamModel === req.model) return req.body;
    const form = new FormData();
    for (const [k, v] of req.body.entries()) form.append(k, k === 'model' ? upstreamModel : v);
    return form;
  }
  const body = req.body;
  if (req.mode !== 'chat') {
    const convert = adaptor.convert?.[req.mode];
    if (convert) return JSON.stringify(convert.request(body, upstreamModel));
    if (req.raw && upstreamModel === req.model) return req.raw;
    return JSON.stringify({ ...body, model: upstreamModel });
  }
  const p = adaptor.protocol;
  if (p === req.format) {
    if (p === 'gemini') return req.raw ?? JSON.stringify(body);
    if (p === 'claude')
      return req.raw && upstreamModel === req.model ? req.raw : JSON.stringify({ ...body, model: upstreamModel });
    // OpenAI to OpenAI: ask for usage in streams so the bill is exact.
    const addUsage = req.stream && !req.includeUsage && !NO_STREAM_OPTIONS.has(ch.type);
    if (req.raw && upstreamModel === req.model) {
      if (!addUsage) return req.raw;
      // The raw text with the option spliced in after its opening brace (no re-serialising).
      if (body.stream_options === undefined) {
        const brace = req.raw.indexOf(0x7b);
        if (brace >= 0)
          return Buffer.concat([req.raw.subarray(0, brace + 1), USAGE_OPTION, req.raw.subarray(brace + 1)]);
      }
    }
    const out: Json = { ...body, model: upstreamModel };
    if (addUsage) out.stream_options = { ...((body.stream_options as Json | undefined) ?? {}), include_usage: true };
    return JSON.stringify(out);
  }
  const c = canonical();
  switch (p) {
    case 'openai': {
      const out: Json = { ...c, model: upstreamModel };
      if (req.stream) {
        out.stream = true;
        if (!NO_STREAM_OPTIONS.has(ch.type)) out.stream_options = { include_usage: true };
      } else delete out.stream;
      return JSON.stringify(out);
    }
    case 'claude':
      return JSON.stringify(openaiToClaudeRequest({ ...c, stream: req.stream }, upstreamModel));
    case 'gemini':
      return JSON.stringify(openaiToGeminiRequest(c));
    case 'ollama':
      return JSON.stringify(openaiToOllamaRequest({ ...c, stream: req.stream }, upstreamModel));
    case 'cohere':
      return JSON.stringify(openaiToCohereRequest({ ...c, stream: req.stream }, upstreamModel));
  }
}
