import { type Adaptor, baseOf, OPENAI_PATHS, type RelayMode } from './types.ts';

/** Cloudflare Workers AI (type 39): its OpenAI-compatible endpoints; `other` is the account id. */
export const cloudflare: Adaptor = {
  name: 'Cloudflare',
  protocol: 'openai',
  modes: new Set<RelayMode>(['chat', 'completions', 'embeddings']),
  defaultBaseUrl: 'https://api.cloudflare.com',
  target: (ch, mode) => ({
    url: `${baseOf(ch, cloudflare)}/client/v4/accounts/${encodeURIComponent(ch.other)}/ai/v1${OPENAI_PATHS[mode]}`,
    headers: { authorization: `Bearer ${ch.key}` },
  }),
};
