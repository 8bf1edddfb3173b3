import { describe, expect, it } from 'vitest';
import { chooseSubprotocol, realtimeCredentials, realtimeTarget, realtimeUsage } from './realtime.ts';

const ch = (type: number, baseUrl: string, other = '') => ({ type, key: 'k', baseUrl, other, organization: '' });

describe('realtime', () => {
  it('when the key comes as a header or as the browser subprotocol, then it is read, with the beta flag', () => {
    expect(realtimeCredentials({ authorization: 'Bearer sk-a', 'openai-beta': 'realtime=v1' })).toEqual({
      key: 'Bearer sk-a',
      beta: 'realtime=v1',
    });
    expect(
      realtimeCredentials({
        'sec-websocket-protocol': 'realtime, openai-insecure-api-key.sk-b, openai-beta.realtime-v1',
      }),
    ).toEqual({ key: 'sk-b', beta: 'realtime=v1' });
    expect(realtimeCredentials({})).toEqual({ key: undefined, beta: undefined });
    expect(chooseSubprotocol(['openai-insecure-api-key.sk-b', 'realtime'])).toBe('realtime');
    expect(chooseSubprotocol(['openai-insecure-api-key.sk-b'])).toBe(false);
  });

  it('when the channel is OpenAI or Azure, then the upstream socket address and auth follow the provider', () => {
    expect(realtimeTarget(ch(1, ''), 'gpt-4o-realtime-preview', undefined)).toEqual({
      url: 'wss://api.openai.com/v1/realtime?model=gpt-4o-realtime-preview',
      headers: { authorization: 'Bearer k' },
    });
    expect(realtimeTarget(ch(3, 'https://x.openai.azure.com/'), 'gpt-4o-realtime-preview', 'realtime=v1')).toEqual({
      url: 'wss://x.openai.azure.com/openai/realtime?api-version=2024-10-01-preview&deployment=gpt-4o-realtime-preview',
      headers: { 'api-key': 'k', 'openai-beta': 'realtime=v1' },
    });
    expect(realtimeTarget(ch(8, 'http://127.0.0.1:9'), 'm', undefined).url).toBe(
      'ws://127.0.0.1:9/v1/realtime?model=m',
    );
  });

  it('when a response.done carries usage, then text, cached text and audio tokens are told apart', () => {
    const done = {
      type: 'response.done',
      response: {
        usage: {
          total_tokens: 230,
          input_tokens: 150,
          output_tokens: 80,
          input_token_details: {
            text_tokens: 100,
            audio_tokens: 50,
            cached_tokens: 45,
            cached_tokens_details: { text_tokens: 40, audio_tokens: 5 },
          },
          output_token_details: { text_tokens: 20, audio_tokens: 60 },
        },
      },
    };
    expect(realtimeUsage(done)).toEqual({
      promptTokens: 150,
      completionTokens: 80,
      cachedTokens: 40,
      audioInputTokens: 50,
      audioOutputTokens: 60,
    });
    expect(realtimeUsage({ type: 'response.created', response: { usage: null } })).toBeUndefined();
    expect(realtimeUsage({ type: 'response.done', response: { status: 'failed', usage: null } })).toBeUndefined();
    // Nonsense counts are not billed as negative or fractional tokens.
    expect(
      realtimeUsage({ type: 'response.done', response: { usage: { input_tokens: -5, output_tokens: 2.7 } } }),
    ).toEqual({ promptTokens: 0, completionTokens: 2 });
  });
});
