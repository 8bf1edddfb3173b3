/**
 * `/v1/realtime` over WebSocket (OpenAI's Realtime API) to OpenAI and Azure channels. On the
 * HTTP server's `upgrade`: the same checks as an HTTP request (token, user, IP, model, group,
 * limits, price), a reservation, then the upstream socket on a channel (another channel when it
 * cannot be opened); only then is the client's socket upgraded, so a refusal is a plain HTTP
 * answer in OpenAI's error shape. Events pass both ways unchanged; each `response.done` is
 * billed from its usage (text, cached and audio tokens at their ratios) as one usage event whose
 * log carries `ws: true`, after a hold of its cost (a response the wallet cannot cover is billed
 * and ends the session with an `insufficient_quota` error event). The session's reservation is
 * returned when it ends.
 */
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { clientAddress, type Logger, type OptionsCache } from '@aigw/common';
import { WebSocketServer } from 'ws';
import type { IdentityCaches } from '../../data/identity-caches.ts';
import type { RateLimiter } from '../../data/rate-limiter.ts';
import {
  ADMIN_ROLE,
  checkModel,
  checkToken,
  checkUser,
  groupSettings,
  ipAllowed,
  parseKey,
  resolveGroup,
  type TokenInfo,
  type UserInfo,
} from '../../domain/authorize.ts';
import { priceOf } from '../../domain/pricing.ts';
import type { Json } from '../../domain/protocols/openai.ts';
import { errorBody } from '../../domain/protocols/registry.ts';
import { chooseSubprotocol, realtimeCredentials } from '../../domain/realtime.ts';
import { RelayError } from '../../domain/relay-error.ts';
import type { RelayDeps } from '../../domain/relay-request.ts';
import type { LeaseFence } from './lease-fence.ts';
import { relayMetrics } from './metrics.ts';
import { bridge } from './realtime-bridge.ts';
import { openRealtimeChannel } from './realtime-channels.ts';
import {
  giveBack,
  type RealtimeSession,
  reserveSession,
  sessionBilling,
  sessionGroupRatio,
} from './realtime-session.ts';
import { connectUpstream } from './realtime-upstream.ts';
import { newRequestId } from './relay-routes.ts';
import { concurrencySlot, limitRefusal } from './route-kit.ts';

export interface RealtimeDeps {
  pipeline: RelayDeps;
  identities: IdentityCaches;
  options: Pick<OptionsCache, 'json' | 'number' | 'bool'>;
  limiter: RateLimiter;
  logger: Logger;
  trustedProxy(addr: string): boolean;
  /** Largest client or upstream message (audio appends are base64 in JSON). */
  maxMessageBytes?: number;
  /** Time allowed to open the upstream socket. */
  connectTimeoutMs?: number;
  /** The sensitive-word check of prompts (domain/sensitive-words.ts), on the events that carry them. */
  screen?(body: Json): void;
  /** Sessions holding a reservation, ended when the lease cannot be renewed (lease-fence.ts). */
  fence?: LeaseFence;
}

export interface RealtimeServer {
  /** Takes an upgrade request for /v1/realtime; false for any other path. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Open sessions. */
  sessions(): number;
  /** Ends every session (1001 going away) and refuses new ones. */
  close(): Promise<void>;
}

/** The caller of a session: the key's token and user (checked like an HTTP request's), its address and model. */
async function realtimeIdentity(
  deps: RealtimeDeps,
  req: IncomingMessage,
  url: URL,
): Promise<{ token: TokenInfo; user: UserInfo; pinned: number; ip: string; model: string; beta: string | undefined }> {
  const { key, beta } = realtimeCredentials(req.headers);
  const parsed = parseKey(key);
  if (!parsed) throw new RelayError(401, '未提供令牌', 'missing_token');
  const token = await deps.identities.token(parsed.key);
  if (!token) throw new RelayError(401, '无效的令牌', 'invalid_token');
  checkToken(token, Math.floor(Date.now() / 1000));
  const user = await deps.identities.user(token.userId);
  checkUser(user);
  if (parsed.pinnedChannelId && user.role < ADMIN_ROLE)
    throw new RelayError(403, '普通用户不支持指定渠道', 'channel_pin_forbidden');
  const ip = clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], deps.trustedProxy);
  if (!ipAllowed(token.allowIps, ip)) throw new RelayError(403, '您的 IP 不在令牌允许访问的列表中', 'ip_forbidden');
  const model = url.searchParams.get('model') ?? url.searchParams.get('deployment') ?? '';
  if (!model) throw new RelayError(400, '缺少 model 参数', 'missing_model');
  checkModel(token, model);
  return { token, user, pinned: parsed.pinnedChannelId, ip, model, beta };
}

/** The per-minute and model request limits of a session's start (a refusal throws the 429). */
async function checkSessionLimits(deps: RealtimeDeps, token: TokenInfo, userId: number, group: string): Promise<void> {
  const own = { rpm: token.rpmLimit ?? 0, tpm: token.tpmLimit ?? 0, concurrency: 0 };
  if (!deps.limiter.enabled && own.rpm <= 0 && own.tpm <= 0) return;
  const v = await deps.limiter.check(token.id, userId, group, own);
  if (v.ok) return;
  const refusal = limitRefusal(v);
  relayMetrics().refused(refusal.reason);
  throw refusal.error;
}

/** A session after its checks: the caller in its group, the price, nothing held yet. */
async function newSession(deps: RealtimeDeps, req: IncomingMessage, url: URL) {
  const startedAt = performance.now();
  const requestId = newRequestId();
  const p = deps.pipeline;
  const id = await realtimeIdentity(deps, req, url);
  const { token, user, model } = id;
  const ratios = p.ratios();
  const { group, autoGroups } = resolveGroup(token.group, user, groupSettings(deps.options, ratios.groupRatio), (g) =>
    p.channels().has(g, model),
  );
  await checkSessionLimits(deps, token, user.id, group);
  const s: RealtimeSession = {
    requestId,
    caller: {
      requestId,
      user,
      token,
      group,
      ...(autoGroups ? { autoGroups } : {}),
      crossGroupRetry: token.crossGroupRetry === true,
      pinnedChannelId: id.pinned,
      ip: id.ip,
      startedAt,
    },
    model,
    ratios,
    price: priceOf(ratios, model),
    groupRatio: 0,
    quotaPerUnit: p.settings.quotaPerUnit(),
    tried: [],
    channelId: 0,
    upstreamModel: model,
    skip: undefined,
    reserved: false,
    charged: 0,
    unwatch: undefined,
    releaseSlot: () => undefined,
  };
  s.groupRatio = sessionGroupRatio(s, group);
  return { s, beta: id.beta };
}

export function realtimeServer(deps: RealtimeDeps): RealtimeServer {
  const maxMessageBytes = deps.maxMessageBytes ?? 16 * 1024 * 1024;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: maxMessageBytes,
    perMessageDeflate: false,
    handleProtocols: (offered) => chooseSubprotocol(offered),
  });
  const open = new Set<() => void>();
  let closing = false;
  const upstreamOptions = { connectTimeoutMs: deps.connectTimeoutMs ?? 15_000, maxMessageBytes };

  function refuse(socket: Duplex, status: number, message: string, code: string): void {
    if (socket.destroyed) return;
    const body = JSON.stringify(errorBody('openai', status, message, code));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }

  /** The checks, the reservation, the concurrency slot and the upstream; then the client's upgrade. */
  async function admit(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    const p = deps.pipeline;
    const { s, beta } = await newSession(deps, req, url);
    await reserveSession(p, s, () => deps.fence?.watch(s.requestId, () => socket.destroy(), true));
    let upstream: Awaited<ReturnType<typeof connectUpstream>>;
    try {
      // The session holds one of the token's concurrent-request slots until it ends.
      s.releaseSlot = await concurrencySlot(deps.limiter, s.caller.token);
      upstream = await openRealtimeChannel(
        p,
        s,
        (ch, upstreamModel) => connectUpstream(ch, upstreamModel, beta, upstreamOptions),
        () => socket.destroyed,
      );
    } catch (err) {
      giveBack(p, s);
      throw err;
    }
    if (socket.destroyed || closing) {
      upstream.ws.close(1001);
      giveBack(p, s);
      return;
    }
    const billing = sessionBilling(p, s);
    wss.handleUpgrade(req, socket, head, (client) => {
      bridge(client, upstream, billing, { open, screen: deps.screen, logger: deps.logger });
    });
  }

  return {
    handleUpgrade(req, socket, head) {
      const url = new URL(req.url ?? '/', 'http://relay');
      if (url.pathname !== '/v1/realtime') return false;
      if (closing) {
        refuse(socket, 503, '服务正在关闭', 'shutting_down');
        return true;
      }
      socket.on('error', () => socket.destroy());
      admit(req, socket, head, url).catch((err) => {
        if (err instanceof RelayError) return refuse(socket, err.status, err.message, err.code);
        deps.logger.error({ err }, 'realtime session failed');
        refuse(socket, 500, '服务器内部错误', 'internal_error');
      });
      return true;
    },
    sessions: () => open.size,
    async close() {
      closing = true;
      for (const stop of [...open]) stop();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
