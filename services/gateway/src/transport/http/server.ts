import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  AppError,
  consumerRegistry,
  envelopeErrors,
  httpMetrics,
  type Logger,
  mountOps,
  type OptionsCache,
  pingRedis,
  type Redis,
} from '@aigw/common';
import express, { type Express } from 'express';
import type { Config } from '../../config.ts';
import type { Clients, RouteDeps } from './deps.ts';
import { type AccessTokenLookup, ROLE, requireRole } from './middleware/auth.ts';
import { RATE_LIMITS, rateLimit } from './middleware/rate-limit.ts';
import { sessions as createSessions } from './middleware/session.ts';
import { proxyTo } from './proxy.ts';
import { mountRoutes } from './routes/index.ts';

export interface ServerInput {
  config: Config;
  logger: Logger;
  redis: Redis;
  options: OptionsCache;
  clients: Clients;
}

/**
 * The gateway's HTTP surface: ops endpoints, the /api contract (JSON envelope, sessions, guards,
 * rate limits), the relay and task proxies of the local stack, and the console's static files.
 */
export function createServer({ config, logger, redis, options, clients }: ServerInput): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.TRUST_PROXY);
  app.use(httpMetrics());
  const consumers = consumerRegistry();
  consumers.add('options', options);
  mountOps(app, { redis: () => pingRedis(redis), consumers: consumers.readiness }, { consumers: consumers.liveness });

  // Before any body parser: the proxies stream bodies as they come.
  if (config.RELAY_HTTP_URL) {
    const relay = proxyTo(config.RELAY_HTTP_URL);
    for (const prefix of ['/v1', '/v1beta', '/pg', '/dashboard']) app.use(prefix, relay);
  }
  if (config.TASKS_HTTP_URL) {
    const tasks = proxyTo(config.TASKS_HTTP_URL);
    for (const prefix of ['/mj', '/suno']) app.use(prefix, tasks);
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
  api.use(express.json({ limit: '10mb' }));
  api.use(sessions.load);
  api.use(rateLimit(redis, { ...RATE_LIMITS.api, max: config.RATE_LIMIT_API }));
  mountRoutes(api, deps);
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
