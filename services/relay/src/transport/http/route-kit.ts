/**
 * What every relay route shares: request ids, the client's address, the error and JSON answers
 * in each API's shape, the caller's identity from its key (cached token and user, IP allow-list,
 * rate limits, group) and the mapping of a failure to its status. Built once per server by
 * routeContext(); the route modules take it instead of closing over one large function.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { clientAddress, type Logger, type OptionsCache } from '@aigw/common';
import type { IdentityCaches } from '../../data/identity-caches.ts';
import type { LimitVerdict, RateLimiter } from '../../data/rate-limiter.ts';
import type { RelayMode } from '../../domain/adaptors/index.ts';
import {
  ADMIN_ROLE,
  checkToken,
  checkUser,
  groupSettings,
  ipAllowed,
  parseKey,
  type ResolvedGroup,
  resolveGroup,
  type TokenInfo,
  type UserInfo,
} from '../../domain/authorize.ts';
import type { ClientFormat } from '../../domain/exchange/ports.ts';
import type { Json } from '../../domain/protocols/openai.ts';
import { errorBody } from '../../domain/protocols/registry.ts';
import { RelayError } from '../../domain/relay-error.ts';
import type { RelayDeps } from '../../domain/relay-request.ts';
import type { LeaseFence } from './lease-fence.ts';
import { type RefusalReason, relayMetrics } from './metrics.ts';
import type { SessionUser } from './session.ts';

/** The labels of a request's relay_request_duration_seconds, filled in as it is understood. */
export interface Labels {
  route: string;
  model: string;
  startedAt: number;
}

export interface RouteDeps {
  pipeline: RelayDeps;
  identities: IdentityCaches;
  options: Pick<OptionsCache, 'json' | 'number' | 'bool'>;
  limiter: RateLimiter;
  session(req: IncomingMessage): Promise<SessionUser | undefined>;
  logger: Logger;
  /** The peers whose X-Forwarded-For names the client (TRUSTED_PROXIES; none by default). */
  trustedProxy(addr: string): boolean;
  /** Body limit of multipart uploads. */
  maxBodyBytes: number;
  /** Body limit of JSON requests (all the others). */
  maxJsonBytes: number;
  /** The user's wallet (dashboard billing endpoints). */
  walletOf(userId: number): Promise<{ quota: number; usedQuota: number }>;
  /** Tracks in-flight requests for the drain on shutdown. */
  track(p: Promise<unknown>): void;
  /** The requests holding a reservation, ended when the lease cannot be renewed (lease-fence.ts). */
  fence?: LeaseFence;
  /** Refuses a prompt holding a sensitive word (domain/sensitive-words.ts); before any billing. */
  screen?(body: Json | FormData): void;
}

const ID_PREFIX = randomBytes(4).toString('hex');
let seq = 0;
/** Unique request ids (the idempotency key of pre-consume, settle and refund, and the usage event id). */
export function newRequestId(): string {
  seq = (seq + 1) % 0x7fffffff;
  return `${ID_PREFIX}-${Date.now().toString(36)}-${seq.toString(36)}`;
}

/** The client's address: the peer, or X-Forwarded-For when the peer is a trusted proxy. */
export function clientIp(req: IncomingMessage, trusted: (addr: string) => boolean): string {
  return clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trusted);
}

/** decodeURIComponent, undefined instead of a URIError for a malformed escape. */
export function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

export function sendError(
  res: ServerResponse,
  format: ClientFormat,
  status: number,
  message: string,
  code?: string,
  requestId?: string,
  retryAfter = 0,
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify(errorBody(format, status, message, code));
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    ...(requestId ? { 'x-aigw-request-id': requestId } : {}),
    ...(retryAfter > 0 ? { 'retry-after': String(retryAfter) } : {}),
  });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

const noop = (): void => undefined;

/**
 * One of the token's concurrent-request slots (concurrency_limit > 0), shared by the relay's
 * replicas: resolves to its release (idempotent), or throws the 429 when the token is at its limit.
 * HTTP requests hold it until the answer ends, Realtime sessions until they close.
 */
export async function concurrencySlot(
  limiter: Pick<RateLimiter, 'acquire'>,
  token: TokenInfo | undefined,
): Promise<() => void> {
  const limit = token?.concurrencyLimit ?? 0;
  if (!token || limit <= 0) return noop;
  const slot = await limiter.acquire(token.id, limit);
  if (slot.ok) return slot.release;
  relayMetrics().refused('token_concurrency');
  throw new RelayError(
    429,
    `令牌并发请求数超过限制（最多 ${slot.limit} 个），请稍后再试`,
    'rate_limit_exceeded',
    slot.retryAfter,
  );
}

/** The 429 of a limit's refusal (new-api's messages for its model request limits) and its reason. */
export function limitRefusal(
  v: Exclude<LimitVerdict, { ok: true }>,
  now = Date.now(),
): {
  reason: RefusalReason;
  error: RelayError;
} {
  if ('retryAfter' in v) {
    const message =
      v.what === 'model_total'
        ? `您已达到总请求数限制：${v.minutes}分钟内最多请求${v.limit}次，包括失败次数，请检查您的请求是否正确`
        : `您已达到请求数限制：${v.minutes}分钟内最多请求${v.limit}次`;
    return { reason: 'model_rate_limit', error: new RelayError(429, message, 'rate_limit_exceeded', v.retryAfter) };
  }
  const who = v.subject === 'token' ? '令牌' : '用户';
  // Per-minute buckets: the current minute's ends within this many seconds.
  const retryAfter = Math.max(1, Math.ceil((60_000 - (now % 60_000)) / 1000));
  return {
    reason: `${v.subject}_${v.what}`,
    error: new RelayError(
      429,
      `${who}${v.what === 'rpm' ? '请求' : ' token '}频率超过限制，请稍后再试`,
      'rate_limit_exceeded',
      retryAfter,
    ),
  };
}

export type Identity = { user: UserInfo; token: TokenInfo; pinned: number };

export type RouteContext = ReturnType<typeof routeContext>;

/** The caller's identity, limits and group, and the failure answer, over the route dependencies. */
export function routeContext(deps: RouteDeps) {
  const metrics = relayMetrics();

  /** The caller's token and user: at once from the caches, or a promise when one must load. */
  function identify(req: IncomingMessage, format: ClientFormat, url: string): Identity | Promise<Identity> {
    let raw: string | undefined;
    if (format === 'claude') raw = (req.headers['x-api-key'] as string | undefined) ?? req.headers.authorization;
    else if (format === 'gemini')
      raw =
        (req.headers['x-goog-api-key'] as string | undefined) ??
        new URLSearchParams(url).get('key') ??
        req.headers.authorization;
    else raw = req.headers.authorization;
    const parsed = parseKey(raw);
    if (!parsed) throw new RelayError(401, '未提供令牌', 'missing_token');
    const token = deps.identities.cachedToken(parsed.key);
    const user = token && deps.identities.cachedUser(token.userId);
    if (token && user) return admit(req, parsed.pinnedChannelId, token, user);
    return (async () => {
      const t = await deps.identities.token(parsed.key);
      if (!t) throw new RelayError(401, '无效的令牌', 'invalid_token');
      return admit(req, parsed.pinnedChannelId, t, await deps.identities.user(t.userId));
    })();
  }

  function admit(req: IncomingMessage, pinned: number, token: TokenInfo, user: UserInfo | undefined): Identity {
    checkToken(token, Math.floor(Date.now() / 1000));
    checkUser(user);
    if (pinned && user.role < ADMIN_ROLE) throw new RelayError(403, '普通用户不支持指定渠道', 'channel_pin_forbidden');
    if (!ipAllowed(token.allowIps, clientIp(req, deps.trustedProxy)))
      throw new RelayError(403, '您的 IP 不在令牌允许访问的列表中', 'ip_forbidden');
    return { user, token, pinned };
  }

  /**
   * The request's limits: the token's concurrent requests, then the per-minute and model request
   * limits. Resolves to the release of the request's concurrency slot (idempotent): call it when
   * the request ends; a refusal throws the 429 and counts relay_requests_refused_total.
   */
  async function limit(token: TokenInfo | undefined, userId: number, group?: string): Promise<() => void> {
    const own = token && {
      rpm: token.rpmLimit ?? 0,
      tpm: token.tpmLimit ?? 0,
      concurrency: token.concurrencyLimit ?? 0,
    };
    if (!deps.limiter.enabled && !(own && (own.rpm > 0 || own.tpm > 0 || own.concurrency > 0))) return noop;
    const release = await concurrencySlot(deps.limiter, token);
    const v = await deps.limiter.check(token?.id ?? 0, userId, group, own);
    if (v.ok) return release;
    release();
    const refusal = limitRefusal(v);
    metrics.refused(refusal.reason);
    throw refusal.error;
  }

  /**
   * The request's group (and an `auto` token's walk: the first auto group with a channel for
   * `model`); spread into the RelayCaller.
   */
  function group(requested: string, user: UserInfo, model = ''): ResolvedGroup {
    const index = deps.pipeline.channels();
    return resolveGroup(requested, user, groupSettings(deps.options, deps.pipeline.ratios().groupRatio), (g) =>
      index.has(g, model),
    );
  }

  function fail(
    res: ServerResponse,
    format: ClientFormat,
    err: unknown,
    requestId: string,
    mode: RelayMode,
    at: Labels,
  ) {
    // A peer that did not answer (billing's token lookup, the users service, ... down or stalled)
    // is an outage the caller can retry, not an error of ours: 503 with a message that says so.
    const code = (err as { code?: string }).code;
    const unavailable = !(err instanceof RelayError) && (code === 'UNAVAILABLE' || code === 'DEADLINE_EXCEEDED');
    const status =
      err instanceof RelayError
        ? err.status
        : (err as { status?: number }).status === 413
          ? 413
          : unavailable
            ? 503
            : 500;
    metrics.request(at.route, at.model, 'none', status, (performance.now() - at.startedAt) / 1000);
    if (err instanceof RelayError) {
      metrics.observe(mode, err.status, 0);
      return sendError(res, format, err.status, err.message, err.code, requestId, err.retryAfter);
    }
    if (status === 413) return sendError(res, format, 413, '请求体过大', 'request_too_large', requestId);
    if (unavailable) {
      deps.logger.warn({ err: (err as Error).message, requestId }, 'relay request failed: a peer did not answer');
      metrics.observe(mode, 503, 0);
      return sendError(res, format, 503, '服务繁忙，请稍后重试', 'service_unavailable', requestId);
    }
    deps.logger.error({ err, requestId }, 'relay request failed');
    metrics.observe(mode, 500, 0);
    sendError(res, format, 500, '服务器内部错误', 'internal_error', requestId);
  }

  return { deps, metrics, identify, limit, group, fail };
}
