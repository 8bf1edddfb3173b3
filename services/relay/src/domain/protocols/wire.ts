/**
 * What a wire protocol module provides. Each chat protocol (OpenAI, Claude, Gemini, Ollama,
 * Cohere...) is one module exporting a `WireProtocol`, listed in `registry.ts`; the exchange
 * (domain/exchange) finds it there and never names a protocol itself.
 *
 * The OpenAI chat format is canonical: a protocol translates its requests, answers and streams
 * to and from it. Protocols that clients speak too (a route serves them) add a `client` side:
 * their requests in, their answers, streams and errors out, and the pass-through used when the
 * channel speaks the client's own protocol.
 */
import type { RelayMode } from '../adaptors/types.ts';
import type { ChatChunk, ChatRequest, ChatResponse, Json, StreamTally, Usage } from './openai.ts';
import type { SuffixMeaning } from './reasoning.ts';

/** One upstream chat call as a protocol needs to know it. */
export interface UpstreamCall {
  /** The model sent upstream (after the channel's model_mapping). */
  model: string;
  stream: boolean;
  /** The upstream accepts OpenAI's stream_options (asks it for usage in streams). */
  streamOptions: boolean;
}

/** The client's request, for a pass-through body (the client and the upstream speak one protocol). */
export interface PassthroughRequest {
  body: Json;
  /** The raw JSON text, sent unchanged when nothing needs rewriting. */
  raw?: Buffer;
  /** The model the client asked for. */
  model: string;
  stream: boolean;
  includeUsage: boolean;
}

/** What a client-side stream encoder knows of the exchange. */
export interface StreamContext {
  mode: RelayMode;
  /** The model the client asked for (shown in translated answers). */
  model: string;
  /** The client asked for usage in its stream (OpenAI stream_options.include_usage). */
  includeUsage: boolean;
}

/** Upstream stream items (SSE events or NDJSON lines) in, client text out. */
export interface StreamEncoder {
  /** Handles one upstream item; returns the client text and whether it carried a token. */
  event(item: unknown): { out: string; produced: boolean };
  /** Closing text once the upstream ended (usage known by then). */
  end(usage: Usage): string;
}

/** Canonical chunks in, client text out. */
export interface ChunkEncoder {
  onChunk(c: ChatChunk): string;
  end(usage: Usage): string;
}

/** A wire protocol as spoken by upstreams. */
export interface WireProtocol {
  /** How its streams are framed. */
  readonly framing: 'sse' | 'ndjson';
  /** The upstream body for a canonical request. */
  request(c: ChatRequest, call: UpstreamCall): Json;
  /** A whole answer as the canonical response (`model`: the upstream model). */
  toCanonical(res: Json, model: string): ChatResponse;
  /**
   * The usage a whole answer reports, undefined when none. `canonical` is the answer already
   * translated, when the caller has it.
   */
  usage(res: Json, canonical?: ChatResponse): Usage | undefined;
  /**
   * The id under which the upstream keeps a whole answer (Responses with store), so that it can
   * be retrieved or deleted later through the same channel; undefined when it keeps nothing.
   */
  stateId?(res: Json): string | undefined;
  /** A decoder of one stream's items into canonical chunks. */
  streamDecoder(model: string): (item: unknown) => ChatChunk[];
  /** Present when clients speak this protocol too. */
  readonly client?: ClientCodec;
}

/** A protocol clients speak too. */
export type ClientProtocol = WireProtocol & { readonly client: ClientCodec };

/** The client side of a protocol served on a route. */
export interface ClientCodec {
  /** The client's body as the canonical request. */
  canonical(body: Json, model: string, stream: boolean): ChatRequest;
  /** The upstream body when the channel speaks this very protocol. */
  passthrough(req: PassthroughRequest, call: UpstreamCall): string | Buffer;
  /**
   * The client's body with a model-name suffix's reasoning (reasoning.ts) and the model without
   * it, for a channel that speaks this very protocol; absent: the suffix is only stripped.
   */
  withSuffix?(body: Json, meaning: SuffixMeaning): Json;
  /** The upstream's own stream, passed on (and followed for usage and produced text). */
  passthroughStream(ctx: StreamContext, tally: StreamTally): StreamEncoder;
  /** A canonical answer in this format (usage: what is billed). */
  fromCanonical(res: ChatResponse, model: string, usage: Usage): Json;
  /** Canonical chunks encoded as this format's stream. */
  chunkEncoder(ctx: StreamContext, tally: StreamTally): ChunkEncoder;
  /** The error body of this format. */
  error(status: number, message: string, code?: string): Json;
  /** An error in the middle of a stream, as this format's stream text. */
  streamError(message: string): string;
  /** Client headers passed on to an upstream that speaks this very protocol (lower case). */
  readonly forwardHeaders?: readonly string[];
}
