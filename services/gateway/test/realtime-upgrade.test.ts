/**
 * The gateway passes WebSocket upgrades of /v1/realtime to the relay (one public port locally, as
 * for the relay's HTTP routes): a real WebSocket server stands in for the relay behind
 * `proxyUpgrades`, and a `ws` client talks to it through the gateway's server.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trustedProxies } from '@aigw/common';
import { eventually } from '@aigw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { proxyUpgrades } from '../src/transport/http/proxy.ts';

let relay: Server;
let gateway: Server;
let gatewayUrl: string;
const seen: IncomingMessage[] = [];

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

beforeAll(async () => {
  relay = createServer();
  const wss = new WebSocketServer({ noServer: true });
  relay.on('upgrade', (req, socket, head) => {
    seen.push(req);
    if (req.headers.authorization !== 'Bearer sk-good') {
      socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.send(JSON.stringify({ type: 'session.created', url: req.url }));
      ws.on('message', (data) => ws.send(JSON.stringify({ type: 'echo', data: String(data) })));
    });
  });
  const relayPort = await listen(relay);
  gateway = createServer((_req, res) => res.end('http'));
  // Nothing trusted: a client's own X-Forwarded-For is not believed.
  proxyUpgrades(gateway, `http://127.0.0.1:${relayPort}`, trustedProxies(''));
  gatewayUrl = `ws://127.0.0.1:${await listen(gateway)}`;
});
afterAll(async () => {
  await new Promise((r) => gateway?.close(r));
  gateway?.closeAllConnections();
  relay?.closeAllConnections();
  await new Promise((r) => relay?.close(r));
});

function open(path: string, headers: Record<string, string>) {
  const ws = new WebSocket(`${gatewayUrl}${path}`, { headers });
  const messages: { type: string; [k: string]: unknown }[] = [];
  ws.on('message', (d) => messages.push(JSON.parse(String(d))));
  return { ws, messages };
}

function status(path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${gatewayUrl}${path}`, { headers });
    ws.once('open', () => reject(new Error('handshake accepted')));
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.once('error', () => undefined);
  });
}

describe('WebSocket upgrades through the gateway', () => {
  it('when a client opens /v1/realtime on the gateway, then the relay gets the handshake (query, key, client address) and events pass both ways', async () => {
    const c = open('/v1/realtime?model=gpt-realtime', {
      authorization: 'Bearer sk-good',
      'x-forwarded-for': '203.0.113.9',
    });
    await new Promise<void>((resolve, reject) => {
      c.ws.once('open', () => resolve());
      c.ws.once('error', reject);
    });
    c.ws.send('{"type":"response.create"}');
    await eventually(
      () => c.messages.length,
      (n) => n >= 2,
      { timeoutMs: 10_000, intervalMs: 50, what: 'two messages from the relay' },
    );
    expect(c.messages).toEqual([
      { type: 'session.created', url: '/v1/realtime?model=gpt-realtime' },
      { type: 'echo', data: '{"type":"response.create"}' },
    ]);
    const req = seen.at(-1) as IncomingMessage;
    // The forged header is replaced by the address the gateway saw.
    expect(req.headers['x-forwarded-for']).toBe('127.0.0.1');
    c.ws.close();
  });

  it('when the relay refuses the handshake, then the client gets its status; other paths get 404 from the gateway', async () => {
    const before = seen.length;
    expect(await status('/v1/realtime', { authorization: 'Bearer sk-bad' })).toBe(401);
    expect(seen.length).toBe(before + 1);
    expect(await status('/v1/chat/completions', { authorization: 'Bearer sk-good' })).toBe(404);
    expect(await status('/api/status', {})).toBe(404);
    expect(seen.length).toBe(before + 1);
  });
});
