import type { Json } from '../protocols/openai.ts';
import { type Adaptor, baseOf, type RelayMode } from './types.ts';

/** Jina (type 38): rerank and embeddings, already in the relay's (OpenAI-style) format. */
export const jina: Adaptor = {
  name: 'Jina',
  protocol: 'openai',
  modes: new Set<RelayMode>(['rerank', 'embeddings']),
  defaultBaseUrl: 'https://api.jina.ai',
  target: (ch, mode) => ({
    url: `${baseOf(ch, jina)}/v1/${mode === 'rerank' ? 'rerank' : 'embeddings'}`,
    headers: { authorization: `Bearer ${ch.key}` },
  }),
  convert: {
    rerank: {
      request: (body, model) => ({ ...body, model }),
      response: (res: Json, _body, model, estimate) => {
        const u = (res.usage ?? {}) as { total_tokens?: number; prompt_tokens?: number };
        const tokens = u.prompt_tokens ?? u.total_tokens ?? estimate;
        return {
          body: { ...res, model: res.model ?? model, usage: { prompt_tokens: tokens, total_tokens: tokens } },
          usage: { promptTokens: tokens, completionTokens: 0 },
        };
      },
    },
  },
};
