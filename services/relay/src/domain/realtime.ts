/**
 * OpenAI's Realtime API (`/v1/realtime` over WebSocket) relayed to OpenAI and Azure channels:
 * where the upstream socket goes, how a client's key arrives, and what one `response.done`
 * costs. The socket handling itself is transport/http/realtime-ws.ts.
 */
import type { ChannelTarget } from './adaptors/index.ts';
import { baseOf } from './adaptors/types.ts';
import type { Usage } from './protocols/openai.ts';

/** Channel types whose upstream speaks the Realtime API: OpenAI, Azure OpenAI, custom (OpenAI-compatible). */
export const REALTIME_TYPES: ReadonlySet<number> = new Set([1, 3, 8]);

/** Azure's realtime endpoint needs a preview API version; the channel's `other` wins. */
export const AZURE_REALTIME_API_VERSION = '2024-10-01-preview';

const DEFAULT_BASE: Record<number, string> = { 1: 'https://api.openai.com', 8: '' };

/** An upstream WebSocket address and its handshake headers. */
export interface RealtimeTarget {
  url: string;
  headers: Record<string, string>;
}

const wsScheme = (url: string) => url.replace(/^http(s?):\/\//i, (_m, s: string) => `ws${s}://`);

/**
 * The upstream socket of a channel: OpenAI `{base}/v1/realtime?model=...` with a bearer key,
 * Azure `{base}/openai/realtime?api-version=...&deployment=...` with `api-key`. `beta` is the
 * client's OpenAI-Beta value (realtime=v1 for the beta protocol), passed on as given.
 */
export function realtimeTarget(ch: ChannelTarget, model: string, beta: string | undefined): RealtimeTarget {
  const headers: Record<string, string> = {};
  if (beta) headers['openai-beta'] = beta;
  if (ch.type === 3) {
    const version = ch.other || AZURE_REALTIME_API_VERSION;
    headers['api-key'] = ch.key;
    const deployment = model.replaceAll('.', '');
    return {
      url: `${wsScheme(baseOf(ch, { defaultBaseUrl: '' }))}/openai/realtime?api-version=${encodeURIComponent(version)}&deployment=${encodeURIComponent(deployment)}`,
      headers,
    };
  }
  headers.authorization = `Bearer ${ch.key}`;
  if (ch.organization) headers['openai-organization'] = ch.organization;
  const base = baseOf(ch, { defaultBaseUrl: DEFAULT_BASE[ch.type] ?? '' });
  return { url: `${wsScheme(base)}/v1/realtime?model=${encodeURIComponent(model)}`, headers };
}

const KEY_PROTOCOL = 'openai-insecure-api-key.';
const BETA_PROTOCOL = 'openai-beta.';

/**
 * The key and beta flag of a client's handshake: `Authorization: Bearer sk-...` (server-side
 * clients), else the `openai-insecure-api-key.<key>` subprotocol browsers send (with
 * `openai-beta.realtime-v1` for the beta protocol). The key may be without its sk- prefix.
 */
export function realtimeCredentials(headers: {
  authorization?: string;
  'sec-websocket-protocol'?: string;
  'openai-beta'?: string | string[];
}): { key: string | undefined; beta: string | undefined } {
  const protocols = (headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  let key = headers.authorization;
  let beta = Array.isArray(headers['openai-beta']) ? headers['openai-beta'][0] : headers['openai-beta'];
  for (const p of protocols) {
    if (!key && p.startsWith(KEY_PROTOCOL)) key = p.slice(KEY_PROTOCOL.length);
    // openai-beta.realtime-v1 stands for the header OpenAI-Beta: realtime=v1.
    if (!beta && p.startsWith(BETA_PROTOCOL)) beta = p.slice(BETA_PROTOCOL.length).replace(/-(v\d+)$/, '=$1');
  }
  return { key, beta };
}

/** The subprotocol the relay answers with: the first the client offered that is not a credential. */
export function chooseSubprotocol(offered: Iterable<string>): string | false {
  for (const p of offered) if (!p.startsWith(KEY_PROTOCOL) && !p.startsWith(BETA_PROTOCOL)) return p;
  return false;
}

interface RealtimeUsage {
  total_tokens?: number;
  input_tokens?: number;
  output_tokens?: number;
  input_token_details?: {
    cached_tokens?: number;
    text_tokens?: number;
    audio_tokens?: number;
    cached_tokens_details?: { text_tokens?: number; audio_tokens?: number };
  };
  output_token_details?: { text_tokens?: number; audio_tokens?: number };
}

/**
 * The usage of a `response.done` event (its `response.usage`), undefined for other events or a
 * response without usage. Audio tokens count at the audio ratios, cached text input at the cache
 * ratio (cached audio input is billed as audio, so no token counts twice).
 */
export function realtimeUsage(event: unknown): Usage | undefined {
  if (!event || typeof event !== 'object') return undefined;
  const e = event as { type?: unknown; response?: { usage?: RealtimeUsage | null } };
  if (e.type !== 'response.done') return undefined;
  const u = e.response?.usage;
  if (!u || typeof u !== 'object') return undefined;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
  const usage: Usage = { promptTokens: num(u.input_tokens), completionTokens: num(u.output_tokens) };
  const d = u.input_token_details;
  const audioIn = Math.min(num(d?.audio_tokens), usage.promptTokens);
  if (audioIn) usage.audioInputTokens = audioIn;
  // Cached text input at the cache ratio; cached audio stays with the audio tokens (counted once).
  const cachedText = d?.cached_tokens_details ? num(d.cached_tokens_details.text_tokens) : num(d?.cached_tokens);
  const cached = Math.min(cachedText, usage.promptTokens - audioIn);
  if (cached) usage.cachedTokens = cached;
  const audioOut = num(u.output_token_details?.audio_tokens);
  if (audioOut) usage.audioOutputTokens = Math.min(audioOut, usage.completionTokens);
  if (usage.promptTokens === 0 && usage.completionTokens === 0) return undefined;
  return usage;
}

/** The Realtime API's error event (sent before the relay closes a client socket). */
export function realtimeError(message: string, code: string, type = 'invalid_request_error') {
  return {
    type: 'error',
    event_id: `event_relay_${Date.now().toString(36)}`,
    error: { type, code, message, param: null },
  };
}
