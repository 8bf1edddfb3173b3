/**
 * The wire protocols the relay speaks, by name. Adaptors name the protocol of their channels;
 * routes name the client format they serve. A new protocol is one module (see wire.ts) and
 * one line here.
 */

import type { Adaptor, ChannelTarget, RelayMode } from '../adaptors/types.ts';
import { aiproxyProtocol } from './aiproxy.ts';
import { baiduProtocol } from './baidu.ts';
import { claudeProtocol } from './claude.ts';
import { cohereProtocol } from './cohere.ts';
import { cozeProtocol } from './coze.ts';
import { difyProtocol } from './dify.ts';
import { geminiProtocol } from './gemini.ts';
import { hunyuanProtocol } from './hunyuan.ts';
import { minimaxProtocol } from './minimax.ts';
import { ollamaProtocol } from './ollama.ts';
import { type Json, openaiProtocol } from './openai.ts';
import { palmProtocol } from './palm.ts';
import { responsesProtocol } from './responses.ts';
import { sparkProtocol } from './spark.ts';
import type { ClientCodec, ClientProtocol, WireProtocol } from './wire.ts';

const PROTOCOLS = {
  openai: openaiProtocol,
  claude: claudeProtocol,
  gemini: geminiProtocol,
  ollama: ollamaProtocol,
  cohere: cohereProtocol,
  responses: responsesProtocol,
  hunyuan: hunyuanProtocol,
  baidu: baiduProtocol,
  dify: difyProtocol,
  minimax: minimaxProtocol,
  aiproxy: aiproxyProtocol,
  palm: palmProtocol,
  spark: sparkProtocol,
  coze: cozeProtocol,
} satisfies Record<string, WireProtocol>;

/** The name of a wire protocol. */
export type Protocol = keyof typeof PROTOCOLS;

/** The protocols clients speak (each served on its routes). */
export type ClientFormat = { [P in Protocol]: (typeof PROTOCOLS)[P] extends ClientProtocol ? P : never }[Protocol];

export function protocolOf(name: Protocol): WireProtocol {
  return PROTOCOLS[name];
}

export function clientOf(format: ClientFormat): ClientCodec {
  return PROTOCOLS[format].client;
}

/**
 * The protocol an attempt speaks to the upstream: the client's own when the channel speaks it
 * (then requests, answers and streams pass through), else the channel's.
 */
export function upstreamProtocol(adaptor: Pick<Adaptor, 'protocol' | 'speaks'>, format: ClientFormat): Protocol {
  return adaptor.protocol === format || adaptor.speaks?.has(format) ? format : adaptor.protocol;
}

/**
 * The protocol one attempt speaks upstream: the channel's configured choice (adaptor.wireFor), else
 * the model's (protocolFor, Vertex AI serving Claude and Gemini), else upstreamProtocol.
 */
export function attemptProtocol(
  adaptor: Pick<Adaptor, 'protocol' | 'speaks' | 'protocolFor' | 'wireFor'>,
  channel: ChannelTarget,
  req: { mode: RelayMode; format: ClientFormat; stream: boolean },
  upstreamModel: string,
): Protocol {
  return (
    adaptor.wireFor?.(channel, req.mode, req.format, upstreamModel, req.stream) ??
    upstreamProtocol(adaptor.protocolFor ? { protocol: adaptor.protocolFor(upstreamModel) } : adaptor, req.format)
  );
}

/** The error body of a client format. */
export function errorBody(format: ClientFormat, status: number, message: string, code?: string): Json {
  return PROTOCOLS[format].client.error(status, message, code);
}
