/**
 * The relay's public routes on node:http (no framework on the hot path): authentication,
 * request parsing and the error shapes of each API; the pipeline itself is domain/relay-request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { nameActiveSpan, tracingActive } from '@aigw/common/telemetry';
import type { RelayMode } from '../../domain/adaptors/index.ts';
import { checkModel, checkUser } from '../../domain/authorize.ts';
import { affinityKey } from '../../domain/channel-affinity.ts';
import type { ChannelIndex } from '../../domain/channel-index.ts';
import { countTokens } from '../../domain/count-tokens.ts';
import type { ClientRequest } from '../../domain/exchange/build-request.ts';
import type { ClientFormat } from '../../domain/exchange/ports.ts';
import type { Json } from '../../domain/protocols/openai.ts';
import { RelayError } from '../../domain/relay-error.ts';
import { type RelayCaller, relayRequest } from '../../domain/relay-request.ts';
import { badPath, handleBilling, storedResponse } from './account-routes.ts';
import { tracedPipeline } from './gen-ai-trace.ts';
import { providerOf } from './metrics.ts';
import { handleGeminiModels, handleModels } from './model-routes.ts';
import { nodeSink } from './node-sink.ts';
import { compactionRequest, parseClientRequest } from './request-body.ts';
import {
  clientIp,
  type Labels,
  newRequestId,
  type RouteDeps,
  routeContext,
  safeDecode,
  sendError,
} from './route-kit.ts';

export { newRequestId, type RouteDeps, safeDecode } from './route-kit.ts';

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

/** Returns a handler for the relay's routes, or undefined when the path is not one of them. */
export function relayRoutes(deps: RouteDeps) {
  const ctx = routeContext(deps);
  const { metrics, identify, limit, group, fail } = ctx;
  // Spans only where this process exports them (startTelemetry ran first, in main.ts).
  const tracing = tracingActive();
  const parse = (
    req: IncomingMessage,
    mode: RelayMode,
    format: ClientFormat,
    gemini?: { model: string; stream: boolean },
    kind?: { count?: boolean; playground?: boolean },
  ) => parseClientRequest(req, mode, format, deps, gemini, kind);

  /**
   * Token counts without running the request, free: Claude's POST /v1/messages/count_tokens and
   * Gemini's POST /{v1beta,v1}/models/{model}:countTokens. Counted by a channel of the same
   * protocol, estimated on the others.
   */
  async function handleCount(
    req: IncomingMessage,
    res: ServerResponse,
    url: string,
    format: 'claude' | 'gemini' | 'responses',
    route: string,
    gemini?: { model: string },
  ) {
    const requestId = newRequestId();
    const began = performance.now();
    try {
      const who = identify(req, format, url);
      // The count schemas require the model and the prompt (messages, contents, or the contents of
      // Gemini's whole `generateContentRequest`) with each API's own message.
      const parsing = parse(req, 'chat', format, gemini ? { model: gemini.model, stream: false } : undefined, {
        count: true,
      });
      const [id, creq] = who instanceof Promise ? await Promise.all([who, parsing]) : [who, await parsing];
      checkModel(id.token, creq.model);
      const caller: RelayCaller = {
        requestId,
        user: id.user,
        token: id.token,
        ...group(id.token.group, id.user, creq.model),
        crossGroupRetry: id.token.crossGroupRetry === true,
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
    // Ended like a client that went away when the lease cannot be renewed and it holds a reservation.
    const unwatch = deps.fence?.watch(caller.requestId, () => res.destroy());
    let outcome: Awaited<ReturnType<typeof relayRequest>>;
    try {
      outcome = await relayRequest(pipeline, caller, creq, sink);
    } finally {
      unwatch?.();
    }
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
      let [id, creq] =
        who instanceof Promise
          ? await Promise.all([who, parse(req, mode, format, gemini)])
          : [who, await parse(req, mode, format, gemini)];
      if (mode === 'responses_compact') creq = compactionRequest(creq);
      checkModel(id.token, creq.model);
      deps.screen?.(creq.body);
      const caller: RelayCaller = {
        requestId,
        user: id.user,
        token: id.token,
        ...group(id.token.group, id.user, creq.model),
        crossGroupRetry: id.token.crossGroupRetry === true,
        pinnedChannelId: id.pinned,
        ip: clientIp(req, deps.trustedProxy),
        startedAt,
      };
      at.model = modelLabel(deps.pipeline.channels(), caller.group, creq.model);
      // The token's concurrency slot ends with the answer, or when the client goes away.
      const release = await limit(id.token, id.user.id, caller.group);
      if (res.closed) release();
      else res.once('close', release);
      // Channel affinity: the session this request belongs to, when a rule names one.
      const affinity = deps.pipeline.affinity;
      if (affinity)
        caller.affinity = affinityKey(affinity.settings(), {
          path: route,
          model: creq.model,
          group: caller.group,
          body: creq.body,
          header: (name) => {
            const v = req.headers[name];
            return Array.isArray(v) ? v[0] : v;
          },
        });
      // A Responses request continuing a stored one goes first to the channel that holds it.
      const previous = format === 'responses' ? (creq.body as Json).previous_response_id : undefined;
      if (typeof previous === 'string' && deps.pipeline.state) {
        const owner = await deps.pipeline.state.find(previous);
        if (owner && owner.userId === id.user.id) {
          caller.preferredChannelId = owner.channelId;
          caller.contextTokens = owner.contextTokens;
        }
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
      const creq = await parse(req, 'chat', 'openai', undefined, { playground: true });
      checkModel(undefined, creq.model);
      deps.screen?.(creq.body);
      const body = creq.body as Json;
      const caller: RelayCaller = {
        requestId,
        user,
        ...group(typeof body.group === 'string' ? body.group : '', user, creq.model),
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
      if (deps.limiter.enabled) await limit(undefined, user.id, caller.group);
      await run(res, caller, creq, at);
    } catch (err) {
      fail(res, 'openai', err, requestId, 'chat', at);
    }
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
      // Codex's context compaction: forwarded to channels that serve the Responses API (type 1);
      // elsewhere a 400 in OpenAI's shape (README).
      if (path === '/v1/responses/compact') return track(handleApi(req, res, url, 'openai', 'responses_compact', path));
      if (path === '/v1/responses/input_tokens')
        return track(handleCount(req, res, url, 'responses', '/v1/responses/input_tokens'));
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
      if (path === '/v1/models') return track(handleModels(ctx, req, res, url));
      const gm = /^\/(v1beta)\/models(?:\/(.+))?$/.exec(path);
      if (gm) {
        const one = gm[2] === undefined ? undefined : safeDecode(gm[2]);
        if (gm[2] !== undefined && one === undefined) return badPath(res, 'gemini');
        return track(handleGeminiModels(ctx, req, res, url, gm[1] as string, one));
      }
      if (path.startsWith('/v1/models/')) {
        const one = safeDecode(path.slice('/v1/models/'.length));
        if (one === undefined) return badPath(res, 'openai');
        return track(handleModels(ctx, req, res, url, one));
      }
      if (path.startsWith('/v1/responses/')) return storedResponse(ctx, track, req, res, url, path, 'GET');
      if (path === '/dashboard/billing/subscription' || path === '/v1/dashboard/billing/subscription')
        return track(handleBilling(ctx, req, res, url, 'subscription'));
      if (path === '/dashboard/billing/usage' || path === '/v1/dashboard/billing/usage')
        return track(handleBilling(ctx, req, res, url, 'usage'));
    } else if (method === 'DELETE' && path.startsWith('/v1/responses/'))
      return storedResponse(ctx, track, req, res, url, path, 'DELETE');
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

  function track(p: Promise<void>): true {
    deps.track(p);
    return true;
  }
}
