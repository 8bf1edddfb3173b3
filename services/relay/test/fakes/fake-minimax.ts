/**
 * A fake MiniMax endpoint (chat completion v2, `/v1/text/chatcompletion_v2`). It checks the
 * bearer key and answers as MiniMax does: OpenAI-shaped answers with `base_resp
 * {status_code, status_msg}`; errors with HTTP 200 and a non-zero status_code (1004 for a bad
 * key); streams as SSE `data:` chunks with `delta`s, the last one repeating the whole text as
 * `message` with the finish reason, the usage and `base_resp`. No `[DONE]` marker.
 *
 * @example
 * const fake = await startFakeMinimax({ apiKey: 'mm-key' });
 * // channel type 35, key `mm-key`, base_url fake.url
 */
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeMinimax {
  url: string;
  requests: { path: string; headers: Record<string, unknown>; body: Record<string, unknown> }[];
  set(b: Partial<MinimaxBehaviour>): void;
  close(): Promise<void>;
}

interface MinimaxBehaviour {
  /** The answer, sent in this many pieces when streamed. */
  pieces: string[];
  promptTokens: number;
  completionTokens: number;
  /** A MiniMax status code to answer with (e.g. 1002 rate limit). */
  errorCode: number;
  errorMessage: string;
}

export async function startFakeMinimax(opts: {
  apiKey: string;
  behaviour?: Partial<MinimaxBehaviour>;
}): Promise<FakeMinimax> {
  let b: MinimaxBehaviour = {
    pieces: ['你好，', '我是 MiniMax'],
    promptTokens: 11,
    completionTokens: 6,
    errorCode: 0,
    errorMessage: '',
    ...opts.behaviour,
  };
  const requests: FakeMinimax['requests'] = [];
  const json = (res: ServerResponse, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  };
  const baseResp = (code: number, msg: string) => ({ base_resp: { status_code: code, status_msg: msg } });

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return json(res, { id: '', ...baseResp(2013, 'invalid params, json unmarshal failed') });
      }
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      if (req.method !== 'POST' || req.url !== '/v1/text/chatcompletion_v2') {
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('404 page not found');
      }
      if (req.headers.authorization !== `Bearer ${opts.apiKey}`) {
        return json(res, {
          id: '',
          ...baseResp(1004, "login fail: Please carry the API secret key in the 'Authorization' field"),
        });
      }
      if (b.errorCode)
        return json(res, { id: randomUUID().replace(/-/g, ''), ...baseResp(b.errorCode, b.errorMessage) });
      if (!Array.isArray(body.messages) || body.messages.length === 0) {
        return json(res, { id: '', ...baseResp(2013, 'invalid params, messages is empty') });
      }
      const id = randomUUID().replace(/-/g, '');
      const created = Math.floor(Date.now() / 1000);
      const model = String(body.model ?? '');
      const text = b.pieces.join('');
      const usage = {
        total_tokens: b.promptTokens + b.completionTokens,
        prompt_tokens: b.promptTokens,
        completion_tokens: b.completionTokens,
      };
      if (body.stream !== true) {
        return json(res, {
          id,
          choices: [
            { finish_reason: 'stop', index: 0, message: { content: text, role: 'assistant', name: 'MiniMax AI' } },
          ],
          created,
          model,
          object: 'chat.completion',
          usage,
          input_sensitive: false,
          output_sensitive: false,
          ...baseResp(0, ''),
        });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      for (const p of b.pieces) {
        res.write(
          `data: ${JSON.stringify({
            id,
            choices: [{ index: 0, delta: { content: p, role: 'assistant', name: 'MiniMax AI' } }],
            created,
            model,
            object: 'chat.completion.chunk',
          })}\n\n`,
        );
      }
      res.end(
        `data: ${JSON.stringify({
          id,
          choices: [
            { finish_reason: 'stop', index: 0, message: { content: text, role: 'assistant', name: 'MiniMax AI' } },
          ],
          created,
          model,
          object: 'chat.completion',
          usage,
          input_sensitive: false,
          output_sensitive: false,
          ...baseResp(0, ''),
        })}\n\n`,
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    set(n) {
      b = { ...b, ...n };
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
