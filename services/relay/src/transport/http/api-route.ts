/**
 * The routes run through the pipeline with a key (OpenAI's, Claude's /v1/messages, Gemini's
 * generateContent, the Responses API): identity and body side by side, the model check, the
 * caller's group and limits, the session hints (channel affinity, a stored response's channel),
 * then the pipeline and its metrics.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { nameActiveSpan } from '@aigw/common/telemetry';
import type { RelayMode } from '../../domain/adaptors/index.ts';
import { checkModel } from '../../domain/authorize.ts';
import { affinityKey } from '../../domain/channel-affinity.ts';
import type { ChannelIndex } from '../../domain/channel-index.ts';
import type { ClientRequest } from '../../domain/exchange/build-request.ts';
import type { ClientFormat } from '../../domain/exchange/ports.ts';
import type { Json } from '../../domain/protocols/openai.ts';
import { type RelayCaller, relayRequest } from '../../domain/relay-request.ts';
import { tracedPipeline } from './gen-ai-trace.ts';
import { providerOf } from './metrics.ts';
import { nodeSink } from './node-sink.ts';
import { compactionRequest, parseClientRequest } from './request-body.ts';
import { clientIp, type Identity, type Labels, newRequestId, type RouteContext } from './route-kit.ts';

/** The route context with whether this process exports spans (startTelemetry ran first, in main.ts). */
export type RelayRouteContext = RouteContext & { tracing: boolean };

/** The model label of a request: a model configured for the caller's group, else "other" (bounded). */
export function modelLabel(index: ChannelIndex, group: string, model: string): string {
  return model && index.has(group, model) ? model : 'other';
}

/** The caller of a request made with a key: its identity, group (an `auto` token's walk) and address. */
export function tokenCaller(
  ctx: RouteContext,
  req: IncomingMessage,
  id: Identity,
  model: string,
  requestId: string,
  startedAt: number,
): RelayCaller {
  return {
    requestId,
    user: id.user,
    token: id.token,
    ...ctx.group(id.token.group, id.user, model),
    crossGroupRetry: id.token.crossGroupRetry === true,
    pinnedChannelId: id.pinned,
    ip: clientIp(req, ctx.deps.trustedProxy),
    startedAt,
  };
}

/**
 * Where a request's session points: its channel affinity key when a rule names one, and for a
 * Responses request continuing a stored one (its owner's), the channel holding it first.
 */
export async function sessionHints(
  ctx: RouteContext,
  req: IncomingMessage,
  caller: RelayCaller,
  creq: ClientRequest,
  route: string,
): Promise<void> {
  const { pipeline } = ctx.deps;
  const affinity = pipeline.affinity;
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
  const previous = creq.format === 'responses' ? (creq.body as Json).previous_response_id : undefined;
  if (typeof previous === 'string' && pipeline.state) {
    const owner = await pipeline.state.find(previous);
    if (owner && owner.userId === caller.user.id) {
      caller.preferredChannelId = owner.channelId;
      caller.contextTokens = owner.contextTokens;
    }
  }
}

/** Runs an authenticated request through the pipeline and counts it. */
export async function runPipeline(
  ctx: RelayRouteContext,
  res: ServerResponse,
  caller: RelayCaller,
  creq: ClientRequest,
  at: Labels,
): Promise<void> {
  const { deps, metrics } = ctx;
  const sink = nodeSink(res, { 'x-aigw-request-id': caller.requestId });
  const pipeline = ctx.tracing ? tracedPipeline(deps.pipeline, creq) : deps.pipeline;
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
  metrics.request(at.route, at.model, providerOf(type), outcome.status, (performance.now() - caller.startedAt) / 1000);
}

/** A pipeline route: the caller's key and the body read side by side, then the pipeline. */
export async function handleApi(
  ctx: RelayRouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: string,
  format: ClientFormat,
  mode: RelayMode,
  route: string,
  gemini?: { model: string; stream: boolean },
) {
  const { deps, identify, limit, fail } = ctx;
  const startedAt = performance.now();
  const requestId = newRequestId();
  const at: Labels = { route, model: 'other', startedAt };
  if (ctx.tracing) nameActiveSpan(`POST ${route}`, { 'http.route': route });
  try {
    const who = identify(req, format, url);
    const parsing = parseClientRequest(req, mode, format, deps, gemini);
    let [id, creq] = who instanceof Promise ? await Promise.all([who, parsing]) : [who, await parsing];
    if (mode === 'responses_compact') creq = compactionRequest(creq);
    checkModel(id.token, creq.model);
    deps.screen?.(creq.body);
    const caller = tokenCaller(ctx, req, id, creq.model, requestId, startedAt);
    at.model = modelLabel(deps.pipeline.channels(), caller.group, creq.model);
    // The token's concurrency slot ends with the answer, or when the client goes away.
    const release = await limit(id.token, id.user.id, caller.group);
    if (res.closed) release();
    else res.once('close', release);
    await sessionHints(ctx, req, caller, creq, route);
    await runPipeline(ctx, res, caller, creq, at);
  } catch (err) {
    fail(res, format, err, requestId, mode, at);
  }
}
