/**
 * What the fake Anthropic provider (fake-provider.ts) checks and serves besides /v1/messages, as
 * the real API does: the anthropic-version header is required; `context_management` is refused
 * unless the anthropic-beta header enables it; POST /v1/messages/count_tokens counts a Messages
 * request's input (here: one token per word of its texts, plus the fake's fixed prompt tokens).
 */
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
