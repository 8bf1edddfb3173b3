import { baseEnv, infraDefaults, infraEnv, loadConfig, peerDefaults, proxyList } from '@aigw/common';
import { z } from 'zod';

const schema = baseEnv.extend(infraEnv.shape).extend({
  USERS_ADDR: z.string(),
  CHANNELS_ADDR: z.string(),
  BILLING_ADDR: z.string(),
  RELAY_ADDR: z.string(),
  LOGS_ADDR: z.string(),
  TASKS_ADDR: z.string(),
  /** /readyz and /metrics (the public port serves /healthz only). */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535),
  SESSION_SECRET: z.string().min(16, 'SESSION_SECRET must hold at least 16 characters'),
  /** Built console (console/dist); served with a fallback to index.html for client routes. */
  CONSOLE_DIR: z.string().optional(),
  /** Local stack only: the gateway proxies /v1, /pg, /dashboard, /v1beta to the relay and the task routes to tasks (TASKS_PREFIXES). */
  RELAY_HTTP_URL: z.string().url().optional(),
  TASKS_HTTP_URL: z.string().url().optional(),
  /**
   * Proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (addresses, CIDRs, loopback,
   * linklocal, uniquelocal; comma list). Default none: the client is the socket's peer, so a
   * forged header cannot reset rate limits. Behind an ingress, name the ingress's addresses.
   */
  TRUSTED_PROXIES: proxyList,
  /** Older name of TRUSTED_PROXIES, read when that is unset. */
  TRUST_PROXY: proxyList,
  RATE_LIMIT_WEB: z.coerce.number().int().positive().default(120),
  RATE_LIMIT_API: z.coerce.number().int().positive().default(360),
  RATE_LIMIT_CRITICAL: z.coerce.number().int().positive().default(20),
  /** Wrong passwords in a row one account may take before each further one locks it (1 s, 2 s, ... 15 min). */
  LOGIN_FREE_FAILURES: z.coerce.number().int().min(1).default(5),
  COOKIE_SECURE: z.enum(['true', 'false']).default('false'),
  VERSION: z.string().default('v0.1.0'),
  /** Prefix of every Redis key (sessions, limits, OAuth states); tests give each stack its own. */
  REDIS_KEY_PREFIX: z.string().default(''),
  /** Third-party endpoints; tests point them at local servers speaking the same protocol. */
  GITHUB_OAUTH_URL: z.string().url().default('https://github.com'),
  GITHUB_API_URL: z.string().url().default('https://api.github.com'),
  /** Linux DO Connect's endpoints (new-api's LINUX_DO_TOKEN_ENDPOINT and LINUX_DO_USER_ENDPOINT). */
  LINUX_DO_AUTHORIZATION_ENDPOINT: z.string().url().default('https://connect.linux.do/oauth2/authorize'),
  LINUX_DO_TOKEN_ENDPOINT: z.string().url().default('https://connect.linux.do/oauth2/token'),
  LINUX_DO_USER_ENDPOINT: z.string().url().default('https://connect.linux.do/api/user'),
  /** Discord: the authorization page's site and the API base (token and users/@me). */
  DISCORD_OAUTH_URL: z.string().url().default('https://discord.com'),
  DISCORD_API_URL: z.string().url().default('https://discord.com/api/v10'),
  TURNSTILE_VERIFY_URL: z.string().url().default('https://challenges.cloudflare.com/turnstile/v0/siteverify'),
  /** Let the Uptime Kuma panel fetch status pages on loopback and private addresses (tests, a private Kuma). */
  UPTIME_KUMA_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false'),
});

export type Config = z.infer<typeof schema>;

/** Parses the gateway's environment once (fail fast). */
export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  return loadConfig(schema, env, { ...infraDefaults, ...peerDefaults, HTTP_PORT: '3000', METRICS_PORT: '9464' });
}
