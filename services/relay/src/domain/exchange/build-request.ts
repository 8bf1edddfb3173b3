import type { Adaptor, RelayMode } from '../adaptors/index.ts';
import type { ChatRequest, Json } from '../protocols/openai.ts';
import { type ClientFormat, clientOf, type Protocol, protocolOf } from '../protocols/registry.ts';
import { bodyWithSystemPrompt, type ChannelOverrides, chatWithSystemPrompt } from './channel-overrides.ts';
import { applyParamOverride } from './param-override.ts';

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
  /** The client's headers its protocol passes on (ClientCodec.forwardHeaders), when it sent any. */
  forward?: Record<string, string>;
}

/** The chat request in the OpenAI (canonical) format, built once per client request. */
export function canonicalChat(req: ClientRequest): ChatRequest {
  return clientOf(req.format).canonical(req.body as Json, req.model, req.stream);
}

/**
 * Builds the upstream body for one channel: `upstreamModel` is the model after model_mapping,
 * `wire` the protocol spoken to the upstream (registry.upstreamProtocol).
 */
export function buildUpstreamBody(
  req: ClientRequest,
  adaptor: Adaptor,
  wire: Protocol,
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
  const call = { model: upstreamModel, stream: req.stream, streamOptions: !adaptor.noStreamOptions };
  if (wire === req.format) return clientOf(req.format).passthrough(req as typeof req & { body: Json }, call);
  return JSON.stringify(protocolOf(wire).request(canonical(), call));
}

/**
 * The upstream body with the channel's overrides: the client's body as sent when
 * pass_through_body_enabled; else the built body with the system prompt, then param_override
 * (its header operations go to `headerEdits`) and settings.disable_store. Throws UpstreamFailure
 * for a param override's return_error.
 */
export function overriddenBody(
  input: { req: ClientRequest; adaptor: Adaptor; upstreamModel: string; canonical: () => ChatRequest },
  wire: Protocol,
  overrides: ChannelOverrides,
  headerEdits: Record<string, string | null>,
): string | Buffer | FormData {
  const { req, upstreamModel } = input;
  const s = overrides.setting;
  if (s.pass_through_body_enabled && !(req.body instanceof FormData)) return req.raw ?? JSON.stringify(req.body);
  let built: ClientRequest = req;
  let canonical = input.canonical;
  if (s.system_prompt && req.mode === 'chat' && !(req.body instanceof FormData)) {
    const body = req.body;
    if (wire === req.format) built = { ...req, body: bodyWithSystemPrompt(req.format, body, s), raw: undefined };
    canonical = () => chatWithSystemPrompt(input.canonical(), s);
  }
  const out = buildUpstreamBody(built, input.adaptor, wire, upstreamModel, canonical);
  if (out instanceof FormData || (!overrides.params && !overrides.other.disable_store)) return out;
  let json: unknown;
  try {
    json = JSON.parse(typeof out === 'string' ? out : out.toString('utf8'));
  } catch {
    return out;
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) return out;
  const obj = json as Json;
  if (overrides.other.disable_store) delete obj.store;
  if (overrides.params) {
    const context = {
      model: upstreamModel,
      upstream_model: upstreamModel,
      original_model: req.model,
      is_stream: req.stream,
      request_mode: req.mode,
    };
    applyParamOverride(obj, overrides.params, context, headerEdits);
  }
  return JSON.stringify(obj);
}
