import type { Adaptor, RelayMode } from '../adaptors/index.ts';
import type { ChatRequest, Json } from '../protocols/openai.ts';
import { type ClientFormat, clientOf, type Protocol, protocolOf } from '../protocols/registry.ts';

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
