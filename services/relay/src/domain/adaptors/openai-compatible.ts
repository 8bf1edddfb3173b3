import {
  type Adaptor,
  ALL_MODES,
  baseOf,
  type ChannelTarget,
  OPENAI_PATHS,
  type Protocol,
  type RelayMode,
} from './types.ts';

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
  opts: { noStreamOptions?: boolean; speaks?: ReadonlySet<Protocol> } = {},
): Adaptor {
  const adaptor: Adaptor = {
    name,
    protocol: 'openai',
    modes,
    defaultBaseUrl,
    noStreamOptions: opts.noStreamOptions,
    speaks: opts.speaks,
    target: (ch, mode, _model, _stream, wire) => ({
      url: `${baseOf(ch, adaptor)}${prefix}${wire === 'responses' ? '/responses' : OPENAI_PATHS[mode]}`,
      headers: bearer(ch),
    }),
  };
  return adaptor;
}
