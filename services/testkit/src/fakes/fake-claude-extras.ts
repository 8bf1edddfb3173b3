/**
 * What the fake Anthropic provider (fake-provider.ts) checks and serves besides /v1/messages, as
 * the real API does: the anthropic-version header is required; `context_management` is refused
 * unless the anthropic-beta header enables it; POST /v1/messages/count_tokens counts a Messages
 * request's input (here: one token per word of its texts, plus the fake's fixed prompt tokens).
 * Extended thinking as Anthropic has it: `thinking` checked against max_tokens, temperature, top_p,
 * top_k and forced tool choice; answers open with a signed thinking block; a conversation whose
 * last assistant turn calls tools must send that turn's thinking back, with its signature intact.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

type Json = Record<string, unknown>;

/** The beta that enables context_management (Claude Code sends it with its beta header). */
export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';

function invalid(res: ServerResponse, message: string): void {
  const text = JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } });
  res.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function words(v: unknown): number {
  if (typeof v === 'string') return v.split(/\s+/).filter(Boolean).length;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + words(x), 0);
  if (v && typeof v === 'object') {
    const o = v as Json;
    return words(o.text) + words(o.content);
  }
  return 0;
}

/** Input tokens the fake reports for a request body: `base` plus a token per word. */
export function fakeInputTokens(body: Json, base: number): number {
  return base + words(body.system) + words(body.messages);
}

/**
 * Checks the headers and serves count_tokens; returns true when it answered (an error or the
 * count), false when /v1/messages should go on.
 */
export function claudeExtras(
  headers: IncomingMessage['headers'],
  body: Json,
  path: string,
  promptTokens: number,
  res: ServerResponse,
): boolean {
  if (!headers['anthropic-version']) {
    invalid(res, 'anthropic-version: header is required');
    return true;
  }
  const betas = String(headers['anthropic-beta'] ?? '')
    .split(',')
    .map((b) => b.trim());
  if (body.context_management !== undefined && !betas.includes(CONTEXT_MANAGEMENT_BETA)) {
    invalid(res, 'context_management: Extra inputs are not permitted');
    return true;
  }
  if (path.endsWith('/v1/messages/count_tokens')) {
    if (typeof body.model !== 'string') {
      invalid(res, 'model: Field required');
      return true;
    }
    const text = JSON.stringify({ input_tokens: fakeInputTokens(body, promptTokens) });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
    return true;
  }
  return false;
}

/** The thinking text the fake answers with when thinking is on. */
export const FAKE_THINKING = 'Let me think this through step by step.';

/** The fake's signature of a thinking text (Anthropic's is opaque; this one can be checked). */
export function thinkingSignature(text: string): string {
  return `fakesig-${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
}

/**
 * Checks a Messages request's thinking as the real API does; returns Anthropic's error message,
 * or undefined when the request is acceptable.
 */
export function thinkingError(body: Json): string | undefined {
  const t = body.thinking as { type?: string; budget_tokens?: unknown } | undefined;
  if (t === undefined) return undefined;
  if (t.type === 'disabled') return undefined;
  if (t.type === 'adaptive') {
    if (body.temperature !== undefined || body.top_p !== undefined || body.top_k !== undefined)
      return 'temperature, top_p and top_k may not be set with adaptive thinking';
  } else if (t.type === 'enabled') {
    const budget = t.budget_tokens;
    if (typeof budget !== 'number' || !Number.isInteger(budget))
      return 'thinking.enabled.budget_tokens: Field required';
    if (budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (typeof body.max_tokens !== 'number' || body.max_tokens <= budget)
      return '`max_tokens` must be greater than `thinking.budget_tokens`';
    if (body.temperature !== undefined && body.temperature !== 1)
      return '`temperature` may only be set to 1 when thinking is enabled or in adaptive mode.';
    if (typeof body.top_p === 'number' && body.top_p < 0.95)
      return '`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled.';
    if (body.top_k !== undefined) return '`top_k` must be unset when thinking is enabled.';
  } else
    return `thinking.type: Input tag '${String(t.type)}' found using 'type' does not match any of the expected tags`;
  const tc = body.tool_choice as { type?: string } | undefined;
  if (tc?.type === 'any' || tc?.type === 'tool') return 'Thinking may not be enabled when tool_choice forces tool use.';
  const messages = (body.messages as { role: string; content: unknown }[] | undefined) ?? [];
  const lastAt = messages.map((m) => m.role).lastIndexOf('assistant');
  const last = messages[lastAt];
  if (last && Array.isArray(last.content)) {
    const blocks = last.content as Json[];
    if (blocks.some((b) => b.type === 'tool_use')) {
      const first = blocks[0] ?? {};
      if (first.type !== 'thinking' && first.type !== 'redacted_thinking')
        return `messages.${lastAt}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`;
      if (first.type === 'thinking' && first.signature !== thinkingSignature(String(first.thinking ?? '')))
        return `messages.${lastAt}.content.0: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  return undefined;
}

/** Every cache_control of a Messages request (system, messages' blocks, tools), in order. */
export function cacheControls(body: Json): Json[] {
  const out: Json[] = [];
  const visit = (v: unknown) => {
    if (Array.isArray(v)) for (const x of v) visit(x);
    else if (v && typeof v === 'object') {
      const o = v as Json;
      if (o.cache_control && typeof o.cache_control === 'object') out.push(o.cache_control as Json);
      if (Array.isArray(o.content)) visit(o.content);
    }
  };
  visit(body.system);
  visit(body.messages);
  visit(body.tools);
  return out;
}

/**
 * Anthropic's checks of cache breakpoints: `type: ephemeral`, `ttl` 5m or 1h, at most four. Returns
 * the error message, or undefined.
 */
export function cacheControlError(body: Json): string | undefined {
  const all = cacheControls(body);
  if (all.length > 4) return 'A maximum of 4 blocks with cache_control may be provided. Found ' + all.length + '.';
  for (const c of all) {
    if (c.type !== 'ephemeral') return "cache_control.type: Input should be 'ephemeral'";
    if (c.ttl !== undefined && c.ttl !== '5m' && c.ttl !== '1h')
      return "cache_control.ttl: Input should be '5m' or '1h'";
  }
  return undefined;
}

/** Whether the fake answers with a thinking block. */
export const thinks = (body: Json) => {
  const t = body.thinking as { type?: string } | undefined;
  return t?.type === 'enabled' || t?.type === 'adaptive';
};

/** Answers Anthropic's 400 for a refused thinking setting; true when it did. */
export function refuseThinking(body: Json, res: ServerResponse): boolean {
  const message = thinkingError(body) ?? cacheControlError(body);
  if (!message) return false;
  invalid(res, message);
  return true;
}
