import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { httpMetrics, mountOps, type ReadinessCheck } from '@aigw/common';
import express from 'express';

/**
 * The relay's HTTP server: node:http with the relay routes first (no framework on the hot
 * path), everything else (/healthz, /readyz, /metrics, 404) through a small Express app.
 * `drain()` stops accepting connections and waits for in-flight requests (streams included).
 */
export function createRelayServer(opts: {
  readiness: Record<string, ReadinessCheck>;
  liveness?: Record<string, ReadinessCheck>;
}): {
  server: Server;
  /** Sets the relay routes' dispatcher (true when it took the request). */
  attach(relay: (req: IncomingMessage, res: ServerResponse) => boolean): void;
  inflight(): number;
  track(p: Promise<unknown>): void;
  drain(graceMs: number): Promise<void>;
} {
  let relay: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  const ops = express();
  ops.disable('x-powered-by');
  ops.use(httpMetrics());
  mountOps(ops, opts.readiness, opts.liveness);
  ops.use((req, res) => {
    res.status(404).json({
      error: {
        message: `Invalid URL (${req.method} ${req.path})`,
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
  });
  // In-flight requests as a count (a Set of promises with finally() cost two promises each).
  let pending = 0;
  let idle: (() => void) | undefined;
  const settled = () => {
    pending--;
    if (pending === 0 && idle) {
      idle();
      idle = undefined;
    }
  };
  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    if (relay?.(req, res)) return;
    ops(req, res);
  });
  return {
    server,
    attach(fn) {
      relay = fn;
    },
    inflight: () => pending,
    track(p) {
      pending++;
      p.then(settled, settled);
    },
    async drain(graceMs) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = Date.now() + graceMs;
      while (pending > 0 && Date.now() < deadline) {
        await new Promise<void>((r) => {
          idle = r;
          setTimeout(r, 200);
        });
        server.closeIdleConnections();
      }
      server.closeAllConnections();
      await closed;
    },
  };
}
