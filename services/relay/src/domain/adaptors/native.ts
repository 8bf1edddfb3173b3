import { fromCohereEmbed, fromCohereRerank, toCohereEmbed, toCohereRerank } from '../protocols/cohere.ts';
import { ollamaToOpenAIEmbed, openaiToOllamaEmbed } from '../protocols/ollama.ts';
import type { Json } from '../protocols/openai.ts';
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
};

/** Google Gemini (type 24): generateContent, streamed as SSE (alt=sse). */
export const gemini: Adaptor = {
  name: 'Gemini',
  protocol: 'gemini',
  modes: new Set<RelayMode>(['chat']),
  defaultBaseUrl: 'https://generativelanguage.googleapis.com',
  target: (ch, _mode, model, stream) => {
    const version = ch.other || 'v1beta';
    const action = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    return {
      url: `${baseOf(ch, gemini)}/${version}/models/${encodeURIComponent(model)}:${action}`,
      headers: { 'x-goog-api-key': ch.key },
    };
  },
};

/** The local model runner (type 4): Ollama's /api/chat and /api/embed. */
export const ollama: Adaptor = {
  name: 'Ollama',
  protocol: 'ollama',
  modes: new Set<RelayMode>(['chat', 'embeddings']),
  defaultBaseUrl: 'http://localhost:11434',
  target: (ch, mode) => ({
    url: `${baseOf(ch, ollama)}${mode === 'embeddings' ? '/api/embed' : '/api/chat'}`,
    headers: ch.key ? { authorization: `Bearer ${ch.key}` } : ({} as Record<string, string>),
  }),
  convert: {
    embeddings: { request: openaiToOllamaEmbed, response: (res, _body, model) => ollamaToOpenAIEmbed(res, model) },
  },
};

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
