import { describe, expect, it } from 'vitest';
import { chatBody, DEFAULT_SETTINGS, splitEvents } from './chat-stream.ts';

describe('playground stream helpers', () => {
  it('when SSE text arrives in pieces, then whole events are handed over and the tail is kept', () => {
    const got: string[] = [];
    const rest = splitEvents('data: {"a":1}\n\ndata: [DONE]\n\ndata: {"b"', (d) => got.push(d));
    expect(got).toEqual(['{"a":1}', '[DONE]']);
    expect(rest).toBe('data: {"b"');
  });

  it('when a turn is sent, then the system prompt leads, failed messages are left out and empty limits are not sent', () => {
    const body = chatBody({ ...DEFAULT_SETTINGS, group: 'vip' }, [
      { id: '1', role: 'user', content: 'hi', createAt: 0, status: 'complete' },
      { id: '2', role: 'assistant', content: 'boom', createAt: 0, status: 'error' },
    ]);
    expect(body).toEqual({
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: 'hi' },
      ],
      stream: true,
      model: 'gpt-4o-mini',
      group: 'vip',
    });
  });
});
