import { type Adaptor, ALL_MODES, baseOf, type ChannelTarget, OPENAI_PATHS, type RelayMode } from './types.ts';

const bearer = (ch: ChannelTarget): Record<string, string> => {
  const h: Record<string, string> = { authorization: `Bearer ${ch.key}` };
  if (ch.organization) h['openai-organization'] = ch.organization;
  return h;
};

/**
 * An OpenAI-compatible provider: `{base}{prefix}/chat/completions` and friends with a bearer key.
 * `prefix` is /v1 for most; some providers mount the API elsewhere.
 */
export function openaiCompatible(
  name: string,
  defaultBaseUrl: string,
  prefix = '/v1',
  modes: ReadonlySet<RelayMode> = ALL_MODES,
): Adaptor {
  const adaptor: Adaptor = {
    name,
    protocol: 'openai',
    modes,
    defaultBaseUrl,
    target: (ch, mode) => ({ url: `${baseOf(ch, adaptor)}${prefix}${OPENAI_PATHS[mode]}`, headers: bearer(ch) }),
  };
  return adaptor;
}

/** The default Azure OpenAI API version when the channel's `other` is empty. */
export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

/** Azure OpenAI (type 3): deployment URLs named after the model, `api-version` from `other`. */
export const azure: Adaptor = {
  name: 'Azure OpenAI',
  protocol: 'openai',
  modes: new Set<RelayMode>([
    'chat',
    'completions',
    'embeddings',
    'images',
    'speech',
    'transcriptions',
    'translations',
  ]),
  defaultBaseUrl: '',
  target(ch, mode, model) {
    // Azure deployment names cannot hold dots (gpt-3.5-turbo is deployed as gpt-35-turbo).
    const deployment = model.replaceAll('.', '');
    const version = ch.other || AZURE_DEFAULT_API_VERSION;
    return {
      url: `${baseOf(ch, azure)}/openai/deployments/${encodeURIComponent(deployment)}${OPENAI_PATHS[mode]}?api-version=${encodeURIComponent(version)}`,
      headers: { 'api-key': ch.key },
    };
  },
};

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
