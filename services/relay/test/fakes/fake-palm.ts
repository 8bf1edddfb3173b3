/**
 * A fake PaLM 2 endpoint (generativelanguage v1beta2 `models/{model}:generateMessage`). It checks
 * the `key` query parameter and the prompt's shape and answers as Google does: `{candidates,
 * messages}`; a blocked prompt as `{filters}` without candidates; errors as `{error: {code,
 * message, status}}` with their HTTP status (an invalid key is a 400 INVALID_ARGUMENT).
 *
 * @example
 * const fake = await startFakePalm({ apiKey: 'AIza-fake' });
 * // channel type 11, key `AIza-fake`, base_url fake.url
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakePalm {
  url: string;
  requests: { model: string; query: Record<string, string>; body: Record<string, unknown> }[];
  set(b: Partial<PalmBehaviour>): void;
  close(): Promise<void>;
}

interface PalmBehaviour {
  reply: string;
  /** Answer with a safety filter and no candidates. */
  blocked: boolean;
  /** An HTTP error to answer with (429 RESOURCE_EXHAUSTED...). */
  errorStatus: number;
}

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

export async function startFakePalm(opts: { apiKey: string; behaviour?: Partial<PalmBehaviour> }): Promise<FakePalm> {
  let b: PalmBehaviour = { reply: 'PaLM says hello', blocked: false, errorStatus: 0, ...opts.behaviour };
  const requests: FakePalm['requests'] = [];
  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=UTF-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  };
  const fail = (res: ServerResponse, code: number, message: string) =>
    send(res, code, { error: { code, message, status: STATUS[code] ?? 'UNKNOWN' } });

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://fake');
      const m = /^\/v1beta2\/models\/([^/:]+):generateMessage$/.exec(u.pathname);
      if (req.method !== 'POST' || !m) return fail(res, 404, `Method not found: ${u.pathname}`);
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return fail(res, 400, 'Invalid JSON payload received.');
      }
      const query = Object.fromEntries(u.searchParams);
      requests.push({ model: decodeURIComponent(m[1] ?? ''), query, body });
      if (query.key !== opts.apiKey) return fail(res, 400, 'API key not valid. Please pass a valid API key.');
      if (b.errorStatus) return fail(res, b.errorStatus, 'Resource has been exhausted (e.g. check quota).');
      const prompt = body.prompt as { messages?: { author?: string; content?: string }[] } | undefined;
      const messages = prompt?.messages;
      if (!Array.isArray(messages) || messages.length === 0 || messages.some((x) => typeof x.content !== 'string')) {
        return fail(res, 400, '* GenerateMessageRequest.prompt.messages: messages must not be empty');
      }
      if (b.blocked) return send(res, 200, { filters: [{ reason: 'OTHER' }], messages });
      send(res, 200, { candidates: [{ author: '1', content: b.reply }], messages });
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
