import { fromCohereEmbed, fromCohereRerank, toCohereEmbed, toCohereRerank } from '../protocols/cohere.ts';
import { type Adaptor, baseOf, type RelayMode } from './types.ts';

/** Cohere (type 34): v2 chat, rerank and embed. */
export const cohere: Adaptor = {
  name: 'Cohere',
  protocol: 'cohere',
  modes: new Set<RelayMode>(['chat', 'rerank', 'embeddings']),
  defaultBaseUrl: 'https://api.cohere.ai',
  target: (ch, mode) => ({
    url: `${baseOf(ch, cohere)}/v2/${mode === 'rerank' ? 'rerank' : mode === 'embeddings' ? 'embed' : 'chat'}`,
    headers: { authorization: `Bearer ${ch.key}` },
  }),
  convert: {
    rerank: { request: toCohereRerank, response: fromCohereRerank },
    embeddings: { request: toCohereEmbed, response: (res, _body, model) => fromCohereEmbed(res, model) },
  },
};
