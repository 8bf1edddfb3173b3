/**
 * new-api's model-name suffixes (`-thinking`, `-low`...; reasoning.ts) applied to one attempt:
 * the upstream model loses the suffix and the request gains the reasoning it names, in the
 * protocol the channel speaks (the client's own body when it passes through, else the canonical
 * request). The price is looked up before, by the name the client asked for (pricing.ts).
 */
import type { Adaptor, ChannelTarget } from '../adaptors/types.ts';
import type { ClientRequest } from '../exchange/build-request.ts';
import type { ChatRequest, Json } from './openai.ts';
import { parseModelSuffix, withSuffix } from './reasoning.ts';
import { attemptProtocol, clientOf } from './registry.ts';

export interface SuffixedAttempt {
  req: ClientRequest;
  upstreamModel: string;
  canonical: () => ChatRequest;
}

/** The attempt's request, model and canonical request; the same ones when the model has no suffix. */
export function applyModelSuffix(
  req: ClientRequest,
  adaptor: Pick<Adaptor, 'protocol' | 'speaks' | 'protocolFor' | 'wireFor'>,
  channel: ChannelTarget,
  upstreamModel: string,
  canonical: () => ChatRequest,
): SuffixedAttempt {
  const same = { req, upstreamModel, canonical };
  if (req.mode !== 'chat' || req.body instanceof FormData) return same;
  const wire = attemptProtocol(adaptor, channel, req, upstreamModel);
  const meaning = parseModelSuffix(upstreamModel, wire);
  if (!meaning) return same;
  if (wire === req.format) {
    const codec = clientOf(req.format);
    const body = codec.withSuffix
      ? codec.withSuffix(req.body as Json, meaning)
      : { ...(req.body as Json), model: meaning.model };
    // The raw text no longer says what goes upstream.
    return { req: { ...req, body, raw: undefined }, upstreamModel: meaning.model, canonical };
  }
  let suffixed: ChatRequest | undefined;
  return {
    req,
    upstreamModel: meaning.model,
    canonical: () => {
      suffixed ??= withSuffix(canonical(), meaning);
      return suffixed;
    },
  };
}
