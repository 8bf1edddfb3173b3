import { request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { clientAddress } from '@aigw/common';
import type { RequestHandler } from 'express';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);

/**
 * Streams a request to another HTTP server and its answer back, chunk by chunk (SSE stays live).
 * Used in the local stack so one port serves the console, /api and the relay's /v1.
 * A client disconnect aborts the upstream request.
 */
export function proxyTo(target: string): RequestHandler {
  const base = new URL(target);
  return (req, res) => {
    // The metrics' route label: the mount prefix, never the raw path (bounded cardinality).
    (req as { route?: unknown }).route = { path: '/*' };
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !HOP_BY_HOP.has(k)));
    headers['x-forwarded-for'] = req.ip ?? req.socket.remoteAddress ?? '';
    const upstream = httpRequest(
      {
        host: base.hostname,
        port: base.port,
        method: req.method,
        path: req.originalUrl,
        headers,
      },
      (up) => {
        res.status(up.statusCode ?? 502);
        for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) res.setHeader(k, v);
        res.flushHeaders();
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.status(502).json({ error: { message: 'relay unavailable', type: 'bad_gateway' } });
      else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  };
}

/** Paths whose WebSocket upgrades the gateway passes to the relay (OpenAI's realtime API). */
export const UPGRADE_PATHS = ['/v1/realtime'];

/**
 * Passes WebSocket upgrades of `paths` to another server as raw bytes both ways (the relay checks
 * the key and answers the handshake itself); any other upgrade is refused with 404. The client's
 * address is sent as X-Forwarded-For, read from the forwarded headers only when the peer is a
 * trusted proxy.
 */
export function proxyUpgrades(
  server: Server,
  target: string,
  trusted: (addr: string) => boolean,
  paths: readonly string[] = UPGRADE_PATHS,
): void {
  const base = new URL(target);
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (!paths.includes(path)) {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    const forwardedFor = clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trusted);
    const upstream = connect(Number(base.port || 80), base.hostname);
    const close = () => {
      socket.destroy();
      upstream.destroy();
    };
    socket.on('error', close);
    upstream.on('error', () => {
      if (!upstream.bytesRead) socket.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      close();
    });
    upstream.on('connect', () => {
      const lines = [`${req.method ?? 'GET'} ${url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i] ?? '';
        if (name.toLowerCase() === 'x-forwarded-for') continue;
        lines.push(`${name}: ${req.rawHeaders[i + 1] ?? ''}`);
      }
      lines.push(`x-forwarded-for: ${forwardedFor}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
  });
}
