/**
 * A channel's overrides (new-api's channel fields), parsed once per snapshot and applied to each
 * upstream call: param_override on the body (param-override.ts), header_override (with
 * "{api_key}" for the key of the call), and `setting`: system_prompt (added when the request has
 * no system prompt; put before the request's own with system_prompt_override),
 * pass_through_body_enabled (the client's body as sent), force_format and thinking_to_content
 * (answers re-encoded; reasoning turned into content inside <think> tags), proxy. Of `settings`
 * the relay reads disable_store (the `store` field removed).
 */
import type { ChannelTarget } from '../adaptors/index.ts';
import type { ChatChunk, ChatRequest, ChatResponse, Json } from '../protocols/openai.ts';
import type { ClientFormat } from '../protocols/registry.ts';
import { type ParamOverride, parseParamOverride } from './param-override.ts';

/** new-api's ChannelSettings (the `setting` field). */
export interface ChannelSetting {
  force_format?: boolean;
  thinking_to_content?: boolean;
  proxy?: string;
  pass_through_body_enabled?: boolean;
  system_prompt?: string;
  system_prompt_override?: boolean;
}

export interface ChannelOverrides {
  params: ParamOverride | undefined;
  headers: Record<string, string> | undefined;
  setting: ChannelSetting;
  /** new-api's ChannelOtherSettings (the `settings` field). */
  other: { disable_store?: boolean; [k: string]: unknown };
}

/** A channel target with its overrides (channel-index.ts sets them; a spread copy keeps them). */
export type OverriddenTarget = ChannelTarget & { overrides?: ChannelOverrides };

function objectOf(text: string | undefined): Record<string, unknown> | undefined {
  if (!text?.trim()) return undefined;
  try {
    const o = JSON.parse(text) as unknown;
    return o && typeof o === 'object' && !Array.isArray(o) ? (o as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The overrides of a snapshot channel; undefined when it has none (the common case). */
export function parseChannelOverrides(c: {
  paramOverride?: string;
  headerOverride?: string;
  setting?: string;
  settings?: string;
}): ChannelOverrides | undefined {
  const params = parseParamOverride(c.paramOverride);
  const rawHeaders = objectOf(c.headerOverride);
  const headers = rawHeaders
    ? Object.fromEntries(Object.entries(rawHeaders).filter((e): e is [string, string] => typeof e[1] === 'string'))
    : undefined;
  const setting = (objectOf(c.setting) ?? {}) as ChannelSetting;
  const other = objectOf(c.settings) ?? {};
  if (!params && !headers && Object.keys(setting).length === 0 && Object.keys(other).length === 0) return undefined;
  return { params, headers, setting, other };
}

/**
 * The call's headers after header_override and the param override's header operations (null
 * removes a header). Names are matched case-insensitively; "{api_key}" becomes the call's key.
 */
export function overrideHeaders(
  headers: Record<string, string>,
  override: Record<string, string> | undefined,
  edits: Record<string, string | null>,
  key: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  const byLower = new Map<string, string>();
  for (const [k, v] of Object.entries(headers)) {
    out[k] = v;
    byLower.set(k.toLowerCase(), k);
  }
  const put = (name: string, value: string | null) => {
    const existing = byLower.get(name.toLowerCase());
    if (existing !== undefined) delete out[existing];
    if (value === null) {
      byLower.delete(name.toLowerCase());
      return;
    }
    out[name] = value;
    byLower.set(name.toLowerCase(), name);
  };
  for (const [name, value] of Object.entries(override ?? {})) {
    const v = value.replaceAll('{api_key}', key);
    if (v.trim() !== '') put(name, v);
  }
  for (const [name, value] of Object.entries(edits)) put(name, value);
  return out;
}

function withPrompt(current: unknown, prompt: string): unknown {
  if (typeof current === 'string') return `${prompt}\n${current}`;
  if (Array.isArray(current)) return [{ type: 'text', text: prompt }, ...current];
  return current;
}

const SYSTEM_ROLES = new Set(['system', 'developer']);

/** The OpenAI chat request with the channel's system prompt (a copy; the input is shared). */
export function chatWithSystemPrompt(req: ChatRequest, s: ChannelSetting): ChatRequest {
  const prompt = s.system_prompt ?? '';
  if (!prompt) return req;
  const messages = Array.isArray(req.messages) ? req.messages : [];
  const at = messages.findIndex((m) => SYSTEM_ROLES.has(m.role));
  if (at < 0) return { ...req, messages: [{ role: 'system', content: prompt }, ...messages] };
  if (!s.system_prompt_override) return req;
  const next = [...messages];
  const m = messages[at] as ChatRequest['messages'][number];
  next[at] = { ...m, content: withPrompt(m.content, prompt) as typeof m.content };
  return { ...req, messages: next };
}

/** A client body in its own format with the channel's system prompt (a copy). */
export function bodyWithSystemPrompt(format: ClientFormat, body: Json, s: ChannelSetting): Json {
  const prompt = s.system_prompt ?? '';
  if (!prompt) return body;
  switch (format) {
    case 'openai':
      return chatWithSystemPrompt(body as unknown as ChatRequest, s) as unknown as Json;
    case 'claude':
      if (body.system === undefined || body.system === '' || (Array.isArray(body.system) && !body.system.length)) {
        return { ...body, system: prompt };
      }
      return s.system_prompt_override ? { ...body, system: withPrompt(body.system, prompt) as Json[string] } : body;
    case 'gemini': {
      const key = body.system_instruction !== undefined ? 'system_instruction' : 'systemInstruction';
      const current = body[key] as { parts?: unknown[] } | undefined;
      if (!current?.parts?.length) return { ...body, [key]: { parts: [{ text: prompt }] } };
      if (!s.system_prompt_override) return body;
      return { ...body, [key]: { ...current, parts: [{ text: prompt }, ...current.parts] } as Json[string] };
    }
    case 'responses':
      if (typeof body.instructions !== 'string' || body.instructions === '') return { ...body, instructions: prompt };
      return s.system_prompt_override ? { ...body, instructions: `${prompt}\n${body.instructions}` } : body;
    default:
      return body;
  }
}

/** A whole answer with its reasoning moved into the content, inside <think> tags. */
export function thinkingToContent(res: ChatResponse): ChatResponse {
  for (const c of res.choices ?? []) {
    const reasoning = c.message.reasoning_content;
    if (typeof reasoning !== 'string' || reasoning === '') continue;
    c.message.content = `<think>\n${reasoning}\n</think>\n${c.message.content ?? ''}`;
    delete c.message.reasoning_content;
    delete c.message.reasoning;
  }
  return res;
}

/**
 * A stream's chunks with reasoning turned into content: "<think>\n" before the first reasoning,
 * "\n</think>\n" before the first content after it (new-api's thinking_to_content).
 */
export function thinkingToContentStream(): (chunk: ChatChunk) => ChatChunk {
  let inThinking = false;
  return (chunk) => {
    for (const c of chunk.choices ?? []) {
      const d = c.delta;
      const reasoning = typeof d.reasoning_content === 'string' ? d.reasoning_content : '';
      delete d.reasoning_content;
      delete d.reasoning;
      const content = typeof d.content === 'string' ? d.content : '';
      let text = '';
      if (reasoning) {
        text += (inThinking ? '' : '<think>\n') + reasoning;
        inThinking = true;
      }
      if (content) {
        if (inThinking) text += '\n</think>\n';
        inThinking = false;
        text += content;
      }
      if (text) d.content = text;
    }
    return chunk;
  };
}
