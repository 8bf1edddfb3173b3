import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { chatBody, DEFAULT_SETTINGS, type MessageStatus, splitEvents, streamChat } from './chat-stream.ts';

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

  it('when the relay refuses in English mode, then its Chinese message shows in English with the values', async () => {
    // The relay's OpenAI error shape, as route-kit answers a concurrency refusal.
    const server = createServer((_req, res) => {
      res.writeHead(429, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: '令牌并发请求数超过限制（最多 1 个），请稍后再试', type: 'new_api_error' },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      (window as unknown as { happyDOM: { setURL(url: string): void } }).happyDOM.setURL(
        `http://127.0.0.1:${port}/playground`,
      );
      const seen: [string, MessageStatus][] = [];
      localStorage.setItem('lang', 'en-US');
      await streamChat({}, (content, status) => seen.push([content, status]));
      localStorage.setItem('lang', 'zh-CN');
      await streamChat({}, (content, status) => seen.push([content, status]));
      expect(seen).toEqual([
        ['Too many concurrent requests for this token (at most 1), please try again later', 'error'],
        ['令牌并发请求数超过限制（最多 1 个），请稍后再试', 'error'],
      ]);
    } finally {
      localStorage.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
