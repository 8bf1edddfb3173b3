import { type Adaptor, baseOf, type RelayMode } from './types.ts';

/** Dify (type 37): an app's chat-messages API with the app's API key (protocols/dify.ts). */
export const dify: Adaptor = {
  name: 'Dify',
  protocol: 'dify',
  modes: new Set<RelayMode>(['chat']),
  defaultBaseUrl: 'https://api.dify.ai',
  target: (ch) => ({ url: `${baseOf(ch, dify)}/v1/chat-messages`, headers: { authorization: `Bearer ${ch.key}` } }),
};
