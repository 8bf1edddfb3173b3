import { type Adaptor, baseOf, type RelayMode } from './types.ts';

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
  countTarget: (ch, model) => ({
    url: `${baseOf(ch, gemini)}/${ch.other || 'v1beta'}/models/${encodeURIComponent(model)}:countTokens`,
    headers: { 'x-goog-api-key': ch.key },
  }),
};
