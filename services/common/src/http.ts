import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type Express, type RequestHandler, type Response } from 'express';
import { httpStatusOf, toAppError } from './errors.ts';
import type { Logger } from './logger.ts';
import { httpDuration, httpRequests, registry } from './metrics.ts';

/** The spec's envelope: `{success, message, data}`. */
export interface Envelope<T = unknown> {
  success: boolean;
  message: string;
  data?: T;
}

/** Sends a successful envelope. */
export function ok<T>(res: Response, data?: T, message = ''): void {
  res.json({ success: true, message, ...(data === undefined ? {} : { data }) } satisfies Envelope<T>);
}

/** Wraps an async handler so rejections reach the error middleware (Express 5 does this too). */
export const handle =
  (fn: (...args: Parameters<RequestHandler>) => Promise<unknown>): RequestHandler =>
  (req, res, next) => {
    fn(req, res, next).catch(next);
  };

/** Counts and times every request by its matched route pattern (low cardinality). */
export function httpMetrics(): RequestHandler {
  return (req, res, next) => {
    const end = httpDuration.startTimer();
    res.on('finish', () => {
      const route = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
      end({ method: req.method, route });
      httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}

/** Maps any error to the envelope once: AppError keeps its message, anything else is logged and hidden. */
export function envelopeErrors(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const appErr = toAppError(err);
    const status = httpStatusOf[appErr.code];
    if (status >= 500) logger.error({ err: appErr.cause ?? err, path: req.path }, 'request failed');
    if (res.headersSent) return;
    res.status(status).json({ success: false, message: appErr.message } satisfies Envelope);
  };
}

export type ReadinessCheck = () => Promise<unknown>;

async function runChecks(
  checks: Record<string, ReadinessCheck>,
): Promise<{ ok: boolean; checks: Record<string, string> }> {
  const results = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        await check();
        return [name, 'ok'] as const;
      } catch (err) {
        return [name, err instanceof Error ? err.message : String(err)] as const;
      }
    }),
  );
  return { ok: results.every(([, r]) => r === 'ok'), checks: Object.fromEntries(results) };
}

/**
 * Adds /healthz (alive: every liveness check passes, e.g. no consumer stalled past its grace
 * period), /readyz (every readiness check passes) and /metrics to an Express app.
 */
export function mountOps(
  app: Express,
  checks: Record<string, ReadinessCheck> = {},
  liveness: Record<string, ReadinessCheck> = {},
): void {
  app.get('/healthz', async (_req, res) => {
    const r = await runChecks(liveness);
    res.status(r.ok ? 200 : 503).json({ status: r.ok ? 'ok' : 'unhealthy', ...(r.ok ? {} : { checks: r.checks }) });
  });
  app.get('/readyz', async (_req, res) => {
    const r = await runChecks(checks);
    res.status(r.ok ? 200 : 503).json({ status: r.ok ? 'ok' : 'unavailable', checks: r.checks });
  });
  app.get('/metrics', async (_req, res) => {
    res.set('Content-Type', registry.contentType).send(await registry.metrics());
  });
}

/** An Express app with only the ops endpoints, for services whose API is gRPC. */
export function createOpsApp(
  checks: Record<string, ReadinessCheck> = {},
  liveness: Record<string, ReadinessCheck> = {},
): Express {
  const app = express();
  app.disable('x-powered-by');
  mountOps(app, checks, liveness);
  return app;
}

/** Listens on a port (0 = ephemeral) and resolves with the bound port and a close function. */
export async function listen(
  app: Express,
  port: number,
  host = '0.0.0.0',
): Promise<{ server: Server; port: number; close: () => Promise<void> }> {
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  server.keepAliveTimeout = 65_000;
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
