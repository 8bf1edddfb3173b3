import { type Adaptor, baseOf, type RelayMode } from './types.ts';

/** Anthropic (type 14): the Messages API. */
export const anthropic: Adaptor = {
  name: 'Anthropic',
  protocol: 'claude',
  modes: new Set<RelayMode>(['chat']),
  defaultBaseUrl: 'https://api.anthropic.com',
  target: (ch) => ({
    url: `${baseOf(ch, anthropic)}/v1/messages`,
    headers: { 'x-api-key': ch.key, 'anthropic-version': '2023-06-01' },
  }),
  countTarget: (ch) => ({
    url: `${baseOf(ch, anthropic)}/v1/messages/count_tokens`,
    headers: { 'x-api-key': ch.key, 'anthropic-version': '2023-06-01' },
  }),
};
