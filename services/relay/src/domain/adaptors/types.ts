import type { UpstreamFailure } from '../exchange/failure.ts';
import type { UpstreamClient, UpstreamRequest, UpstreamResponse } from '../exchange/ports.ts';
import type { Json, Usage } from '../protocols/openai.ts';
import type { ClientFormat, Protocol } from '../protocols/registry.ts';

export type { ClientFormat, Protocol };

/** What the client asked for: one per relay endpoint. */
export type RelayMode =
  | 'chat'
  | 'completions'
  | 'embeddings'
  | 'images'
  | 'image_edits'
  | 'image_variations'
  | 'speech'
  | 'transcriptions'
  | 'translations'
  | 'moderations'
  | 'rerank'
  /** OpenAI's POST /v1/responses/compact (Codex's context compaction), on channels that have it. */
  | 'responses_compact';

/** The parts of a channel an adaptor needs to reach the upstream. */
export interface ChannelTarget {
  type: number;
  key: string;
  baseUrl: string;
  other: string;
  organization: string;
}

/** An upstream HTTP call's address and headers (the body is built by the pipeline). */
export interface UpstreamTarget {
  url: string;
  headers: Record<string, string>;
}

/** An upstream call ready to send, as `Adaptor.prepare` receives and returns it. */
export interface PreparedCall {
  url: string;
  headers: Record<string, string>;
  body: string | Buffer | FormData;
}

/** What `Adaptor.prepare` knows of the call. */
export interface PrepareContext {
  channel: ChannelTarget;
  mode: RelayMode;
  /** The model sent upstream (after model_mapping). */
  model: string;
  stream: boolean;
  /** For credential exchanges (Vertex AI's OAuth token). */
  http: UpstreamClient;
}

/**
 * One kind of upstream provider. Chat goes through `protocol` (the pipeline translates between
 * it and the client's format); other modes go through `convert` when the provider's format is
 * not OpenAI's.
 */
export interface Adaptor {
  readonly name: string;
  readonly protocol: Protocol;
  readonly modes: ReadonlySet<RelayMode>;
  readonly defaultBaseUrl: string;
  /** The upstream rejects OpenAI's stream_options (it reports usage unasked, or never). */
  readonly noStreamOptions?: boolean;
  /**
   * Client protocols the upstream also speaks natively besides `protocol` (their requests then
   * pass through, e.g. OpenAI's Responses API); `target` gets the protocol of the call.
   */
  readonly speaks?: ReadonlySet<Protocol>;
  /** `wire` the protocol spoken upstream, `format` the client's (when it differs from `wire`). */
  target(
    ch: ChannelTarget,
    mode: RelayMode,
    model: string,
    stream: boolean,
    wire?: Protocol,
    format?: ClientFormat,
  ): UpstreamTarget;
  /**
   * The upstream protocol the channel's own configuration picks for a call (advanced custom's
   * route converters), in place of `protocol`/`speaks`; undefined: those decide, and `target`
   * refuses a call the configuration cannot serve.
   */
  wireFor?(
    ch: ChannelTarget,
    mode: RelayMode,
    format: ClientFormat,
    model: string,
    stream: boolean,
  ): Protocol | undefined;
  /** The upstream counts the input tokens of a request in its protocol (Claude's count_tokens). */
  countTarget?(ch: ChannelTarget, model: string): UpstreamTarget;
  /** The protocol of one model, for providers serving several (Vertex AI: Claude and Gemini). */
  protocolFor?(model: string): Protocol;
  /**
   * The last step before sending, for providers that sign requests (SigV4), exchange
   * credentials for a token, or take the protocol's body with changes. Throws UpstreamFailure.
   */
  prepare?(call: PreparedCall, ctx: PrepareContext): Promise<PreparedCall>;
  /** Told of a failed call after prepare() (drops a cached token the upstream refused). */
  onFailure?(failure: UpstreamFailure, ctx: PrepareContext): void;
  /**
   * The provider's own transport in place of HTTP (Spark's WebSocket), given the prepared call;
   * answers like an HTTP response (streams as SSE) and rejects on connection failures.
   */
  send?(req: UpstreamRequest): Promise<UpstreamResponse>;
  /** A stream framing of the provider's own (Bedrock's binary event-stream), yielding SSE events. */
  streamParser?(): { push(chunk: Uint8Array): unknown[]; end(): unknown[] };
  /** Non-chat request and response conversion, for providers whose format is not OpenAI's. */
  convert?: Partial<
    Record<
      RelayMode,
      {
        request(body: Json, model: string): Json;
        response(res: Json, body: Json, model: string, promptEstimate: number): { body: Json; usage: Usage };
      }
    >
  >;
}

export const OPENAI_PATHS: Record<RelayMode, string> = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  images: '/images/generations',
  image_edits: '/images/edits',
  image_variations: '/images/variations',
  speech: '/audio/speech',
  transcriptions: '/audio/transcriptions',
  translations: '/audio/translations',
  moderations: '/moderations',
  rerank: '/rerank',
  responses_compact: '/responses/compact',
};

/** The modes of OpenAI-compatible channels (compaction only where the Responses API is: RESPONSES_MODES). */
export const ALL_MODES: ReadonlySet<RelayMode> = new Set(
  (Object.keys(OPENAI_PATHS) as RelayMode[]).filter((m) => m !== 'responses_compact'),
);

/** The modes of channels that serve OpenAI's Responses API itself (type 1). */
export const RESPONSES_MODES: ReadonlySet<RelayMode> = new Set(Object.keys(OPENAI_PATHS) as RelayMode[]);

/** The channel's base URL, else the adaptor's default, without a trailing slash. */
export function baseOf(ch: ChannelTarget, adaptor: { defaultBaseUrl: string }): string {
  return (ch.baseUrl || adaptor.defaultBaseUrl).replace(/\/+$/, '');
}
