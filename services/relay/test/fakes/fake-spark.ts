/**
 * A fake iFlytek Spark chat endpoint: a real WebSocket server (`ws`) that checks the signed URL
 * the way iFlytek's gateway does (its own implementation): `authorization` (base64 of
 * `api_key="..", algorithm="hmac-sha256", headers="host date request-line", signature=".."`),
 * `date` within five minutes and `host` equal to the Host header, the signature recomputed as
 * base64 HMAC-SHA256 of `host: ..\ndate: ..\nGET {path} HTTP/1.1` with the key's APISecret. A
 * refused handshake is an HTTP 401 (bad signature) or 403 (stale date) with `{message}`.
 * Then one request frame is read (app_id must belong to the API key, `domain` must match the
 * path's version) and the answer sent as frames `{header: {code, message, sid, status},
 * payload: {choices: {status, seq, text: [{content, role, index}]}}}`, the last (status 2) with
 * `payload.usage.text`; errors are one frame with a non-zero `header.code`, then the socket closes.
 *
 * @example
 * const fake = await startFakeSpark({ credentials: { 'api-key': { appId: 'app', secret: 's' } } });
 * // channel type 18, key `app|s|api-key`, base_url fake.url (ws://...)
 */
import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';

export interface FakeSpark {
  /** ws://127.0.0.1:port */
  url: string;
  requests: { path: string; frame: Record<string, unknown> }[];
  /** Handshakes refused, with why. */
  refused: string[];
  set(b: Partial<SparkBehaviour>): void;
  close(): Promise<void>;
}

interface SparkBehaviour {
  pieces: string[];
  promptTokens: number;
  completionTokens: number;
  /** A Spark error code to answer with in the first frame (11202 QPS limit, 10013 content review). */
  errorCode: number;
  errorMessage: string;
}

const DOMAINS: Record<string, string> = {
  '/v1.1/chat': 'lite',
  '/v2.1/chat': 'generalv2',
  '/v3.1/chat': 'generalv3',
  '/v3.5/chat': 'generalv3.5',
  '/v4.0/chat': '4.0Ultra',
  '/chat/pro-128k': 'pro-128k',
  '/chat/max-32k': 'max-32k',
};

export async function startFakeSpark(opts: {
  credentials: Record<string, { appId: string; secret: string }>;
  behaviour?: Partial<SparkBehaviour>;
}): Promise<FakeSpark> {
  let b: SparkBehaviour = {
    pieces: ['你好，', '我是讯飞', '星火'],
    promptTokens: 9,
    completionTokens: 7,
    errorCode: 0,
    errorMessage: '',
    ...opts.behaviour,
  };
  const requests: FakeSpark['requests'] = [];
  const refused: string[] = [];
  const server = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: 'Upgrade Required' }));
  });
  const wss = new WebSocketServer({ noServer: true });

  /** The API key of a valid signed URL, or the refusal [status, message]. */
  function verify(req: IncomingMessage): string | [number, string] {
    const u = new URL(req.url ?? '/', 'http://fake');
    const auth = u.searchParams.get('authorization') ?? '';
    const date = u.searchParams.get('date') ?? '';
    const host = u.searchParams.get('host') ?? '';
    const bad: [number, string] = [401, 'HMAC signature cannot be verified'];
    if (!auth || !date || !host) return [401, 'Unauthorized'];
    const when = Date.parse(date);
    if (Number.isNaN(when) || Math.abs(Date.now() - when) > 300_000)
      return [
        403,
        'HMAC signature cannot be verified, a valid date or x-date header is required for HMAC Authentication',
      ];
    if (host !== req.headers.host) return bad;
    const fields: Record<string, string> = {};
    for (const m of Buffer.from(auth, 'base64')
      .toString('utf8')
      .matchAll(/(\w+)="([^"]*)"/g))
      fields[m[1] ?? ''] = m[2] ?? '';
    const cred = opts.credentials[fields.api_key ?? ''];
    if (!cred) return [401, 'HMAC signature cannot be verified: api_key not found'];
    if (fields.algorithm !== 'hmac-sha256' || fields.headers !== 'host date request-line') return bad;
    const expected = createHmac('sha256', cred.secret)
      .update(`host: ${host}\ndate: ${date}\nGET ${u.pathname} HTTP/1.1`)
      .digest('base64');
    if (expected !== fields.signature) return bad;
    return fields.api_key ?? '';
  }

  server.on('upgrade', (req, socket: Socket, head) => {
    const v = verify(req);
    if (typeof v !== 'string') {
      refused.push(v[1]);
      const body = JSON.stringify({ message: v[1] });
      socket.end(
        `HTTP/1.1 ${v[0]} ${v[0] === 401 ? 'Unauthorized' : 'Forbidden'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    const apiKey = v;
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    wss.handleUpgrade(req, socket, head, (ws) => {
      const sid = `cht000${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      const fail = (code: number, message: string) => {
        ws.send(JSON.stringify({ header: { code, message, sid, status: 2 } }));
        ws.close();
      };
      ws.once('message', (data) => {
        let frame: {
          header?: { app_id?: string };
          parameter?: { chat?: { domain?: string } };
          payload?: { message?: { text?: { role?: string; content?: string }[] } };
        } = {};
        try {
          frame = JSON.parse(String(data));
        } catch {
          return fail(10163, 'request is not valid json');
        }
        requests.push({ path, frame: frame as Record<string, unknown> });
        if (frame.header?.app_id !== opts.credentials[apiKey]?.appId) return fail(10313, 'appid cannot match apikey');
        if (frame.parameter?.chat?.domain !== DOMAINS[path]) return fail(10163, 'domain does not match the url');
        const text = frame.payload?.message?.text;
        if (!Array.isArray(text) || text.length === 0) return fail(10163, 'payload.message.text must not be empty');
        if (b.errorCode) return fail(b.errorCode, b.errorMessage);
        b.pieces.forEach((content, seq) => {
          const last = seq === b.pieces.length - 1;
          const status = last ? 2 : seq === 0 ? 0 : 1;
          ws.send(
            JSON.stringify({
              header: { code: 0, message: 'Success', sid, status },
              payload: {
                choices: { status, seq, text: [{ content, role: 'assistant', index: 0 }] },
                ...(last
                  ? {
                      usage: {
                        text: {
                          question_tokens: 4,
                          prompt_tokens: b.promptTokens,
                          completion_tokens: b.completionTokens,
                          total_tokens: b.promptTokens + b.completionTokens,
                        },
                      },
                    }
                  : {}),
              },
            }),
          );
        });
        ws.close();
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    refused,
    set(n) {
      b = { ...b, ...n };
    },
    close: () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
