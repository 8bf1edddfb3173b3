/**
 * The floor: a bare pass-through proxy (node:http in, undici out, bodies streamed, no auth, no
 * parsing, no billing). Usage: tsx services/relay/test/bench/bare-proxy.ts <port> <upstream base url>
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';

const upstream = String(process.argv[3]);
const agent = new Agent({ keepAliveTimeout: 30_000, pipelining: 1 });
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    request(upstream + (req.url ?? '/'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer upstream-key' },
      body: Buffer.concat(chunks),
      dispatcher: agent,
    })
      .then(async (up) => {
        res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type'] ?? 'application/json') });
        for await (const c of up.body) res.write(c);
        res.end();
      })
      .catch(() => {
        res.statusCode = 502;
        res.end();
      });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const port = (server.address() as AddressInfo).port;
  process.send?.({ ready: true, port });
  console.error(`bare proxy on ${port}`);
});
