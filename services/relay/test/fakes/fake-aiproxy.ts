/**
 * A fake AI Proxy knowledge-base endpoint (`POST /api/library/ask`). It checks the `Api-Key`
 * header and the library id and answers as AI Proxy does: `{success, answer, documents}`; errors
 * with HTTP 200 as `{success: false, errCode, message}`; streams as SSE `data:` lines of
 * `{content, finish, model, documents}`, the documents in the last one. No token counts.
 *
 * @example
 * const fake = await startFakeAiproxy({ apiKey: 'ap-key', libraryId: 'lib-1' });
 * // channel type 21, key `ap-key`, other `lib-1`, base_url fake.url
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeAiproxy {
  url: string;
  requests: { path: string; headers: Record<string, unknown>; body: Record<string, unknown> }[];
  set(b: Partial<AiproxyBehaviour>): void;
  close(): Promise<void>;
}

interface AiproxyBehaviour {
  pieces: string[];
  documents: { title: string; url: string }[];
  /** An error to answer with (success: false). */
  errCode: number;
  errMessage: string;
}

export async function startFakeAiproxy(opts: {
  apiKey: string;
  libraryId: string;
  behaviour?: Partial<AiproxyBehaviour>;
}): Promise<FakeAiproxy> {
  let b: AiproxyBehaviour = {
    pieces: ['根据知识库，', '答案是 42'],
    documents: [{ title: '手册', url: 'https://kb.example/manual' }],
    errCode: 0,
    errMessage: '',
    ...opts.behaviour,
  };
  const requests: FakeAiproxy['requests'] = [];
  const json = (res: ServerResponse, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  };
  const fail = (res: ServerResponse, errCode: number, message: string) =>
    json(res, { success: false, errCode, message });

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return fail(res, 400, 'invalid json');
      }
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      if (req.method !== 'POST' || req.url !== '/api/library/ask') {
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('Not Found');
      }
      if (req.headers['api-key'] !== opts.apiKey) return fail(res, 401, 'Invalid Api-Key');
      if (body.libraryId !== opts.libraryId) return fail(res, 404, `library ${String(body.libraryId)} not found`);
      if (typeof body.query !== 'string' || !body.query) return fail(res, 400, 'query is required');
      if (b.errCode) return fail(res, b.errCode, b.errMessage);
      const model = String(body.model ?? '');
      if (body.stream !== true) {
        return json(res, { success: true, answer: b.pieces.join(''), documents: b.documents });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      for (const p of b.pieces)
        res.write(`data: ${JSON.stringify({ content: p, finish: false, model, documents: [] })}\n\n`);
      res.end(`data: ${JSON.stringify({ content: '', finish: true, model, documents: b.documents })}\n\n`);
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
