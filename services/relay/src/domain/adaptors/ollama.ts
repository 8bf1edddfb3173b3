import { ollamaToOpenAIEmbed, openaiToOllamaEmbed } from '../protocols/ollama.ts';
import { type Adaptor, baseOf, type RelayMode } from './types.ts';

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
