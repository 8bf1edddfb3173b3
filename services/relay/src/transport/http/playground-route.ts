/**
 * POST /pg/chat/completions: the console's playground, signed in by the session cookie (no key);
 * the group comes in the body and is taken out before the request goes upstream.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { nameActiveSpan } from '@aigw/common/telemetry';
import { checkModel, checkUser } from '../../domain/authorize.ts';
import type { Json } from '../../domain/protocols/openai.ts';
import { RelayError } from '../../domain/relay-error.ts';
import type { RelayCaller } from '../../domain/relay-request.ts';
import { modelLabel, type RelayRouteContext, runPipeline } from './api-route.ts';
import { parseClientRequest } from './request-body.ts';
import { clientIp, type Labels, newRequestId } from './route-kit.ts';

export async function handlePlayground(ctx: RelayRouteContext, req: IncomingMessage, res: ServerResponse) {
  const { deps, limit, group, fail } = ctx;
  const startedAt = performance.now();
  const requestId = newRequestId();
  const at: Labels = { route: '/pg/chat/completions', model: 'other', startedAt };
  if (ctx.tracing) nameActiveSpan(`POST ${at.route}`, { 'http.route': at.route });
  try {
    const s = await deps.session(req);
    if (!s) throw new RelayError(401, '未登录或登录已过期，请重新登录！', 'unauthenticated');
    const user = await deps.identities.user(s.id);
    checkUser(user);
    const creq = await parseClientRequest(req, 'chat', 'openai', deps, undefined, { playground: true });
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
    await runPipeline(ctx, res, caller, creq, at);
  } catch (err) {
    fail(res, 'openai', err, requestId, 'chat', at);
  }
}
