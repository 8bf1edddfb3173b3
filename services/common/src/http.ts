import type { Server } from 'node:http';
import { type AddressInfo, BlockList, isIP } from 'node:net';
import express, { type ErrorRequestHandler, type Express, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { AppError, httpStatusOf, toAppError } from './errors.ts';
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

/**
 * Counts and times every request by its matched route pattern (low cardinality). The pattern is
 * taken when the router matches the route, with the mount path it had then: read at the end, an
 * error answered by the app-level handler (after the router restored `baseUrl`) gave
 * `/user/topup` where a success gave `/api/user/topup`.
 */
export function httpMetrics(): RequestHandler {
  return (req, res, next) => {
    const end = httpDuration.startTimer();
    let route: string | undefined;
    let matched: unknown = req.route;
    Object.defineProperty(req, 'route', {
      configurable: true,
      enumerable: true,
      get: () => matched,
      set(v: { path?: unknown } | undefined) {
        matched = v;
        if (v?.path !== undefined) route = `${req.baseUrl}${String(v.path)}`;
      },
    });
    res.on('finish', () => {
      const r = route ?? 'unmatched';
      end({ method: req.method, route: r });
      httpRequests.inc({ method: req.method, route: r, status: String(res.statusCode) });
    });
    next();
  };
}

/**
 * A request the HTTP layer refuses before any use case runs (malformed JSON, a body too large, a
 * field of the wrong type): answered with its own 4xx status rather than the business-error 200.
 */
export class BadRequest extends AppError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super('INVALID_ARGUMENT', message);
    this.name = 'BadRequest';
  }
}

/** 400 with a client-safe message. */
export const badRequest = (message: string) => new BadRequest(400, message);

/** Messages of the errors body-parser and the router raise for malformed requests (by `type`). */
const CLIENT_ERRORS: Record<string, string> = {
  'entity.parse.failed': '请求体不是合法的 JSON',
  'entity.too.large': '请求体过大',
  'encoding.unsupported': '不支持的请求体编码',
  'charset.unsupported': '不支持的请求体字符集',
  'request.aborted': '请求被中断',
  'request.size.invalid': '请求体长度与 Content-Length 不符',
  'parameters.too.many': '参数过多',
  'encoding.invalid': '请求体不是合法的 UTF-8 文本',
};

/**
 * The client's own mistakes raised by Express and body-parser (they carry a 4xx `status`): a
 * BadRequest with a message of ours. Their own message and fields (body-parser keeps the raw
 * body, passwords included) are never sent nor logged.
 */
export function clientError(err: unknown): BadRequest | undefined {
  if (err instanceof BadRequest) return err;
  if (!err || typeof err !== 'object' || err instanceof AppError) return undefined;
  const e = err as { status?: unknown; statusCode?: unknown; type?: unknown };
  const status = Number(e.status ?? e.statusCode);
  if (!Number.isInteger(status) || status < 400 || status > 499) return undefined;
  const byType = typeof e.type === 'string' ? CLIENT_ERRORS[e.type] : undefined;
  const message = byType ?? (err instanceof URIError || status === 400 ? '请求的编码无效' : '请求无效');
  return new BadRequest(status, message);
}

/** What may be logged of a failed request's error: never a request body. */
function loggable(err: unknown): unknown {
  if (err && typeof err === 'object' && 'body' in err) {
    const { body: _body, ...rest } = err as Record<string, unknown>;
    const e = err as unknown as Error;
    return { ...rest, message: e.message, stack: e.stack };
  }
  return err;
}

/** Maps any error to the envelope once: AppError keeps its message, anything else is logged and hidden. */
export function envelopeErrors(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const bad = clientError(err);
    const appErr = bad ?? toAppError(err);
    const status = bad ? bad.status : httpStatusOf[appErr.code];
    if (status >= 500) logger.error({ err: loggable(appErr.cause ?? err), path: req.path }, 'request failed');
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

/**
 * Liveness only, for a public port: /readyz (which names the failing dependency) and /metrics
 * stay on the ops port (METRICS_PORT), never reachable through the ingress.
 */
export function mountHealth(app: Express): void {
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
}

/** An Express app for a public port, with /healthz only (routes are added to it). */
export function createPublicApp(): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(httpMetrics());
  mountHealth(app);
  return app;
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

/**
 * The TRUSTED_PROXIES setting of a service's config schema: a comma list checked at start-up
 * (fail fast) with `trustedProxies`. Default: none.
 */
export const proxyList = z
  .string()
  .default('')
  .superRefine((s, ctx) => {
    try {
      trustedProxies(s);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });

/** Named ranges accepted in TRUSTED_PROXIES, as in Express's "trust proxy" setting. */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/**
 * An address without its IPv4-mapped IPv6 prefix (`::ffff:10.0.0.1` -> `10.0.0.1`). Undefined
 * (Express asks "trust proxy" about a socket whose client already left) is the empty address.
 */
export function plainAddress(addr: string | undefined): string {
  const a = (addr ?? '').trim();
  return a.toLowerCase().startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

/**
 * The proxies whose forwarded headers are believed: a comma list of addresses, CIDRs and the
 * names loopback, linklocal, uniquelocal. Empty (the default) trusts nobody: X-Forwarded-For and
 * X-Forwarded-Proto are then ignored and the client is the socket's peer. A malformed entry
 * throws (the service refuses to start).
 */
export function trustedProxies(spec: string): (addr: string | undefined) => boolean {
  const list = new BlockList();
  let empty = true;
  for (const raw of spec.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    for (const cidr of NAMED_RANGES[entry] ?? [entry]) {
      const [net = '', bits] = cidr.split('/');
      const family = isIP(net);
      const max = family === 6 ? 128 : 32;
      const prefix = bits === undefined ? max : Number(bits);
      if (!family || !/^\d{1,3}$/.test(bits ?? String(max)) || prefix > max)
        throw new Error(`TRUSTED_PROXIES: "${entry}" is not an address, a CIDR or a known range name`);
      list.addSubnet(net, prefix, family === 6 ? 'ipv6' : 'ipv4');
      empty = false;
    }
  }
  if (empty) return () => false;
  return (addr) => {
    const a = plainAddress(addr);
    const family = isIP(a);
    return family !== 0 && list.check(a, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/**
 * The client's address: the socket peer, unless that peer is a trusted proxy; then the
 * X-Forwarded-For hops are read from the right (the nearest first), and the first one that is not
 * itself a trusted proxy is the client. A forged left-most entry is never reached past an
 * untrusted hop.
 */
export function clientAddress(
  remote: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: (addr: string) => boolean,
): string {
  let addr = plainAddress(remote ?? '');
  if (!trusted(addr) || forwardedFor === undefined) return addr;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((h) => plainAddress(h))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] as string;
    if (!isIP(hop)) return addr; // garbage in the header: stop at the last address we can vouch for
    addr = hop;
    if (!trusted(addr)) return addr;
  }
  return addr;
}
