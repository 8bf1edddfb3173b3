/**
 * The routes around a key's requests: the OpenAI dashboard's billing endpoints (what the key may
 * still spend) and the Responses API's stored responses (GET and DELETE /v1/responses/{id},
 * /input_items), answered by the channel that made the response, for its owner only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClientFormat } from '../../domain/exchange/ports.ts';
import { RelayError } from '../../domain/relay-error.ts';
import type { RelayDeps } from '../../domain/relay-request.ts';
import { type Labels, newRequestId, type RouteContext, safeDecode, sendError, sendJson } from './route-kit.ts';

export async function handleBilling(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: string,
  what: 'subscription' | 'usage',
) {
  const { deps, metrics, identify, fail } = ctx;
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

/** GET or DELETE /v1/responses/{id}: on the channel that made the response, for its owner only. */
async function handleStored(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: string,
  id: string,
  method: 'GET' | 'DELETE',
  sub: string,
) {
  const { deps, identify, fail } = ctx;
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
      throw new RelayError(502, `连接上游失败: ${err instanceof Error ? err.message : String(err)}`, 'upstream_error');
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

/** /v1/responses/{id} (GET, DELETE) and /v1/responses/{id}/input_items (GET). */
export function storedResponse(
  ctx: RouteContext,
  track: (p: Promise<void>) => true,
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
  return track(handleStored(ctx, req, res, url, id, method, sub ? `/${sub}` : ''));
}

export /** A path segment that is not valid percent-encoded UTF-8 is the client's error (400), not ours. */
function badPath(res: ServerResponse, format: ClientFormat): true {
  sendError(res, format, 400, '请求路径的编码无效', 'invalid_path');
  return true;
}
