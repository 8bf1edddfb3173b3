import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelSource } from '../domain/exchange/ports.ts';
import { createUpstreamHttp } from './upstream-http.ts';

const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('upstream HTTP client', () => {
  let server: Server;
  let base = '';
  const closed: string[] = [];
  let bigWritten = 0;
  let bigBlocked = false;
  const http = createUpstreamHttp({ timeoutMs: 10_000 });

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      res.on('close', () => closed.push(req.url ?? ''));
      if (req.url === '/big') {
        // 32 MB in 64 KB writes, waiting for 'drain' whenever the socket is full.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        bigWritten = 0;
        bigBlocked = false;
        const chunk = Buffer.alloc(64 * 1024, 7);
        const pump = () => {
          while (bigWritten < 32 * MB) {
            bigWritten += chunk.length;
            if (!res.write(chunk)) {
              bigBlocked = true;
              res.once('drain', pump);
              return;
            }
          }
          res.end();
        };
        pump();
      } else if (req.url === '/slow-head') {
        setTimeout(() => res.writeHead(200).end('late'), 3_000);
      } else if (req.url === '/endless') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const t = setInterval(() => res.write('data: x\n\n'), 20);
        res.on('close', () => clearInterval(t));
      } else if (req.url === '/echo') {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          res.setHeader('set-cookie', ['a=1', 'b=2']);
          res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' });
          res.end(Buffer.concat(chunks));
        });
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await http.close();
    await new Promise((r) => server.close(r));
  });

  it('when a body is posted, then status, headers (repeated ones as lists) and the echoed bytes come back', async () => {
    const res = await http.send({ url: `${base}/echo`, method: 'POST', headers: {}, body: '{"héllo":1}' });
    expect(res.status).toBe(201);
    expect(res.headers['x-upstream']).toBe('yes');
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect((await res.bytes()).toString('utf8')).toBe('{"héllo":1}');
  });

  it('when the reader pauses, then the upstream socket fills up instead of the relay buffering the body', async () => {
    const res = await http.send({ url: `${base}/big`, method: 'GET', headers: {} });
    const it = res.body[Symbol.asyncIterator]();
    const first = await it.next();
    await sleep(300);
    // Not read for 300 ms: the server had to wait for 'drain' long before writing 32 MB (what
    // it got out sits in the loopback's socket buffers, a few MB, plus 64 KB in the client).
    expect(bigBlocked).toBe(true);
    expect(bigWritten).toBeLessThan(16 * MB);
    let total = (first.value as Uint8Array).length;
    for (;;) {
      const n = await it.next();
      if (n.done) break;
      total += (n.value as Uint8Array).length;
    }
    expect(total).toBe(32 * MB);
  });

  it('when the caller cancels before the answer starts, then the call fails at once and the connection closes', async () => {
    const cancel = cancelSource();
    const t0 = performance.now();
    setTimeout(() => cancel.abort(), 100);
    await expect(http.send({ url: `${base}/slow-head`, method: 'GET', headers: {}, cancel })).rejects.toThrow();
    expect(performance.now() - t0).toBeLessThan(2_000);
    await sleep(100);
    expect(closed).toContain('/slow-head');
  });

  it('when the reader stops iterating a stream, then the upstream call is aborted', async () => {
    const res = await http.send({ url: `${base}/endless`, method: 'GET', headers: {} });
    let n = 0;
    for await (const _ of res.body) if (++n === 2) break;
    await sleep(200);
    expect(closed).toContain('/endless');
  });

  it('when already cancelled, then nothing is sent', async () => {
    const cancel = cancelSource();
    cancel.abort();
    await expect(http.send({ url: `${base}/echo`, method: 'POST', headers: {}, body: 'x', cancel })).rejects.toThrow(
      'aborted',
    );
  });
});
