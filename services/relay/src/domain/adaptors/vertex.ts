/**
 * Vertex AI (type 41) addresses: Claude models through Anthropic's publisher endpoint
 * (rawPredict / streamRawPredict, the Messages API body with `anthropic_version:
 * vertex-2023-10-16` instead of `model`), Gemini models through Google's (generateContent /
 * streamGenerateContent?alt=sse). The region comes from `other`: a region name, or a JSON map of
 * model -> region with a `default`.
 */
import { UpstreamFailure } from '../exchange/failure.ts';
import type { UpstreamClient } from '../exchange/ports.ts';
import type { Json } from '../protocols/openai.ts';
import type { Adaptor, RelayMode } from './types.ts';
import {
  createGoogleTokenCache,
  type GoogleTokenCache,
  parseServiceAccount,
  type ServiceAccount,
  TokenExchangeError,
} from './vertex-auth.ts';

export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** Whether a model is served through Anthropic's publisher (else Google's). */
export const isVertexClaude = (model: string): boolean => model.startsWith('claude');

/** The region for a model from the channel's `other`. */
export function vertexRegion(other: string, model: string): string {
  const text = other.trim();
  if (text.startsWith('{')) {
    try {
      const map = JSON.parse(text) as Record<string, unknown>;
      const r = map[model] ?? map.default;
      if (typeof r === 'string' && r) return r;
    } catch {
      // not a JSON map: fall through to the default
    }
    return 'us-central1';
  }
  return text || 'us-central1';
}

/** Vertex names Claude versions with `@` (claude-3-5-sonnet-v2@20241022). */
export function vertexClaudeModel(model: string): string {
  if (model.includes('@')) return model;
  if (model === 'claude-3-5-sonnet-20241022') return 'claude-3-5-sonnet-v2@20241022';
  return model.replace(/-(\d{8})$/, '@$1');
}

/** The prediction URL; `base` replaces `https://{region}-aiplatform.googleapis.com` when set. */
export function vertexUrl(base: string, other: string, projectId: string, model: string, stream: boolean): string {
  const region = vertexRegion(other, model);
  const origin =
    base.replace(/\/+$/, '') ||
    (region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${region}-aiplatform.googleapis.com`);
  const prefix = `${origin}/v1/projects/${encodeURIComponent(projectId)}/locations/${encodeURIComponent(region)}/publishers`;
  if (isVertexClaude(model))
    return `${prefix}/anthropic/models/${encodeURIComponent(vertexClaudeModel(model))}:${stream ? 'streamRawPredict' : 'rawPredict'}`;
  return `${prefix}/google/models/${encodeURIComponent(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`;
}

/** A Messages API body as Vertex takes it. */
export function toVertexClaudeBody(claude: Json): Json {
  const { model: _model, ...rest } = claude;
  return { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest };
}

/** One token cache per upstream client (the relay has one). */
const caches = new WeakMap<UpstreamClient, GoogleTokenCache>();

/** Vertex AI (type 41): the key is a service-account JSON, `other` the region (or a region map). */
export const vertex: Adaptor = {
  name: 'Vertex AI',
  protocol: 'gemini',
  modes: new Set<RelayMode>(['chat']),
  defaultBaseUrl: '',
  protocolFor: (model) => (isVertexClaude(model) ? 'claude' : 'gemini'),
  // The address needs the project of the key: prepare() builds it.
  target: () => ({ url: '', headers: {} }),
  async prepare(call, ctx) {
    let sa: ServiceAccount;
    try {
      sa = parseServiceAccount(ctx.channel.key);
    } catch (err) {
      throw new UpstreamFailure(401, (err as Error).message);
    }
    let cache = caches.get(ctx.http);
    if (!cache) {
      cache = createGoogleTokenCache(ctx.http);
      caches.set(ctx.http, cache);
    }
    let token: string;
    try {
      token = await cache.token(sa);
    } catch (err) {
      if (err instanceof TokenExchangeError)
        // A refused assertion means the key is unusable (as a 401 from the API would).
        throw new UpstreamFailure(err.status === 400 ? 401 : err.status, err.message);
      throw new UpstreamFailure(0, `Vertex AI 获取访问令牌失败: ${(err as Error).message}`, 'connection');
    }
    const claude = isVertexClaude(ctx.model);
    const body = claude ? JSON.stringify(toVertexClaudeBody(JSON.parse(String(call.body)) as Json)) : call.body;
    const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    if (call.headers.accept) headers.accept = call.headers.accept;
    return {
      url: vertexUrl(ctx.channel.baseUrl, ctx.channel.other, sa.projectId, ctx.model, ctx.stream),
      headers,
      body,
    };
  },
};
