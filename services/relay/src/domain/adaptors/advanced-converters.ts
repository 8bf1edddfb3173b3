/**
 * new-api's advanced custom converters (relaykit/relayconvert): each takes one kind of client
 * request and sends it upstream in another protocol. The relay's own translations do the work
 * (registry.attemptProtocol picks the converter's protocol for the attempt), so a converter here
 * is only its source format and its upstream protocol.
 */
import { UpstreamFailure } from '../exchange/failure.ts';
import type { ClientFormat, Protocol, RelayMode } from './types.ts';

interface Converter {
  from: ClientFormat;
  to: Protocol;
}

/** new-api's converter names. */
export const CONVERTERS: Readonly<Record<string, Converter>> = {
  anthropic_messages_to_openai_chat_completions: { from: 'claude', to: 'openai' },
  openai_chat_completions_to_anthropic_messages: { from: 'openai', to: 'claude' },
  openai_chat_completions_to_openai_responses: { from: 'openai', to: 'responses' },
  openai_responses_to_openai_chat_completions: { from: 'responses', to: 'openai' },
  openai_responses_to_gemini_generate_content: { from: 'responses', to: 'gemini' },
  gemini_generate_content_to_openai_chat_completions: { from: 'gemini', to: 'openai' },
  openai_chat_completions_to_gemini_generate_content: { from: 'openai', to: 'gemini' },
};

/** The request kinds as new-api's refusals name them. */
const FORMAT_KIND: Record<ClientFormat, string> = {
  openai: 'OpenAI chat completions',
  claude: 'Anthropic Messages',
  gemini: 'Gemini generateContent',
  responses: 'OpenAI Responses',
};
const MODE_KIND: Partial<Record<RelayMode, string>> = {
  embeddings: 'embedding',
  images: 'image',
  image_edits: 'image',
  image_variations: 'image',
  speech: 'audio',
  transcriptions: 'audio',
  translations: 'audio',
};

const refuse = (message: string) => new UpstreamFailure(400, message, 'refused');

/**
 * The upstream protocol of a route's converter for one call: undefined for none (the call passes
 * through); throws a 400 refusal for an unknown converter or one that does not take the call's kind.
 */
export function convertedProtocol(converter: string, mode: RelayMode, format: ClientFormat): Protocol | undefined {
  if (converter === '' || converter === 'none') return undefined;
  const c = Object.hasOwn(CONVERTERS, converter) ? CONVERTERS[converter] : undefined;
  if (!c) throw refuse(`advanced custom converter ${converter} is not supported by this relay`);
  const kind = mode === 'chat' ? FORMAT_KIND[format] : (MODE_KIND[mode] ?? mode);
  if (mode !== 'chat' || c.from !== format) throw refuse(`converter "${converter}" does not support ${kind} requests`);
  return c.to;
}
