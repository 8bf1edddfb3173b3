/**
 * A fake Coze chat API v3 (`POST /v3/chat`). It checks the bearer token and the bot, and answers
 * as Coze does: refusals with HTTP 200 and `{code, msg}` (4100 for a bad token, 4200 for an
 * unknown bot); a streamed chat as SSE with named events (conversation.chat.created,
 * .in_progress, conversation.message.delta pieces of the answer, conversation.message.completed
 * for the answer and a `verbose` finish message, a `follow_up` suggestion, conversation.chat
 * .completed with the usage, then `done`); a non-streamed one with only the chat object
 * `in_progress` (its messages would have to be polled for).
 *
 * @example
 * const fake = await startFakeCoze({ token: 'pat_x', botId: '7342866812345' });
 * // channel type 49, key `pat_x`, other `7342866812345`, base_url fake.url
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeCoze {
  url: string;
  requests: { path: string; headers: Record<string, unknown>; body: Record<string, unknown> }[];
  close(): Promise<void>;
}

export interface CozeBehaviour {
  /** The answer, streamed in these pieces. */
  pieces: string[];
  inputCount: number;
  outputCount: number;
}

export const COZE_CHAT = { id: '7382159487131697202', conversation_id: '7381473525342978089' };

export async function startFakeCoze(opts: {
  token: string;
  botId: string;
  behaviour?: Partial<CozeBehaviour>;
}): Promise<FakeCoze> {
  const b: CozeBehaviour = { pieces: ['Hello ', 'from ', 'Coze'], inputCount: 17, outputCount: 4, ...opts.behaviour };
  const requests: FakeCoze['requests'] = [];
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}');
      } catch {
        return json(res, 200, { code: 4000, msg: 'invalid request body' });
      }
      const path = req.url ?? '';
      requests.push({ path, headers: req.headers, body });
      if (req.method !== 'POST' || path !== '/v3/chat') return json(res, 404, { code: 4000, msg: `no route ${path}` });
      if (req.headers.authorization !== `Bearer ${opts.token}`)
        return json(res, 200, { code: 4100, msg: 'authentication is invalid' });
      if (body.bot_id !== opts.botId) return json(res, 200, { code: 4200, msg: 'bot not found' });
      if (!Array.isArray(body.additional_messages) || typeof body.user_id !== 'string')
        return json(res, 200, { code: 4000, msg: 'invalid parameter' });
      const chat = { ...COZE_CHAT, bot_id: opts.botId, created_at: 1718609571 };
      if (body.stream !== true)
        return json(res, 200, {
          code: 0,
          msg: '',
          data: { ...chat, status: 'in_progress', last_error: { code: 0, msg: '' } },
        });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const ev = (event: string, data: unknown) =>
        res.write(`event:${event}\ndata:${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
      ev('conversation.chat.created', { ...chat, status: 'created', last_error: { code: 0, msg: '' } });
      ev('conversation.chat.in_progress', { ...chat, status: 'in_progress' });
      const msg = {
        id: '7382159494123470858',
        conversation_id: chat.conversation_id,
        bot_id: opts.botId,
        chat_id: chat.id,
        role: 'assistant',
        content_type: 'text',
      };
      for (const piece of b.pieces) ev('conversation.message.delta', { ...msg, type: 'answer', content: piece });
      ev('conversation.message.completed', { ...msg, type: 'answer', content: b.pieces.join('') });
      ev('conversation.message.completed', {
        ...msg,
        type: 'verbose',
        content: '{"msg_type":"generate_answer_finish","data":""}',
      });
      ev('conversation.message.delta', { ...msg, type: 'follow_up', content: 'Tell me more?' });
      ev('conversation.chat.completed', {
        ...chat,
        status: 'completed',
        usage: { token_count: b.inputCount + b.outputCount, output_count: b.outputCount, input_count: b.inputCount },
      });
      ev('done', '"[DONE]"');
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
