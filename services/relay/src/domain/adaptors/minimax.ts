import { type Adaptor, baseOf, type RelayMode } from './types.ts';

/**
 * MiniMax (type 35): chat completion v2 with the API key as a bearer token (protocols/minimax.ts:
 * `base_resp` errors inside HTTP 200 mapped to their status).
 */
export const minimax: Adaptor = {
  name: 'MiniMax',
  protocol: 'minimax',
  modes: new Set<RelayMode>(['chat']),
  defaultBaseUrl: 'https://api.minimax.chat',
  noStreamOptions: true,
  target: (ch) => ({
    url: `${baseOf(ch, minimax)}/v1/text/chatcompletion_v2`,
    headers: { authorization: `Bearer ${ch.key.trim()}` },
  }),
};
