/**
 * Channel affinity (new-api's channel_affinity_setting): the requests of one session stick to the
 * channel that served the session before, while it serves the model (enabled, in the group), so
 * that the provider's prompt cache keeps hitting. A session is named by a rule: a body field
 * (`gjson` path: OpenAI `prompt_cache_key`, Claude `metadata.user_id`) or a header (Codex's
 * `session_id`), for the rule's models and paths. Where the session went is kept in Redis
 * (data/channel-affinity-store.ts), shared by the relay's replicas, for the rule's TTL.
 */
import { createHash } from 'node:crypto';
import type { Json } from './protocols/openai.ts';

/** Where a rule reads the session's name (new-api's key source types, the two the relay has). */
export interface AffinityKeySource {
  type: 'gjson' | 'request_header' | string;
  /** request_header: the header's name. */
  key?: string;
  /** gjson: a dotted path into the JSON body. */
  path?: string;
}

/** One rule, with new-api's field names. */
export interface AffinityRule {
  name: string;
  model_regex?: string[];
  path_regex?: string[];
  user_agent_include?: string[];
  key_sources: AffinityKeySource[];
  value_regex?: string;
  ttl_seconds?: number;
  include_using_group?: boolean;
  include_model_name?: boolean;
  include_rule_name?: boolean;
}

export interface AffinitySettings {
  enabled: boolean;
  /** After another channel served the session (the kept one failed), the session moves to it. */
  switchOnSuccess: boolean;
  /** While the kept channel is disabled, the session is not moved (it returns when re-enabled). */
  keepOnChannelDisabled: boolean;
  defaultTtlSeconds: number;
  rules: AffinityRule[];
}

/**
 * new-api's default rules (Codex: `prompt_cache_key` on /v1/responses for gpt-* models; Claude
 * Code: `metadata.user_id` on /v1/messages for claude-* models), Codex's `session_id` header as a
 * second source, and one for chat clients that send a `prompt_cache_key`.
 */
export const DEFAULT_AFFINITY_RULES: AffinityRule[] = [
  {
    name: 'codex cli trace',
    model_regex: ['^gpt-.*$'],
    path_regex: ['/v1/responses'],
    key_sources: [
      { type: 'gjson', path: 'prompt_cache_key' },
      { type: 'request_header', key: 'session_id' },
    ],
    include_using_group: true,
    include_rule_name: true,
  },
  {
    name: 'claude cli trace',
    model_regex: ['^claude-.*$'],
    path_regex: ['/v1/messages'],
    key_sources: [{ type: 'gjson', path: 'metadata.user_id' }],
    include_using_group: true,
    include_rule_name: true,
  },
  {
    name: 'openai prompt cache key',
    path_regex: ['/v1/chat/completions'],
    key_sources: [{ type: 'gjson', path: 'prompt_cache_key' }],
    include_using_group: true,
    include_model_name: true,
    include_rule_name: true,
  },
];

/** A request as affinity rules see it. */
export interface AffinityInput {
  path: string;
  model: string;
  group: string;
  body: Json | FormData;
  header(name: string): string | undefined;
}

/** The session a request belongs to: its Redis key and how long it is kept. */
export interface AffinityKey {
  key: string;
  ttlSeconds: number;
  rule: string;
}

const compiled = new Map<string, RegExp | null>();
function regex(source: string): RegExp | null {
  let r = compiled.get(source);
  if (r === undefined) {
    try {
      r = new RegExp(source);
    } catch {
      r = null; // a rule with a bad pattern matches nothing
    }
    if (compiled.size > 1000) compiled.clear();
    compiled.set(source, r);
  }
  return r;
}

const anyMatches = (patterns: string[] | undefined, value: string) =>
  !patterns?.length || patterns.some((p) => regex(p)?.test(value) ?? false);

function at(body: Json, path: string): unknown {
  let v: unknown = body;
  for (const part of path.split('.')) {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
    v = (v as Json)[part];
  }
  return v;
}

function sourceValue(src: AffinityKeySource, input: AffinityInput): string | undefined {
  if (src.type === 'gjson' && src.path && !(input.body instanceof FormData)) {
    const v = at(input.body, src.path);
    return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
  }
  if (src.type === 'request_header' && src.key) return input.header(src.key.toLowerCase());
  return undefined;
}

/** The first rule that names the request's session, as a bounded key; undefined when none does. */
export function affinityKey(settings: AffinitySettings, input: AffinityInput): AffinityKey | undefined {
  if (!settings.enabled) return undefined;
  for (const rule of settings.rules) {
    if (!rule || !Array.isArray(rule.key_sources)) continue;
    if (!anyMatches(rule.model_regex, input.model) || !anyMatches(rule.path_regex, input.path)) continue;
    if (rule.user_agent_include?.length) {
      const ua = input.header('user-agent') ?? '';
      if (!rule.user_agent_include.some((s) => ua.includes(s))) continue;
    }
    let value: string | undefined;
    for (const src of rule.key_sources) {
      value = sourceValue(src, input);
      if (value) break;
    }
    if (!value) continue;
    if (rule.value_regex && !(regex(rule.value_regex)?.test(value) ?? false)) continue;
    const parts = [
      rule.include_rule_name ? rule.name : '',
      rule.include_using_group ? input.group : '',
      rule.include_model_name ? input.model : '',
      value,
    ];
    const digest = createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 32);
    const ttl = rule.ttl_seconds && rule.ttl_seconds > 0 ? rule.ttl_seconds : settings.defaultTtlSeconds;
    return { key: digest, ttlSeconds: Math.max(1, ttl), rule: rule.name };
  }
  return undefined;
}
