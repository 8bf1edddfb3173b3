/** The model lists a key may use, in OpenAI's, Anthropic's and Gemini's shapes. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResolvedGroup } from '../../domain/authorize.ts';
import type { ChannelIndex } from '../../domain/channel-index.ts';
import type { ClientFormat } from '../../domain/exchange/ports.ts';
import { type Labels, newRequestId, type RouteContext, sendError, sendJson } from './route-kit.ts';

/**
 * GET /v1/models and /v1/models/{model}: the models the key may use. In OpenAI's shape, or in
 * Anthropic's when the caller speaks it (an `anthropic-version` header, or only `x-api-key`), as
 * the Anthropic SDK's models.list() and models.retrieve() read it.
 */
export async function handleModels(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: string,
  one?: string,
) {
  const { deps, metrics, identify, group, fail } = ctx;
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
    let models = groupModels(deps.pipeline.channels(), group(id.token.group, id.user));
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
export async function handleGeminiModels(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: string,
  version: string,
  one?: string,
) {
  const { deps, metrics, identify, group, fail } = ctx;
  const at: Labels = {
    route: one === undefined ? `/${version}/models` : `/${version}/models/{model}`,
    model: 'none',
    startedAt: performance.now(),
  };
  try {
    const id = await identify(req, 'gemini', url);
    let models = groupModels(deps.pipeline.channels(), group(id.token.group, id.user));
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

/** The models of a group; for an `auto` token, those of every auto group (new-api's), sorted. */
function groupModels(index: ChannelIndex, g: ResolvedGroup): string[] {
  if (!g.autoGroups) return index.models(g.group);
  return [...new Set(g.autoGroups.flatMap((a) => index.models(a)))].sort();
}
