import { request as httpRequest } from 'node:http';
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
