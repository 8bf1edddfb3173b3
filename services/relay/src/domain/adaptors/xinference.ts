import type { Json } from '../protocols/openai.ts';
import { openaiCompatible } from './openai-compatible.ts';
import type { Adaptor, RelayMode } from './types.ts';

const base = openaiCompatible(
  'Xinference',
  '',
  '/v1',
  new Set<RelayMode>(['chat', 'completions', 'embeddings', 'rerank', 'images', 'speech', 'transcriptions']),
);

/**
 * Xorbits Inference (type 47): a self-hosted OpenAI-compatible server (no default host). Its
 * rerank answers `results` without usage, each `document` empty or a string or `{text}`: the
 * client gets Jina's shape (documents only when it asked with return_documents, an empty one
 * taken from its request) and the input is billed as estimated, as new-api does.
 */
export const xinference: Adaptor = {
  ...base,
  convert: {
    rerank: {
      request: (body, model) => ({ ...body, model }),
      response: (res, body, model, estimate) => {
        const documents = Array.isArray(body.documents) ? body.documents : [];
        const withDocs = body.return_documents === true;
        const results = (Array.isArray(res.results) ? res.results : []).map((r: Json) => {
          const index = Number(r.index ?? 0);
          const out: Json = { index, relevance_score: Number(r.relevance_score ?? 0) };
          if (withDocs && r.document != null) out.document = r.document === '' ? documents[index] : r.document;
          return out;
        });
        return {
          body: {
            id: res.id,
            model,
            results,
            usage: { prompt_tokens: estimate, total_tokens: estimate },
          },
          usage: { promptTokens: estimate, completionTokens: 0 },
        };
      },
    },
  },
};
