/**
 * A fake Dify app (POST /v1/chat-messages with the app's API key): blocking answers and
 * streaming ones (SSE `data:` lines with `event` inside: message..., message_end with the usage,
 * pings between), conversations it remembers by id (an unknown id is Dify's 404), and Dify's
 * errors (`{code, message, status}`; in a stream an `error` event).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeDify {
  url: string;
  requests: Record<string, unknown>[];
  /** Queries received per conversation id. */
  conversations: Map<string, string[]>;
  set(b: Partial<DifyBehaviour>): void;
  close(): Promise<void>;
}

interface DifyBehaviour {
  reply: string;
  promptTokens: number;
  /** In streams: an error event (status, code, message) instead of the answer. */
  streamError?: { status: number; code: string; message: string } | undefined;
}

export async function startFakeDify(opts: { apiKey: string }): Promise<FakeDify> {
  let b: DifyBehaviour = { reply: 'dify answers you', promptTokens: 14 };
  const requests: Record<string, unknown>[] = [];
  const conversations = new Map<string, string[]>();
  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const error = (res: ServerResponse, status: number, code: string, message: string) =>
    send(res, status, { code, message, status });

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url !== '/v1/chat-messages' || req.method !== 'POST')
        return error(res, 404, 'not_found', 'The requested URL was not found on the server.');
      if (req.headers.authorization !== `Bearer ${opts.apiKey}`)
        return error(res, 401, 'unauthorized', 'Access token is invalid');
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        return error(res, 400, 'invalid_param', 'Invalid JSON');
      }
      requests.push(body);
      if (typeof body.query !== 'string' || !body.query) return error(res, 400, 'invalid_param', 'query is required');
      if (typeof body.user !== 'string' || !body.user) return error(res, 400, 'invalid_param', 'user is required');
      if (typeof body.inputs !== 'object' || body.inputs === null)
        return error(res, 400, 'invalid_param', 'inputs is required');
      if (body.response_mode !== 'blocking' && body.response_mode !== 'streaming')
        return error(res, 400, 'invalid_param', 'response_mode must be blocking or streaming');
      let conversation = typeof body.conversation_id === 'string' ? body.conversation_id : '';
      if (conversation && !conversations.has(conversation))
        return error(res, 404, 'not_found', 'Conversation Not Exists.');
      conversation ||= randomUUID();
      conversations.set(conversation, [...(conversations.get(conversation) ?? []), body.query]);
      const messageId = randomUUID();
      const taskId = randomUUID();
      const created = Math.floor(Date.now() / 1000);
      const words = b.reply.split(' ').map((w, i, all) => (i < all.length - 1 ? `${w} ` : w));
      const metadata = {
        usage: {
          prompt_tokens: b.promptTokens,
          prompt_unit_price: '0.001',
          completion_tokens: words.length,
          total_tokens: b.promptTokens + words.length,
          currency: 'USD',
          latency: 0.5,
        },
        retriever_resources: [],
      };
      if (body.response_mode === 'blocking')
        return send(res, 200, {
          event: 'message',
          task_id: taskId,
          id: messageId,
          message_id: messageId,
          conversation_id: conversation,
          mode: 'chat',
          answer: b.reply,
          metadata,
          created_at: created,
        });
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      const data = (o: Record<string, unknown>) =>
        res.write(
          `data: ${JSON.stringify({ task_id: taskId, message_id: messageId, conversation_id: conversation, created_at: created, ...o })}\n\n`,
        );
      res.write('event: ping\n\n');
      if (b.streamError) {
        data({ event: 'error', ...b.streamError });
        return res.end();
      }
      data({ event: 'workflow_started', workflow_run_id: randomUUID(), data: {} });
      for (const w of words) data({ event: 'message', id: messageId, answer: w });
      data({ event: 'workflow_finished', workflow_run_id: randomUUID(), data: { status: 'succeeded' } });
      data({ event: 'message_end', id: messageId, metadata });
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    conversations,
    set(p) {
      b = { ...b, ...p };
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
