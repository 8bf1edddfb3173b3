import type { Json } from '../protocols/openai.ts';
import { usageFromOpenAI } from '../protocols/openai.ts';
import { type Adaptor, baseOf, type RelayMode } from './types.ts';

/**
 * MokaAI (type 44): the m3e embedding models at `{base}/embeddings` with a bearer key. Its
 * request takes `input` as a list of strings only (a single string is wrapped); the answer is
 * OpenAI's embedding list with usage.
 */
export const mokaai: Adaptor = {
  name: 'MokaAI',
  protocol: 'openai',
  modes: new Set<RelayMode>(['embeddings']),
  defaultBaseUrl: 'https://api.moka.ai',
  target: (ch) => ({ url: `${baseOf(ch, mokaai)}/embeddings`, headers: { authorization: `Bearer ${ch.key}` } }),
  convert: {
    embeddings: {
      request: (body, model) => {
        const input = body.input;
        const list =
          typeof input === 'string' ? [input] : Array.isArray(input) ? input.filter((s) => typeof s === 'string') : [];
        return { input: list, model };
      },
      response: (res, _body, model, estimate) => {
        const data = (Array.isArray(res.data) ? res.data : []).map((d: Json, i: number) => ({
          object: 'embedding',
          index: Number(d.index ?? i),
          embedding: d.embedding,
        }));
        const u = usageFromOpenAI(res.usage) ?? { promptTokens: estimate, completionTokens: 0 };
        return {
          body: {
            object: 'list',
            data,
            model: String(res.model ?? model),
            usage: { prompt_tokens: u.promptTokens, total_tokens: u.promptTokens },
          },
          usage: { promptTokens: u.promptTokens, completionTokens: 0 },
        };
      },
    },
  },
};
