import { type Adaptor, baseOf, type ChannelTarget, OPENAI_PATHS, RESPONSES_MODES, type RelayMode } from './types.ts';

/**
 * Another gateway in front (new-api's type 60 New API, 59 Sub2API): OpenAI's API with its bearer
 * key, and the client's own Claude Messages, Gemini and Responses requests passed through as they
 * are (the gateway behind translates for its channels), each with the key in the header its
 * clients send: `x-api-key` (and anthropic-version) for Messages, `x-goog-api-key` for Gemini.
 * No default host: the channel names the gateway.
 */
function chainedGateway(name: string): Adaptor {
  const adaptor: Adaptor = {
    name,
    protocol: 'openai',
    modes: RESPONSES_MODES,
    defaultBaseUrl: '',
    speaks: new Set(['responses', 'claude', 'gemini']),
    target: (ch: ChannelTarget, mode: RelayMode, model: string, stream: boolean, wire) => {
      const base = baseOf(ch, adaptor);
      const bearer = { authorization: `Bearer ${ch.key}` };
      if (wire === 'claude')
        return {
          url: `${base}/v1/messages`,
          headers: { ...bearer, 'x-api-key': ch.key, 'anthropic-version': '2023-06-01' },
        };
      if (wire === 'gemini') {
        const action = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
        return {
          url: `${base}/v1beta/models/${encodeURIComponent(model)}:${action}`,
          headers: { ...bearer, 'x-goog-api-key': ch.key },
        };
      }
      return { url: `${base}/v1${wire === 'responses' ? '/responses' : OPENAI_PATHS[mode]}`, headers: bearer };
    },
  };
  return adaptor;
}

export const sub2api = chainedGateway('Sub2API');
export const newApi = chainedGateway('New API');
