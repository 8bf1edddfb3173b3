/**
 * The relay's public routes on node:http (no framework on the hot path): authentication,
 * request parsing and the error shapes of each API; the pipeline itself is domain/relay-request.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { clientAddress, type Logger, type OptionsCache } from '@aigw/common';
import { nameActiveSpan, tracingActive } from '@aigw/common/telemetry';
import type { IdentityCaches } from '../../data/identity-caches.ts';
import type { RateLimiter } from '../../data/rate-limiter.ts';
import type { RelayMode } from '../../domain/adaptors/index.ts';
import {
  ADMIN_ROLE,
  checkModel,
  checkToken,
  checkUser,
  ipAllowed,
  parseKey,
  resolveGroup,
  type TokenInfo,
  type UserInfo,
} from '../../domain/authorize.ts';
import type { ChannelIndex } from '../../domain/channel-index.ts';
import { countTokens } from '../../domain/count-tokens.ts';
import type { ClientRequest } from '../../domain/exchange/build-request.ts';
import type { ClientFormat } from '../../domain/exchange/ports.ts';
import type { Json } from '../../domain/protocols/openai.ts';
import { clientOf, errorBody } from '../../domain/protocols/registry.ts';
import { RelayError } from '../../domain/relay-error.ts';
import { type RelayCaller, type RelayDeps, relayRequest } from '../../domain/relay-request.ts';
import { tracedPipeline } from './gen-ai-trace.ts';
import { providerOf, relayMetrics } from './metrics.ts';
import { nodeSink, readBody } from './node-sink.ts';
import type { SessionUser } from './session.ts';

/** The labels of a request's relay_request_duration_seconds, filled in as it is understood. */
interface Labels {
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
  /** Refuses a prompt holding a sensitive word (domain/sensitive-words.ts); before any billing. */
  screen?(body: Json | FormData): void;
}

const MODES: Record<string, RelayMode> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completions',
  '/v1/embeddings': 'embeddings',
  '/v1/images/generations': 'images',
  '/v1/images/edits': 'image_edits',
  '/v1/images/variations': 'image_variations',
  '/v1/audio/speech': 'speech',
  '/v1/audio/transcriptions': 'transcriptions',
  '/v1/audio/translations': 'translations',
  '/v1/moderations': 'moderations',
  '/v1/rerank': 'rerank',
};

const ID_PREFIX = randomBytes(4).toString('hex');
let seq = 0;
/** Unique request ids (the idempotency key of pre-consume, settle and refund, and the usage event id). */
export function newRequestId(): string {
  seq = (seq + 1) % 0x7fffffff;
  return `${ID_PREFIX}-${Date.now().toString(36)}-${seq.toString(36)}`;
}

function clientIp(req: IncomingMessage, trusted: (addr: string) => boolean): string {
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

const utf8 = new TextDecoder('utf-8', { fatal: true });

function sendError(
  res: ServerResponse,
  format: ClientFormat,
  status: number,
  message: string,
  code?: string,
  requestId?: string,
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
  });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/** The body as a JSON object: valid UTF-8, valid JSON, an object (not an array or a scalar). */
function jsonObject(raw: Buffer): Json {
  let body: unknown;
  try {
    body = JSON.parse(utf8.decode(raw));
  } catch {
    throw new RelayError(400, '请求体不是合法的 JSON', 'invalid_json');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new RelayError(400, '请求体必须是 JSON 对象', 'invalid_json');
  return body as Json;
}

const FIELD_TYPES: Record<string, 'string' | 'boolean' | 'number' | 'array' | 'object'> = {
  model: 'string',
  stream: 'boolean',
  max_tokens: 'number',
  max_completion_tokens: 'number',
  n: 'number',
  stream_options: 'object',
  messages: 'array',
};

/**
 * The fields the relay itself reads must have their declared JSON types (an object where a
 * string belongs is refused here with a 400, not met later as a TypeError and a 500). Other fields
 * go upstream unchanged; the provider judges them.
 */
function checkFields(body: Json): void {
  for (const [field, want] of Object.entries(FIELD_TYPES)) {
    const v = body[field];
    if (v === undefined || v === null) continue;
    const got = Array.isArray(v) ? 'array' : typeof v;
    if (got !== want) throw new RelayError(400, `字段 ${field} 的类型无效，应为 ${want}`, 'invalid_field');
  }
}

/** The largest count a request may give (a 32-bit int: every provider's own limit is far below). */
const MAX_COUNT = 2_147_483_647;

/**
 * Counts the relay prices by (output tokens, images) must be whole numbers in range: a huge or
 * fractional max_tokens (1e308) made the reservation Infinity and billing failed it with a 500.
 */
function checkCounts(body: Json, gemini: boolean): void {
  const counts: [string, unknown][] = gemini
    ? Object.entries((body.generationConfig ?? {}) as Json).filter(
        ([k]) => k === 'maxOutputTokens' || k === 'candidateCount',
      )
    : ['max_tokens', 'max_completion_tokens', 'max_output_tokens', 'n'].map((k) => [k, body[k]]);
  for (const [field, v] of counts) {
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_COUNT)
      throw new RelayError(400, `字段 ${field} 的值无效，应为 0 到 ${MAX_COUNT} 之间的整数`, 'invalid_field');
  }
}

/** Returns a handler for the relay's routes, or undefined when the path is not one of them. */
export function relayRoutes(deps: RouteDeps) {
  const metrics = relayMetrics();
  // Spans only where this process exports them (startTelemetry ran first, in main.ts).
  const tracing = tracingActive();

  type Identity = { user: UserInfo; token: TokenInfo; pinned: number };

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

  async function limit(tokenId: number, userId: number): Promise<void> {
    if (!deps.limiter.enabled) return;
    const v = await deps.limiter.check(tokenId, userId);
    if (!v.ok) {
      const who = v.subject === 'token' ? '令牌' : '用户';
      throw new RelayError(
        429,
        `${who}${v.what === 'rpm' ? '请求' : ' token '}频率超过限制，请稍后再试`,
        'rate_limit_exceeded',
      );
    }
  }

  function group(requested: string, user: UserInfo): string {
    return resolveGroup(
      requested,
      user,
      deps.options.json<Record<string, unknown>>('UserUsableGroups'),
      deps.pipeline.ratios().groupRatio,
    );
  }

  async function parse(
    req: IncomingMessage,
    mode: RelayMode,
    format: ClientFormat,
    gemini?: { model: string; stream: boolean },
  ): Promise<ClientRequest> {
    const ct = String(req.headers['content-type'] ?? '');
    // Per-route limits: uploads may be large, a JSON request (a prompt) much less so.
    const raw = await readBody(req, ct.includes('multipart/form-data') ? deps.maxBodyBytes : deps.maxJsonBytes);
    if (ct.includes('multipart/form-data')) {
      let form: FormData;
      try {
        form = await new Response(raw, { headers: { 'content-type': ct } }).formData();
      } catch {
        throw new RelayError(400, '请求体不是合法的 multipart/form-data', 'invalid_form');
      }
      const model = form.get('model') ?? '';
      if (typeof model !== 'string') throw new RelayError(400, '字段 model 必须是字符串', 'invalid_field');
      return { format, mode, model, stream: false, body: form, includeUsage: false };
    }
    const body = jsonObject(raw);
    if (!gemini) checkFields(body);
    checkCounts(body, gemini !== undefined);
    if (gemini) return { format, mode, model: gemini.model, stream: gemini.stream, body, raw, includeUsage: false };
    const stream = body.stream === true && (mode === 'chat' || mode === 'completions');
    const includeUsage =
      stream && (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    const model = typeof body.model === 'string' ? body.model : '';
    const forward = forwarded(req, format);
    return forward
      ? { format, mode, model, stream, body, raw, includeUsage, forward }
      : { format, mode, model, stream, body, raw, includeUsage };
  }

  /** The client headers its protocol passes on to an upstream speaking it (Claude's betas). */
  function forwarded(req: IncomingMessage, format: ClientFormat): Record<string, string> | undefined {
    const names = clientOf(format).forwardHeaders;
    if (!names) return undefined;
    let out: Record<string, string> | undefined;
    for (const name of names) {
      const v = req.headers[name];
      if (v === undefined) continue;
      out ??= {};
      out[name] = Array.isArray(v) ? v.join(',') : v;
    }
    return out;
  }

  /**
   * Token counts without running the request, free: Claude's POST /v1/messages/count_tokens and
   * Gemini's POST /{v1beta,v1}/models/{model}:countTokens. Counted by a channel of the same
   * protocol, estimated on the others.
   */
  async function handleCount(
    req: IncomingMessage,
    res: ServerResponse,
    url: string,
    format: 'claude' | 'gemini',
    route: string,
    gemini?: { model: string },
  ) {
    const requestId = newRequestId();
    const began = performance.now();
    try {
      const who = identify(req, format, url);
      const parsing = parse(req, 'chat', format, gemini ? { model: gemini.model, stream: false } : undefined);
      const [id, creq] = who instanceof Promise ? await Promise.all([who, parsing]) : [who, await parsing];
      if (!creq.model) throw new RelayError(400, 'model: Field required', 'invalid_request');
      const body = creq.body as Json;
      if (format === 'claude' && !Array.isArray(body.messages))
        throw new RelayError(400, 'messages: Field required', 'invalid_request');
      // Gemini counts `contents`, or the contents of a whole `generateContentRequest`.
      if (
        format === 'gemini' &&
        !Array.isArray(body.contents) &&
        !Array.isArray((body.generateContentRequest as Json | undefined)?.contents)
      )
        throw new RelayError(400, 'contents is required', 'invalid_request');
      checkModel(id.token, creq.model);
      const caller: RelayCaller = {
        requestId,
        user: id.user,
        token: id.token,
        group: group(id.token.group, id.user),
        pinnedChannelId: id.pinned,
        ip: clientIp(req, deps.trustedProxy),
        startedAt: performance.now(),
      };
      const answer = await countTokens(deps.pipeline, caller, creq);
      const text = Buffer.isBuffer(answer.body) ? answer.body : Buffer.from(JSON.stringify(answer.body));
      res.writeHead(answer.status, {
        'content-type': 'application/json',
        'content-length': String(text.length),
        'x-aigw-request-id': requestId,
        ...(answer.estimated ? { 'x-aigw-estimated': 'true' } : {}),
      });
      res.end(text);
    } catch (err) {
      fail(res, format, err, requestId, 'chat', { route, model: 'other', startedAt: began });
    }
  }

  /** The model label of a request: a model configured for the caller's group, else "other" (bounded). */
  function modelLabel(index: ChannelIndex, group: string, model: string): string {
    return model && index.has(group, model) ? model : 'other';
  }

  /** Runs an authenticated request through the pipeline. */
  async function run(res: ServerResponse, caller: RelayCaller, creq: ClientRequest, at: Labels): Promise<void> {
    const sink = nodeSink(res, { 'x-aigw-request-id': caller.requestId });
    const pipeline = tracing ? tracedPipeline(deps.pipeline, creq) : deps.pipeline;
    const outcome = await relayRequest(pipeline, caller, creq, sink);
    metrics.observe(creq.mode, outcome.status, outcome.quota);
    const type = outcome.channelId ? deps.pipeline.channels().byId(outcome.channelId)?.type : undefined;
    metrics.request(
      at.route,
      at.model,
      providerOf(type),
      outcome.status,
      (performance.now() - caller.startedAt) / 1000,
    );
  }

  async function handleApi(
    req: IncomingMessage,
    res: ServerResponse,
    url: string,
    format: ClientFormat,
    mode: RelayMode,
    route: string,
    gemini?: { model: string; stream: boolean },
  ) {
    const startedAt = performance.now();
    const requestId = newRequestId();
    const at: Labels = { route, model: 'other', startedAt };
    if (tracing) nameActiveSpan(`POST ${route}`, { 'http.route': route });
    try {
      const who = identify(req, format, url);
      const [id, creq] =
        who instanceof Promise
          ? await Promise.all([who, parse(req, mode, format, gemini)])
          : [who, await parse(req, mode, format, gemini)];
      checkModel(id.token, creq.model);
      deps.screen?.(creq.body);
      const caller: RelayCaller = {
        requestId,
        user: id.user,
        token: id.token,
        group: group(id.token.group, id.user),
        pinnedChannelId: id.pinned,
        ip: clientIp(req, deps.trustedProxy),
        startedAt,
      };
      at.model = modelLabel(deps.pipeline.channels(), caller.group, creq.model);
      if (deps.limiter.enabled) await limit(id.token.id, id.user.id);
      // A Responses request continuing a stored one goes first to the channel that holds it.
      const previous = format === 'responses' ? (creq.body as Json).previous_response_id : undefined;
      if (typeof previous === 'string' && deps.pipeline.state) {
        const owner = await deps.pipeline.state.find(previous);
        if (owner && owner.userId === id.user.id) caller.preferredChannelId = owner.channelId;
      }
      await run(res, caller, creq, at);
    } catch (err) {
      fail(res, format, err, requestId, mode, at);
    }
  }

  async function handlePlayground(req: IncomingMessage, res: ServerResponse) {
    const startedAt = performance.now();
    const requestId = newRequestId();
    const at: Labels = { route: '/pg/chat/completions', model: 'other', startedAt };
    if (tracing) nameActiveSpan(`POST ${at.route}`, { 'http.route': at.route });
    try {
      const s = await deps.session(req);
      if (!s) throw new RelayError(401, '未登录或登录已过期，请重新登录！', 'unauthenticated');
      const user = await deps.identities.user(s.id);
      checkUser(user);
      const creq = await parse(req, 'chat', 'openai');
      checkModel(undefined, creq.model);
      deps.screen?.(creq.body);
      const body = creq.body as Json;
      const caller: RelayCaller = {
        requestId,
        user,
        group: group(typeof body.group === 'string' ? body.group : '', user),
        pinnedChannelId: 0,
        ip: clientIp(req, deps.trustedProxy),
        startedAt,
      };
      if (body.group !== undefined) {
        const { group: _g, ...rest } = body;
        creq.body = rest;
        creq.raw = undefined;
      }
      at.model = modelLabel(deps.pipeline.channels(), caller.group, creq.model);
      if (deps.limiter.enabled) await limit(0, user.id);
      await run(res, caller, creq, at);
    } catch (err) {
      fail(res, 'openai', err, requestId, 'chat', at);
    }
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
      return sendError(res, format, err.status, err.message, err.code, requestId);
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

  /**
   * GET /v1/models and /v1/models/{model}: the models the key may use. In OpenAI's shape, or in
   * Anthropic's when the caller speaks it (an `anthropic-version` header, or only `x-api-key`), as
   * the Anthropic SDK's models.list() and models.retrieve() read it.
   */
  async function handleModels(req: IncomingMessage, res: ServerResponse, url: string, one?: string) {
    const claude =
      req.headers['anthropic-version'] !== undefined ||
      (req.headers['x-api-key'] !== undefined && req.headers.authorization === undefined);
    const format: ClientFormat = claude ? 'claude' : 'openai';
    const at: Labels = {
      route: one === undefined ? '/v1/models' : '/v1/models/{model}',
      model: 'none',
      startedAt: performance.now(),
    };
    try {
      const id = await identify(req, format, url);
      const g = group(id.token.group, id.user);
      let models = deps.pipeline.channels().models(g);
      if (id.token.modelLimits) models = models.filter((m) => id.token.modelLimits?.has(m));
      const created = 1_626_777_600;
      const view = (m: string) =>
        claude
          ? { type: 'model', id: m, display_name: m, created_at: new Date(created * 1000).toISOString() }
          : { id: m, object: 'model', created, owned_by: 'aigw' };
      const done = (status: number) =>
        metrics.request(at.route, at.model, 'none', status, (performance.now() - at.startedAt) / 1000);
      if (one !== undefined) {
        if (!models.includes(one)) {
          done(404);
          return sendError(res, format, 404, `The model '${one}' does not exist`, 'model_not_found');
        }
        done(200);
        return sendJson(res, 200, view(one));
      }
      done(200);
      const data = models.map(view);
      if (claude) {
        sendJson(res, 200, { data, has_more: false, first_id: models[0] ?? null, last_id: models.at(-1) ?? null });
      } else sendJson(res, 200, { object: 'list', data });
    } catch (err) {
      fail(res, format, err, newRequestId(), 'chat', at);
    }
  }

  /**
   * Gemini's model list (`GET /v1beta/models`, pages by `pageSize` and `pageToken`) and one model
   * (`GET /v1beta/models/{model}`): the models the key may use, in Gemini's shape, as the google
   * genai SDK's models.list() and models.get() read them.
   */
  async function handleGeminiModels(
    req: IncomingMessage,
    res: ServerResponse,
    url: string,
    version: string,
    one?: string,
  ) {
    const at: Labels = {
      route: one === undefined ? `/${version}/models` : `/${version}/models/{model}`,
      model: 'none',
      startedAt: performance.now(),
    };
    try {
      const id = await identify(req, 'gemini', url);
      const g = group(id.token.group, id.user);
      let models = deps.pipeline.channels().models(g);
      if (id.token.modelLimits) models = models.filter((m) => id.token.modelLimits?.has(m));
      const view = (m: string) => ({
        name: `models/${m}`,
        baseModelId: m,
        version: '001',
        displayName: m,
        supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
      });
      const done = (status: number) =>
        metrics.request(at.route, at.model, 'none', status, (performance.now() - at.startedAt) / 1000);
      if (one !== undefined) {
        const name = one.startsWith('models/') ? one.slice('models/'.length) : one;
        if (!models.includes(name)) {
          done(404);
          return sendError(res, 'gemini', 404, `models/${name} is not found for API version ${version}`, 'not_found');
        }
        done(200);
        return sendJson(res, 200, view(name));
      }
      const q = new URLSearchParams(url);
      const size = Math.min(1000, Math.max(1, Number(q.get('pageSize')) || 50));
      const from = Math.max(0, Number(q.get('pageToken')) || 0);
      const page = models.slice(from, from + size);
      done(200);
      sendJson(res, 200, {
        models: page.map(view),
        ...(from + size < models.length ? { nextPageToken: String(from + size) } : {}),
      });
    } catch (err) {
      fail(res, 'gemini', err, newRequestId(), 'chat', at);
    }
  }

  /** GET or DELETE /v1/responses/{id}: on the channel that made the response, for its owner only. */
  async function handleStored(
    req: IncomingMessage,
    res: ServerResponse,
    url: string,
    id: string,
    method: 'GET' | 'DELETE',
    sub: string,
  ) {
    const requestId = newRequestId();
    const began = performance.now();
    try {
      const who = await identify(req, 'responses', url);
      const owner = await deps.pipeline.state?.find(id);
      const ch = owner && owner.userId === who.user.id ? deps.pipeline.channels().byId(owner.channelId) : undefined;
      if (!ch) throw new RelayError(404, `No response found with id '${id}'.`, 'not_found');
      const target = ch.adaptor.target(ch.target, 'chat', '', false, 'responses');
      const upstreamUrl = `${target.url}/${encodeURIComponent(id)}${sub}${url ? `?${url}` : ''}`;
      let answer: Awaited<ReturnType<RelayDeps['upstream']['send']>>;
      let bytes: Buffer;
      try {
        answer = await deps.pipeline.upstream.send({ url: upstreamUrl, method, headers: target.headers });
        bytes = await answer.bytes();
      } catch (err) {
        throw new RelayError(
          502,
          `连接上游失败: ${err instanceof Error ? err.message : String(err)}`,
          'upstream_error',
        );
      }
      if (method === 'DELETE' && answer.status >= 200 && answer.status < 300) await deps.pipeline.state?.forget(id);
      res.writeHead(answer.status, {
        'content-type': String(answer.headers['content-type'] ?? 'application/json'),
        'content-length': String(bytes.length),
        'x-aigw-request-id': requestId,
      });
      res.end(bytes);
    } catch (err) {
      fail(res, 'responses', err, requestId, 'chat', {
        route: '/v1/responses/{id}',
        model: 'other',
        startedAt: began,
      });
    }
  }

  async function handleBilling(req: IncomingMessage, res: ServerResponse, url: string, what: 'subscription' | 'usage') {
    const at: Labels = { route: `/dashboard/billing/${what}`, model: 'none', startedAt: performance.now() };
    try {
      const id = await identify(req, 'openai', url);
      const perUnit = deps.options.number('QuotaPerUnit');
      const wallet = id.token.unlimitedQuota ? await deps.walletOf(id.user.id) : undefined;
      const quota = wallet ? wallet.quota : id.token.remainQuota;
      const used = wallet ? wallet.usedQuota : id.token.usedQuota;
      if (what === 'subscription') {
        const limit = (quota + (id.token.unlimitedQuota ? 0 : used)) / perUnit;
        sendJson(res, 200, {
          object: 'billing_subscription',
          has_payment_method: true,
          soft_limit_usd: limit,
          hard_limit_usd: limit,
          system_hard_limit_usd: limit,
          access_until: id.token.expiredTime > 0 ? id.token.expiredTime : 0,
        });
      } else sendJson(res, 200, { object: 'list', total_usage: (used / perUnit) * 100 });
    } catch (err) {
      fail(res, 'openai', err, newRequestId(), 'chat', at);
      return;
    }
    metrics.request(at.route, at.model, 'none', 200, (performance.now() - at.startedAt) / 1000);
  }

  /** Dispatches a request; false when the path is not a relay route. */
  return function dispatch(req: IncomingMessage, res: ServerResponse): boolean {
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const path = q < 0 ? raw : raw.slice(0, q);
    const url = q < 0 ? '' : raw.slice(q + 1);
    const method = req.method ?? 'GET';
    if (method === 'POST') {
      const mode = MODES[path];
      if (mode) return track(handleApi(req, res, url, 'openai', mode, path));
      if (path === '/v1/messages') return track(handleApi(req, res, url, 'claude', 'chat', path));
      if (path === '/v1/messages/count_tokens')
        return track(handleCount(req, res, url, 'claude', '/v1/messages/count_tokens'));
      if (path === '/v1/responses') return track(handleApi(req, res, url, 'responses', 'chat', path));
      if (path === '/pg/chat/completions') return track(handlePlayground(req, res));
      const g = /^\/(v1beta|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(path);
      if (g) {
        const model = safeDecode(g[2] ?? '');
        if (model === undefined) return badPath(res, 'gemini');
        if (g[3] === 'countTokens')
          return track(handleCount(req, res, url, 'gemini', `/${g[1]}/models/{model}:countTokens`, { model }));
        return track(
          handleApi(req, res, url, 'gemini', 'chat', `/${g[1]}/models/{model}:${g[3]}`, {
            model,
            stream: g[3] === 'streamGenerateContent',
          }),
        );
      }
    } else if (method === 'GET') {
      if (path === '/v1/models') return track(handleModels(req, res, url));
      const gm = /^\/(v1beta)\/models(?:\/(.+))?$/.exec(path);
      if (gm) {
        const one = gm[2] === undefined ? undefined : safeDecode(gm[2]);
        if (gm[2] !== undefined && one === undefined) return badPath(res, 'gemini');
        return track(handleGeminiModels(req, res, url, gm[1] as string, one));
      }
      if (path.startsWith('/v1/models/')) {
        const one = safeDecode(path.slice('/v1/models/'.length));
        if (one === undefined) return badPath(res, 'openai');
        return track(handleModels(req, res, url, one));
      }
      if (path.startsWith('/v1/responses/')) return stored(req, res, url, path, 'GET');
      if (path === '/dashboard/billing/subscription' || path === '/v1/dashboard/billing/subscription')
        return track(handleBilling(req, res, url, 'subscription'));
      if (path === '/dashboard/billing/usage' || path === '/v1/dashboard/billing/usage')
        return track(handleBilling(req, res, url, 'usage'));
    } else if (method === 'DELETE' && path.startsWith('/v1/responses/')) return stored(req, res, url, path, 'DELETE');
    if (path.startsWith('/v1') || path.startsWith('/pg') || path.startsWith('/dashboard')) {
      const format: ClientFormat = path.startsWith('/v1beta')
        ? 'gemini'
        : path.startsWith('/v1/messages')
          ? 'claude'
          : 'openai';
      sendError(res, format, 404, `Invalid URL (${method} ${path})`, 'not_found');
      return true;
    }
    return false;
  };

  /** /v1/responses/{id} (GET, DELETE) and /v1/responses/{id}/input_items (GET). */
  function stored(
    req: IncomingMessage,
    res: ServerResponse,
    url: string,
    path: string,
    method: 'GET' | 'DELETE',
  ): true {
    const [seg = '', sub, ...more] = path.slice('/v1/responses/'.length).split('/');
    const id = safeDecode(seg);
    if (id === undefined) return badPath(res, 'responses');
    if (!id || more.length > 0 || (sub !== undefined && (sub !== 'input_items' || method !== 'GET'))) {
      sendError(res, 'responses', 404, `Invalid URL (${method} ${path})`, 'not_found');
      return true;
    }
    return track(handleStored(req, res, url, id, method, sub ? `/${sub}` : ''));
  }

  /** A path segment that is not valid percent-encoded UTF-8 is the client's error (400), not ours. */
  function badPath(res: ServerResponse, format: ClientFormat): true {
    sendError(res, format, 400, '请求路径的编码无效', 'invalid_path');
    return true;
  }

  function track(p: Promise<void>): true {
    deps.track(p);
    return true;
  }
}
