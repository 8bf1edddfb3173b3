import type { Json, Usage } from '../protocols/openai.ts';
import type { Protocol } from '../protocols/registry.ts';

export type { Protocol };

/** What the client asked for: one per relay endpoint. */
export type RelayMode =
  | 'chat'
  | 'completions'
  | 'embeddings'
  | 'images'
  | 'speech'
  | 'transcriptions'
  | 'translations'
  | 'moderations'
  | 'rerank';

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
  target(ch: ChannelTarget, mode: RelayMode, model: string, stream: boolean): UpstreamTarget;
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
  speech: '/audio/speech',
  transcriptions: '/audio/transcriptions',
  translations: '/audio/translations',
  moderations: '/moderations',
  rerank: '/rerank',
};

export const ALL_MODES: ReadonlySet<RelayMode> = new Set(Object.keys(OPENAI_PATHS) as RelayMode[]);

/** The channel's base URL, else the adaptor's default, without a trailing slash. */
export function baseOf(ch: ChannelTarget, adaptor: { defaultBaseUrl: string }): string {
  return (ch.baseUrl || adaptor.defaultBaseUrl).replace(/\/+$/, '');
}
