/**
 * Vertex AI (type 41) addresses: Claude models through Anthropic's publisher endpoint
 * (rawPredict / streamRawPredict, the Messages API body with `anthropic_version:
 * vertex-2023-10-16` instead of `model`), Gemini models through Google's (generateContent /
 * streamGenerateContent?alt=sse). The region comes from `other`: a region name, or a JSON map of
 * model -> region with a `default`.
 */
import type { Json } from '../protocols/openai.ts';

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
