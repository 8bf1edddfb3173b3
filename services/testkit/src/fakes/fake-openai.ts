/**
 * A small OpenAI-compatible provider for channel tests: a real node:http server speaking the
 * wire format of /v1/models, /v1/chat/completions (plain and SSE) and the dashboard billing
 * endpoints used for balances. Requests with another key get OpenAI's 401 error body.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeOpenAi {
  url: string;
  /** Paths asked, in order. */
  calls: string[];
  set(opts: Partial<FakeOpenAiOptions>): void;
  close(): Promise<void>;
}

export interface FakeOpenAiOptions {
  key: string;
  models: string[];
  reply: string;
  /** Subscription limit and usage (cents): balance = hardLimitUsd - usageCents / 100. */
  hardLimitUsd: number;
  usageCents: number;
  delayMs: number;
  /** Non-zero: every chat request fails with this status and OpenAI's error body. */
  status: number;
  message: string;
}

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let data = '';
    req.on('data', (c: Buffer) => {
      data += c.toString();
    });
    req.on('end', () => resolve(data));
  });

export async function startFakeOpenAi(initial: Partial<FakeOpenAiOptions> = {}): Promise<FakeOpenAi> {
  let o: FakeOpenAiOptions = {
    key: 'sk-fake-upstream',
    models: ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'],
    reply: 'Hello from the fake provider',
    hardLimitUsd: 100,
    usageCents: 2550,
    delayMs: 0,
    status: 0,
    message: '',
    ...initial,
  };
  const calls: string[] = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    calls.push(url.pathname);
    const raw = await readBody(req);
    if (o.delayMs) await new Promise((r) => setTimeout(r, o.delayMs));
    if (req.headers.authorization !== `Bearer ${o.key}`) {
      send(res, 401, {
        error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' },
      });
      return;
    }
    const created = Math.floor(Date.now() / 1000);
    if (url.pathname === '/v1/models') {
      send(res, 200, {
        object: 'list',
        data: o.models.map((id) => ({ id, object: 'model', created, owned_by: 'fake' })),
      });
    } else if (url.pathname === '/v1/dashboard/billing/subscription') {
      send(res, 200, { object: 'billing_subscription', has_payment_method: true, hard_limit_usd: o.hardLimitUsd });
    } else if (url.pathname === '/v1/dashboard/billing/usage') {
      send(res, 200, { object: 'list', total_usage: o.usageCents });
    } else if (url.pathname === '/v1/chat/completions' && req.method === 'POST') {
      if (o.status) {
        send(res, o.status, { error: { message: o.message || 'upstream error', type: 'server_error', code: null } });
        return;
      }
      const body = JSON.parse(raw || '{}') as { model?: string; stream?: boolean };
      const model = body.model ?? 'gpt-4o-mini';
      const usage = { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 };
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created, model };
        for (const word of o.reply.split(' ')) {
          res.write(
            `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: `${word} ` }, finish_reason: null }] })}\n\n`,
          );
        }
        res.write(
          `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage })}\n\n`,
        );
        res.end('data: [DONE]\n\n');
        return;
      }
      send(res, 200, {
        id: 'chatcmpl-fake',
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: o.reply }, finish_reason: 'stop' }],
        usage,
      });
    } else {
      send(res, 404, { error: { message: `Unknown path ${url.pathname}`, type: 'invalid_request_error' } });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    set: (next) => {
      o = { ...o, ...next };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
