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
import { clientAddress, groupRatioFor, type Logger, type OptionsCache } from '@aigw/common';
import { LogType } from '@aigw/proto/common/v1/common';
import WebSocket, { WebSocketServer } from 'ws';
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
  quotaRefusalCode,
  resolveGroup,
} from '../../domain/authorize.ts';
import type { RoutedChannel } from '../../domain/channel-index.ts';
import { shouldDisable, UpstreamFailure, upstreamMessage } from '../../domain/exchange/failure.ts';
import { billingSourceDetails, moveToNextGroup } from '../../domain/group-walk.ts';
import { preConsumeAmount, priceAt, priceOf, settleQuota, tierDetails } from '../../domain/pricing.ts';
import type { Json } from '../../domain/protocols/openai.ts';
import { errorBody } from '../../domain/protocols/registry.ts';
import {
  chooseSubprotocol,
  REALTIME_TYPES,
  realtimeCredentials,
  realtimeError,
  realtimeTarget,
  realtimeUsage,
} from '../../domain/realtime.ts';
import { RelayError } from '../../domain/relay-error.ts';
import type { RelayCaller, RelayDeps, SkipTicket } from '../../domain/relay-request.ts';
import type { LeaseFence } from './lease-fence.ts';
import { relayMetrics } from './metrics.ts';
import { parseInput } from './parse-input.ts';
import { newRequestId } from './relay-routes.ts';
import { realtimePromptEvent } from './request-schemas.ts';
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

/** Client events whose text is a prompt: the item, the session's instructions, a response's overrides. */
const PROMPT_EVENTS = ['"conversation.item.create"', '"session.update"', '"response.create"'];

export interface RealtimeServer {
  /** Takes an upgrade request for /v1/realtime; false for any other path. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Open sessions. */
  sessions(): number;
  /** Ends every session (1001 going away) and refuses new ones. */
  close(): Promise<void>;
}

/** An open upstream socket and the events it sent before the client's socket was ready. */
interface Upstream {
  ws: WebSocket;
  early: { data: Buffer; binary: boolean }[];
  /** Stops keeping events aside (the bridge takes over). */
  release(): void;
}

/** Close codes a peer may send on (1005, 1006 and 1015 are reserved for reports). */
const sendable = (code: number) =>
  (code >= 1000 && code <= 1014 && ![1004, 1005, 1006].includes(code)) || (code >= 3000 && code < 5000);

export function realtimeServer(deps: RealtimeDeps): RealtimeServer {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: deps.maxMessageBytes ?? 16 * 1024 * 1024,
    perMessageDeflate: false,
    handleProtocols: (offered) => chooseSubprotocol(offered),
  });
  const open = new Set<() => void>();
  let closing = false;

  function refuse(socket: Duplex, status: number, message: string, code: string): void {
    if (socket.destroyed) return;
    const body = JSON.stringify(errorBody('openai', status, message, code));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }

  /** Opens the upstream socket; an UpstreamFailure when it cannot (status 0 for no connection). */
  function connect(ch: RoutedChannel, model: string, beta: string | undefined): Promise<Upstream> {
    const target = realtimeTarget(ch.target, model, beta);
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(target.url, {
        headers: target.headers,
        handshakeTimeout: deps.connectTimeoutMs ?? 15_000,
        maxPayload: deps.maxMessageBytes ?? 16 * 1024 * 1024,
        perMessageDeflate: false,
      });
      // The upstream speaks first (session.created) while the client's upgrade is still under way.
      const early: { data: Buffer; binary: boolean }[] = [];
      const keep = (data: Buffer, binary: boolean) => early.push({ data, binary });
      ws.on('message', keep);
      ws.once('open', () => resolve({ ws, early, release: () => ws.off('message', keep) }));
      ws.once('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const status = res.statusCode ?? 502;
          reject(new UpstreamFailure(status, upstreamMessage(Buffer.concat(chunks).toString('utf8'), status)));
        });
        res.on('error', () => reject(new UpstreamFailure(res.statusCode ?? 0, 'upstream closed the handshake')));
      });
      ws.once('error', (err) => reject(new UpstreamFailure(0, `上游连接失败: ${err.message}`, 'connection')));
    });
  }

  async function admit(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    const startedAt = performance.now();
    const requestId = newRequestId();
    const p = deps.pipeline;
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
    const ratios = p.ratios();
    const { group, autoGroups } = resolveGroup(token.group, user, groupSettings(deps.options, ratios.groupRatio), (g) =>
      p.channels().has(g, model),
    );
    const own = { rpm: token.rpmLimit ?? 0, tpm: token.tpmLimit ?? 0, concurrency: 0 };
    if (deps.limiter.enabled || own.rpm > 0 || own.tpm > 0) {
      const v = await deps.limiter.check(token.id, user.id, group, own);
      if (!v.ok) {
        const refusal = limitRefusal(v);
        relayMetrics().refused(refusal.reason);
        throw refusal.error;
      }
    }
    const price = priceOf(ratios, model);
    // What the user's group pays in the group used (it may move on: cross-group retry).
    const ratioIn = (g: string) => groupRatioFor(user.group, g, ratios.groupRatio, ratios.groupGroupRatio);
    let groupRatio = ratioIn(group);
    const quotaPerUnit = p.settings.quotaPerUnit();
    const caller: RelayCaller = {
      requestId,
      user,
      token,
      group,
      ...(autoGroups ? { autoGroups } : {}),
      crossGroupRetry: token.crossGroupRetry === true,
      pinnedChannelId: parsed.pinnedChannelId,
      ip,
      startedAt,
    };

    // A session is as dear as its responses: reserve what one response of PreConsumedQuota
    // tokens costs at the dearest token kind (returned when the session ends).
    const preConsumed = p.settings.preConsumedQuota();
    const reserve = preConsumeAmount(price, groupRatio, quotaPerUnit, preConsumed, preConsumed, 0);
    let skip: SkipTicket | undefined;
    let reserved = false;
    let unwatch: (() => void) | undefined;
    if (p.balances.ample(user.id, token, reserve)) skip = p.balances.hold(user.id, reserve, token);
    else {
      try {
        // The model and group let billing choose a subscription that pays them, as on HTTP.
        const sentAt = Date.now();
        const res = await p.wallet.preConsume({
          requestId,
          userId: user.id,
          tokenId: token.id,
          amount: reserve,
          model,
          group: caller.group,
        });
        p.balances.observe(user.id, res.userQuota, sentAt, res.subscriptionActive);
        reserved = true;
        // Ended like a client that left when the lease cannot be renewed (lease-fence.ts).
        unwatch = deps.fence?.watch(requestId, () => socket.destroy(), true);
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === 'FAILED_PRECONDITION') {
          const message = (err as Error).message || '用户额度不足';
          throw new RelayError(403, message, quotaRefusalCode(message));
        }
        void p.wallet.refund(requestId, user.id);
        throw new RelayError(500, '预扣费失败，请稍后重试', 'pre_consume_failed');
      }
    }
    let charged = 0;
    let releaseSlot: () => void = () => undefined;
    const giveBack = () => {
      if (skip) p.balances.release(skip, charged);
      if (reserved) void p.wallet.refund(requestId, user.id);
      unwatch?.();
      releaseSlot();
      skip = undefined;
      reserved = false;
    };
    // The session holds one of the token's concurrent-request slots until it ends.
    try {
      releaseSlot = await concurrencySlot(deps.limiter, token);
    } catch (err) {
      giveBack();
      throw err;
    }

    // A channel whose upstream speaks the Realtime API; another one when it cannot be reached,
    // and, for an auto token with cross_group_retry, the next auto group when none in this one
    // can (the HTTP pipeline's walk: group-walk.ts).
    const index = p.channels();
    const tried: number[] = [];
    let upstream: Upstream | undefined;
    let served: RoutedChannel | undefined;
    let upstreamModel = model;
    let last: UpstreamFailure | undefined;
    const retryTimes = parsed.pinnedChannelId ? 0 : p.settings.retryTimes();
    try {
      // Channels of other types are skipped without using up an attempt.
      for (let attempt = 0; !upstream; ) {
        const ch = parsed.pinnedChannelId
          ? tried.length === 0
            ? index.byId(parsed.pinnedChannelId)
            : undefined
          : attempt <= retryTimes
            ? index.select(caller.group, model, attempt, tried)
            : undefined;
        if (!ch) {
          const next =
            !parsed.pinnedChannelId &&
            !socket.destroyed &&
            moveToNextGroup(caller, (g) => index.select(g, model, 0, tried) !== undefined);
          if (!next) break;
          groupRatio = ratioIn(caller.group);
          attempt = 0;
          continue;
        }
        tried.push(ch.id);
        if (!REALTIME_TYPES.has(ch.type) || ch.status !== 1) {
          last = new UpstreamFailure(400, `渠道类型 ${ch.type} 不支持 Realtime API`);
          continue;
        }
        attempt++;
        upstreamModel = ch.modelMapping?.[model] ?? model;
        const t0 = performance.now();
        try {
          upstream = await connect(ch, upstreamModel, beta);
          served = ch;
        } catch (err) {
          if (!(err instanceof UpstreamFailure)) throw err;
          last = err;
          p.health({
            requestId,
            channelId: ch.id,
            statusCode: err.status,
            message: err.message,
            shouldDisable: shouldDisable(err),
            // The channel as a whole (realtime sessions do not pick among a multi-key channel's keys).
            keyHash: '',
            model: upstreamModel,
            responseTimeMs: Math.round(performance.now() - t0),
          });
        }
      }
      if (!upstream || !served) {
        if (last) throw new RelayError(last.status >= 400 ? last.status : 502, last.message, 'upstream_error');
        throw new RelayError(503, `当前分组 ${caller.group} 下对于模型 ${model} 无可用渠道`, 'model_not_found');
      }
    } catch (err) {
      giveBack();
      throw err;
    }
    if (socket.destroyed || closing) {
      upstream.ws.close(1001);
      giveBack();
      return;
    }
    const channel = served;
    const up = upstream;
    /**
     * Each response is paid out of what the user has beyond the session's reservation: a hold of
     * its cost under the id its usage event settles (so the settle changes nothing), or, for an
     * ample balance, the relay's skip bound. A response the wallet cannot cover was already
     * delivered: it is billed all the same and ends the session, so a session spends at most its
     * reservation plus one response beyond the balance (the overspend bound of an HTTP request).
     */
    const holdResponse = async (rid: string, quota: number): Promise<{ refusal?: RelayError; paidBy?: string }> => {
      if (skip && p.balances.ample(user.id, token, quota)) return {};
      try {
        // With the model and group, billing may charge the response to a subscription (as on HTTP).
        const sentAt = Date.now();
        const res = await p.wallet.preConsume({
          requestId: rid,
          userId: user.id,
          tokenId: token.id,
          amount: quota,
          model,
          group: caller.group,
        });
        p.balances.observe(user.id, res.userQuota, sentAt, res.subscriptionActive);
        return { paidBy: res.subscriptionId ?? '' };
      } catch (err) {
        if ((err as { code?: string }).code !== 'FAILED_PRECONDITION')
          return { refusal: new RelayError(500, '预扣费失败，请稍后重试', 'pre_consume_failed') };
        const message = (err as Error).message || '用户额度不足';
        return { refusal: new RelayError(403, message, quotaRefusalCode(message)) };
      }
    };
    // Responses are billed one after the other (hold, then usage event); the session's
    // reservation is given back after the last one.
    let billing: Promise<unknown> = Promise.resolve();
    wss.handleUpgrade(req, socket, head, (client) => {
      bridge(client, up, {
        bill: (usage, useTimeMs, firstTokenMs, n) => {
          const quota = settleQuota(price, groupRatio, quotaPerUnit, usage);
          const turn = billing.then(async () => {
            const { refusal, paidBy } = await holdResponse(`${requestId}-${n}`, quota);
            emit(usage, quota, useTimeMs, firstTokenMs, n, paidBy ?? '');
            return refusal;
          });
          billing = turn.catch(() => undefined);
          return turn;
        },
        done: () => void billing.then(giveBack),
      });
    });
    function emit(
      usage: NonNullable<ReturnType<typeof realtimeUsage>>,
      quota: number,
      useTimeMs: number,
      firstTokenMs: number,
      n: number,
      paidBy: string,
    ): void {
      charged += quota;
      p.balances.spent(token, quota);
      p.countTokens?.(caller, usage.promptTokens + usage.completionTokens);
      // A long-context tier prices the response by its prompt (settleQuota): its ratios on the row.
      const settled = priceAt(price, usage.promptTokens);
      const other: Record<string, unknown> = { ws: true };
      billingSourceDetails(other, paidBy);
      tierDetails(other, settled);
      p.usage({
        requestId: `${requestId}-${n}`,
        caller,
        model,
        upstreamModel,
        channelId: channel.id,
        channelsTried: tried,
        usage,
        quota,
        useTimeMs,
        firstTokenMs,
        isStream: true,
        type: LogType.CONSUME,
        statusCode: 200,
        errorMessage: '',
        price: settled,
        groupRatio,
        other,
      });
    }
  }

  function bridge(
    client: WebSocket,
    up: Upstream,
    session: {
      bill(
        usage: NonNullable<ReturnType<typeof realtimeUsage>>,
        useTimeMs: number,
        firstTokenMs: number,
        n: number,
      ): Promise<RelayError | undefined>;
      done(): void;
    },
  ): void {
    const upstream = up.ws;
    let responses = 0;
    let responseStart = performance.now();
    let firstToken = 0;
    let ended = false;
    const end = (code: number, reason: string) => {
      if (ended) return;
      ended = true;
      open.delete(stop);
      const c = sendable(code) ? code : 1000;
      const r = Buffer.byteLength(reason) <= 123 ? reason : '';
      for (const ws of [client, upstream]) {
        if (ws.readyState === WebSocket.OPEN) ws.close(c, r);
        else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      }
      session.done();
    };
    const stop = () => end(1001, 'relay shutting down');
    open.add(stop);

    client.on('message', (data, isBinary) => {
      if (upstream.readyState !== WebSocket.OPEN) return;
      if (deps.screen && !isBinary && refused(data as Buffer)) return;
      upstream.send(data as Buffer, { binary: isBinary });
    });
    /**
     * A prompt event holding a sensitive word, or whose item, session or response is not an
     * object (its schema: request-schemas.ts): answered with an error event, not sent upstream.
     * Text that is not JSON goes on; the upstream answers it.
     */
    const refused = (buf: Buffer): boolean => {
      if (!PROMPT_EVENTS.some((t) => buf.includes(t))) return false;
      let raw: unknown;
      try {
        raw = JSON.parse(buf.toString('utf8'));
      } catch {
        return false;
      }
      const eventId = (raw as { event_id?: unknown } | null)?.event_id;
      try {
        const ev = parseInput(realtimePromptEvent, raw);
        const carrier = ev.item ?? ev.session ?? ev.response;
        if (carrier) deps.screen?.(carrier as Json);
      } catch (err) {
        if (!(err instanceof RelayError)) throw err;
        const e = realtimeError(err.message, err.code);
        if (client.readyState === WebSocket.OPEN)
          client.send(
            JSON.stringify({ ...e, error: { ...e.error, event_id: typeof eventId === 'string' ? eventId : null } }),
          );
        return true;
      }
      return false;
    };
    const fromUpstream = (data: Buffer, isBinary: boolean) => {
      if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
      if (isBinary) return;
      const buf = data;
      // Only a few event types matter here; audio deltas (large) are not parsed.
      if (buf.includes('"response.created"')) {
        responseStart = performance.now();
        firstToken = 0;
      } else if (!firstToken && buf.includes('.delta"')) firstToken = performance.now();
      else if (buf.includes('"response.done"')) {
        let event: unknown;
        try {
          event = JSON.parse(buf.toString('utf8'));
        } catch {
          return;
        }
        const usage = realtimeUsage(event);
        if (!usage) return;
        const now = performance.now();
        responses++;
        session
          .bill(
            usage,
            Math.round(now - responseStart),
            firstToken ? Math.round(firstToken - responseStart) : 0,
            responses,
          )
          .then((refusal) => {
            if (!refusal || ended) return;
            if (client.readyState === WebSocket.OPEN)
              client.send(JSON.stringify(realtimeError(refusal.message, refusal.code, 'insufficient_quota')));
            end(1008, refusal.code);
          })
          .catch((err: unknown) => deps.logger.error({ err }, 'realtime billing failed'));
      }
    };
    up.release();
    for (const e of up.early.splice(0)) fromUpstream(e.data, e.binary);
    upstream.on('message', (data, isBinary) => fromUpstream(data as Buffer, isBinary));
    if (upstream.readyState !== WebSocket.OPEN) end(1011, 'upstream closed');
    client.on('close', (code, reason) => end(code, reason.toString('utf8')));
    upstream.on('close', (code, reason) => end(code, reason.toString('utf8')));
    client.on('error', (err) => {
      deps.logger.debug({ err }, 'realtime client socket error');
      end(1011, '');
    });
    upstream.on('error', (err) => {
      deps.logger.warn({ err }, 'realtime upstream socket error');
      if (client.readyState === WebSocket.OPEN)
        client.send(JSON.stringify(realtimeError('上游连接中断', 'upstream_error', 'server_error')));
      end(1011, 'upstream error');
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
