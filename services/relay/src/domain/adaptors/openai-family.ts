import { openaiCompatible } from './openai-compatible.ts';
import type { Adaptor, RelayMode } from './types.ts';

const modes = (...m: RelayMode[]): ReadonlySet<RelayMode> => new Set(m);

/**
 * Providers that speak OpenAI's format, under new-api's type numbers (so channels exported from
 * it keep their type): base URL, where the API is mounted, and what each serves.
 */
export const OPENAI_FAMILY: Readonly<Record<number, Adaptor>> = {
  20: openaiCompatible('OpenRouter', 'https://openrouter.ai', '/api/v1', modes('chat', 'completions', 'embeddings')),
  // Perplexity mounts the API at the root (https://api.perplexity.ai/chat/completions).
  27: openaiCompatible('Perplexity', 'https://api.perplexity.ai', '', modes('chat')),
  43: openaiCompatible('DeepSeek', 'https://api.deepseek.com', '/v1', modes('chat', 'completions')),
  45: openaiCompatible(
    'VolcEngine',
    'https://ark.cn-beijing.volces.com',
    '/api/v3',
    modes('chat', 'embeddings', 'images'),
  ),
  48: openaiCompatible('xAI', 'https://api.x.ai', '/v1', modes('chat', 'completions', 'images')),
  // FastGPT's OpenAPI speaks OpenAI's chat; the whole `APIKey-AppId` key is the bearer token.
  22: openaiCompatible('FastGPT', 'https://fastgpt.run/api/openapi', '/v1', modes('chat')),
  // new-api's OpenAI-compatible resellers (6-13, served by its OpenAI adaptor): their hosts by default.
  6: openaiCompatible('OpenAIMax', 'https://api.openaimax.com'),
  7: openaiCompatible('OhMyGPT', 'https://api.ohmygpt.com'),
  9: openaiCompatible('AILS', 'https://api.caipacity.com'),
  10: openaiCompatible('AIProxy', 'https://api.aiproxy.io'),
  12: openaiCompatible('API2GPT', 'https://api.api2gpt.com'),
  13: openaiCompatible('AIGC2D', 'https://api.aigc2d.com'),
  // Submodel serves chat only (new-api refuses its embeddings, rerank and Responses).
  53: openaiCompatible('Submodel', 'https://llm.submodel.ai', '/v1', modes('chat')),
};
