/**
 * A fake Baidu Qianfan: the OAuth endpoint (`/oauth/2.0/token`, client_credentials) that trades a
 * known API Key and Secret Key for an access token, and the wenxinworkshop chat endpoints, which
 * accept only tokens it issued. Errors are Baidu's: the token endpoint's `{error,
 * error_description}` (HTTP 401), the chat API's `{error_code, error_msg}` with HTTP 200. Streams
 * are SSE `data:` lines with `result` pieces, `is_end` and the usage on the last one.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeBaidu {
  url: string;
  readonly tokensIssued: number;
  requests: { endpoint: string; body: Record<string, unknown>; tokenOk: boolean }[];
  set(b: Partial<BaiduBehaviour>): void;
  /** Invalidates every issued token (the next chat call answers error 110). */
  revokeTokens(): void;
  close(): Promise<void>;
}

interface BaiduBehaviour {
  reply: string;
  promptTokens: number;
  errorCode: number;
  errorMsg: string;
}

const ENDPOINTS = new Set(['completions_pro', 'completions', 'ernie_speed', 'ernie-lite-8k', 'ernie-speed-128k']);

export async function startFakeBaidu(opts: { apiKey: string; secretKey: string }): Promise<FakeBaidu> {
  let b: BaiduBehaviour = { reply: '文心 says hello', promptTokens: 6, errorCode: 0, errorMsg: '' };
  const tokens = new Set<string>();
  const requests: FakeBaidu['requests'] = [];
  let issued = 0;
  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      if (url.pathname === '/oauth/2.0/token') {
        if (url.searchParams.get('grant_type') !== 'client_credentials')
          return send(res, 400, { error: 'unsupported_grant_type', error_description: 'unsupported grant type' });
        if (url.searchParams.get('client_id') !== opts.apiKey)
          return send(res, 401, { error: 'invalid_client', error_description: 'unknown client id' });
        if (url.searchParams.get('client_secret') !== opts.secretKey)
          return send(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed' });
        const token = `24.${randomBytes(16).toString('hex')}.2592000.1.${Date.now()}`;
        tokens.add(token);
        issued++;
        return send(res, 200, {
          access_token: token,
          expires_in: 2592000,
          scope: 'public ai_custom_qianfan_bloomz_7b_compressed',
        });
      }
      const m = /^\/rpc\/2\.0\/ai_custom\/v1\/wenxinworkshop\/chat\/([^/]+)$/.exec(url.pathname);
      if (!m) return send(res, 404, { error_code: 3, error_msg: 'Unsupported openapi method' });
      const tokenOk = tokens.has(url.searchParams.get('access_token') ?? '');
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        return send(res, 200, { error_code: 336003, error_msg: 'invalid argument' });
      }
      requests.push({ endpoint: m[1] ?? '', body, tokenOk });
      if (!tokenOk) return send(res, 200, { error_code: 110, error_msg: 'Access token invalid or no longer valid' });
      if (!ENDPOINTS.has(m[1] ?? '')) return send(res, 200, { error_code: 3, error_msg: 'Unsupported openapi method' });
      const msgs = body.messages as { role: string }[] | undefined;
      if (!Array.isArray(msgs) || msgs.length % 2 === 0 || msgs.some((x) => x.role === 'system'))
        return send(res, 200, { error_code: 336006, error_msg: 'the length of messages must be an odd number' });
      if (b.errorCode) return send(res, 200, { error_code: b.errorCode, error_msg: b.errorMsg });
      const words = b.reply.split(' ').map((w, i, all) => (i < all.length - 1 ? `${w} ` : w));
      const usage = {
        prompt_tokens: b.promptTokens,
        completion_tokens: words.length,
        total_tokens: b.promptTokens + words.length,
      };
      const id = `as-${randomBytes(5).toString('hex')}`;
      const created = Math.floor(Date.now() / 1000);
      if (body.stream !== true)
        return send(res, 200, {
          id,
          object: 'chat.completion',
          created,
          result: b.reply,
          is_truncated: false,
          need_clear_history: false,
          finish_reason: 'normal',
          usage,
        });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      words.forEach((w, i) => {
        const end = i === words.length - 1;
        res.write(
          `data: ${JSON.stringify({
            id,
            object: 'chat.completion',
            created,
            sentence_id: i,
            is_end: end,
            is_truncated: false,
            result: w,
            need_clear_history: false,
            ...(end ? { finish_reason: 'normal' } : {}),
            usage: end ? usage : { prompt_tokens: b.promptTokens, completion_tokens: 0, total_tokens: b.promptTokens },
          })}\n\n`,
        );
      });
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get tokensIssued() {
      return issued;
    },
    requests,
    set(p) {
      b = { ...b, ...p };
    },
    revokeTokens() {
      tokens.clear();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
