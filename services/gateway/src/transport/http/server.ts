import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  AppError,
  envelopeErrors,
  httpMetrics,
  type Logger,
  mountHealth,
  type OptionsCache,
  type Redis,
  trustedProxies,
} from '@aigw/common';
import express, { type Express } from 'express';
import type { Config } from '../../config.ts';
import type { AuditSink } from '../kafka/audit.ts';
import type { Clients, RouteDeps } from './deps.ts';
import { type AccessTokenLookup, ROLE, requireRole } from './middleware/auth.ts';
import { RATE_LIMITS, rateLimit } from './middleware/rate-limit.ts';
import { sessions as createSessions } from './middleware/session.ts';
import { openApiDocument } from './openapi.ts';
import { proxyTo } from './proxy.ts';
import { routeTable } from './route-table.ts';
import { mountRawRoutes, mountRoutes } from './routes/index.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** JSON bodies must be valid UTF-8 (body-parser would silently turn bad bytes into U+FFFD). */
function utf8Only(_req: unknown, _res: unknown, buf: Buffer, encoding: string): void {
  if (encoding.toLowerCase() !== 'utf-8' && encoding.toLowerCase() !== 'utf8') return;
  try {
    utf8.decode(buf);
  } catch {
    throw Object.assign(new Error('request body is not valid UTF-8'), { status: 400, type: 'encoding.invalid' });
  }
}

/** What the local stack proxies to the tasks service (the chart's Ingress routes the same paths). */
export const TASKS_PREFIXES = [
  '/mj',
  '/fast/mj',
  '/relax/mj',
  '/turbo/mj',
  '/suno',
  '/v1/videos',
  '/v1/video/generations',
  '/kling',
  '/jimeng',
];

/** The largest /api JSON body; beyond it 413. */
export const API_BODY_LIMIT = '1mb';

export interface ServerInput {
  config: Config;
  logger: Logger;
  redis: Redis;
  options: OptionsCache;
  clients: Clients;
  /** Admin actions worth a log entry (root reading a channel key in full). */
  audit: AuditSink;
}

/**
 * The gateway's HTTP surface: ops endpoints, the /api contract (JSON envelope, sessions, guards,
 * rate limits), the relay and task proxies of the local stack, and the console's static files.
 */
export function createServer({ config, logger, redis, options, clients, audit }: ServerInput): Express {
  const app = express();
  app.disable('x-powered-by');
  const trusted = trustedProxies(config.TRUSTED_PROXIES || config.TRUST_PROXY || '');
  // req.ip, req.protocol and req.secure follow the forwarded headers only from these peers.
  app.set('trust proxy', (addr: string) => trusted(addr));
  app.use(httpMetrics());
  mountHealth(app);

  // Before any body parser: the proxies stream bodies as they come. /v1/videos and
  // /v1/video/generations before /v1: video APIs are tasks of the tasks service, the rest of /v1
  // the relay's.
  if (config.TASKS_HTTP_URL) {
    const tasks = proxyTo(config.TASKS_HTTP_URL);
    for (const prefix of TASKS_PREFIXES) app.use(prefix, tasks);
  }
  if (config.RELAY_HTTP_URL) {
    const relay = proxyTo(config.RELAY_HTTP_URL);
    for (const prefix of ['/v1', '/v1beta', '/pg', '/dashboard']) app.use(prefix, relay);
  }

  const sessions = createSessions(redis, config.SESSION_SECRET);
  const lookup: AccessTokenLookup = async (token) => {
    try {
      const { user } = await clients.users.getUserByAccessToken({ accessToken: token });
      return user
        ? { id: user.id, username: user.username, role: user.role, status: user.status, group: user.group }
        : undefined;
    } catch (err) {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    }
  };
  const deps: RouteDeps = {
    config,
    logger,
    redis,
    options,
    clients,
    audit,
    sessions,
    guard: {
      user: requireRole(ROLE.common, lookup),
      admin: requireRole(ROLE.admin, lookup),
      root: requireRole(ROLE.root, lookup),
    },
    critical: rateLimit(redis, { ...RATE_LIMITS.critical, max: config.RATE_LIMIT_CRITICAL }),
    startTime: Math.floor(Date.now() / 1000),
  };

  const api = express.Router();
  // Webhooks whose signature covers the raw body: before the JSON parser.
  mountRawRoutes(api, deps);
  // 1 MB: far above any form of the console, far below what a gRPC message may carry (4 MB).
  api.use(express.json({ limit: API_BODY_LIMIT, verify: utf8Only }));
  api.use(sessions.load);
  api.use(rateLimit(redis, { ...RATE_LIMITS.api, max: config.RATE_LIMIT_API }));
  mountRoutes(api, deps);
  // Built once from the routes just mounted (their guards and zod schemas).
  const document = openApiDocument(routeTable(api), config.VERSION);
  api.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  api.use((_req, res) => {
    res.status(404).json({ success: false, message: '接口不存在' });
  });
  app.use('/api', api);

  if (config.CONSOLE_DIR && existsSync(join(config.CONSOLE_DIR, 'index.html'))) {
    const dir = config.CONSOLE_DIR;
    app.use(express.static(dir, { index: false, maxAge: '1h' }));
    const web = rateLimit(redis, { ...RATE_LIMITS.web, max: config.RATE_LIMIT_WEB });
    app.get('/{*path}', web, (_req, res) => {
      res.set('Cache-Control', 'no-cache').sendFile(join(dir, 'index.html'));
    });
  }
  app.use(envelopeErrors(logger));
  return app;
}
