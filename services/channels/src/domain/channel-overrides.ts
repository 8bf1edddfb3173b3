/**
 * The per-channel overrides (new-api's channel fields), checked when a channel is saved so that a
 * bad value is refused then, never at request time: param_override, header_override, setting and
 * settings. Each is stored as the JSON text the admin gave ("" when unset).
 */
import { invalid } from '@aigw/common/errors';

type JsonObject = Record<string, unknown>;

function objectOf(raw: string, message: string): JsonObject | undefined {
  const text = raw.trim();
  if (text === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid(message);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid(message);
  return parsed as JsonObject;
}

/** The operation modes of new-api's param_override `operations` format. */
export const PARAM_OPERATION_MODES = new Set([
  'set',
  'delete',
  'move',
  'copy',
  'prepend',
  'append',
  'trim_prefix',
  'trim_suffix',
  'ensure_prefix',
  'ensure_suffix',
  'trim_space',
  'to_lower',
  'to_upper',
  'replace',
  'regex_replace',
  'return_error',
  'set_header',
  'delete_header',
]);

/** The comparison modes of an operation's conditions. */
export const CONDITION_MODES = new Set(['full', 'prefix', 'suffix', 'contains', 'gt', 'gte', 'lt', 'lte']);

const PARAM_MESSAGE = '参数覆盖必须是合法的 JSON 格式！';

function checkOperation(op: unknown, i: number): void {
  const where = `参数覆盖 operations[${i}]`;
  if (typeof op !== 'object' || op === null || Array.isArray(op)) throw invalid(`${where} 必须是对象`);
  const o = op as JsonObject;
  if (typeof o.mode !== 'string' || !PARAM_OPERATION_MODES.has(o.mode)) {
    throw invalid(`${where} 的 mode 无效：${String(o.mode)}`);
  }
  for (const k of ['path', 'from', 'to', 'logic'] as const) {
    if (o[k] !== undefined && typeof o[k] !== 'string') throw invalid(`${where} 的 ${k} 必须是字符串`);
  }
  if (o.keep_origin !== undefined && typeof o.keep_origin !== 'boolean') {
    throw invalid(`${where} 的 keep_origin 必须是布尔值`);
  }
  if (o.logic !== undefined && !['AND', 'OR'].includes(String(o.logic).toUpperCase())) {
    throw invalid(`${where} 的 logic 只能是 AND 或 OR`);
  }
  const needsPath = !['move', 'copy', 'return_error'].includes(o.mode);
  if (needsPath && (typeof o.path !== 'string' || o.path.trim() === '')) throw invalid(`${where} 缺少 path`);
  if ((o.mode === 'move' || o.mode === 'copy') && (!o.from || !o.to)) throw invalid(`${where} 需要 from 和 to`);
  if (o.mode === 'regex_replace') {
    try {
      new RegExp(String(o.from ?? ''));
    } catch {
      throw invalid(`${where} 的正则表达式无效`);
    }
  }
  if (o.conditions !== undefined) {
    if (!Array.isArray(o.conditions)) throw invalid(`${where} 的 conditions 必须是数组`);
    for (const c of o.conditions) {
      const cond = c as JsonObject;
      if (typeof c !== 'object' || c === null || typeof cond.path !== 'string' || typeof cond.mode !== 'string') {
        throw invalid(`${where} 的条件需要 path 和 mode`);
      }
      if (!CONDITION_MODES.has(cond.mode.toLowerCase())) throw invalid(`${where} 的条件 mode 无效：${cond.mode}`);
    }
  }
}

/**
 * param_override: a JSON object whose top-level keys are set in the upstream body as given, or
 * (new-api's operations format) {"operations": [{path, mode, value, keep_origin, from, to,
 * conditions, logic}]} for nested paths, removal and the rest.
 */
export function checkParamOverride(raw: string): string {
  const o = objectOf(raw, PARAM_MESSAGE);
  if (!o) return '';
  if ('operations' in o) {
    if (!Array.isArray(o.operations)) throw invalid('参数覆盖的 operations 必须是数组');
    o.operations.forEach(checkOperation);
  }
  return raw.trim();
}

/** header_override: header name -> string value ("{api_key}" is replaced by the channel's key). */
export function checkHeaderOverride(raw: string): string {
  const o = objectOf(raw, '请求头覆盖必须是合法的 JSON 格式！');
  if (!o) return '';
  for (const [name, value] of Object.entries(o)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw invalid(`请求头覆盖中的请求头名称无效：${name}`);
    if (typeof value !== 'string') throw invalid(`请求头覆盖中 ${name} 的值必须是字符串`);
    if (/[\r\n]/.test(value)) throw invalid(`请求头覆盖中 ${name} 的值不能包含换行`);
  }
  return raw.trim();
}

/** The fields of `setting` (new-api's ChannelSettings) and their types. */
const SETTING_FIELDS: Record<string, 'string' | 'boolean'> = {
  force_format: 'boolean',
  thinking_to_content: 'boolean',
  proxy: 'string',
  pass_through_body_enabled: 'boolean',
  system_prompt: 'string',
  system_prompt_override: 'boolean',
};

/** setting: system_prompt, system_prompt_override, proxy (http, https or socks5 URL), force_format, ... */
export function checkSetting(raw: string): string {
  const o = objectOf(raw, '渠道额外设置必须是合法的 JSON 格式！');
  if (!o) return '';
  for (const [k, v] of Object.entries(o)) {
    const type = SETTING_FIELDS[k];
    if (!type) throw invalid(`渠道额外设置中有未知字段：${k}`);
    if (typeof v !== type) throw invalid(`渠道额外设置中 ${k} 必须是${type === 'boolean' ? '布尔值' : '字符串'}`);
  }
  const proxy = typeof o.proxy === 'string' ? o.proxy.trim() : '';
  if (proxy !== '') {
    let url: URL;
    try {
      url = new URL(proxy);
    } catch {
      throw invalid('代理地址格式错误，例如 http://127.0.0.1:7890');
    }
    if (!['http:', 'https:'].includes(url.protocol)) throw invalid('代理地址只支持 http 或 https');
  }
  return raw.trim();
}

/** The fields of `settings` (new-api's ChannelOtherSettings) this platform reads, and their types. */
const OTHER_SETTING_FIELDS: Record<string, 'string' | 'boolean'> = {
  azure_responses_version: 'string',
  vertex_key_type: 'string',
  openrouter_enterprise: 'boolean',
  claude_beta_query: 'boolean',
  allow_service_tier: 'boolean',
  allow_safety_identifier: 'boolean',
  disable_store: 'boolean',
};

/** settings: a JSON object of other settings; known fields must have their type. */
export function checkOtherSettings(raw: string): string {
  const o = objectOf(raw, '其他设置必须是合法的 JSON 格式！');
  if (!o) return '';
  for (const [k, v] of Object.entries(o)) {
    const type = OTHER_SETTING_FIELDS[k];
    if (type && typeof v !== type) throw invalid(`其他设置中 ${k} 必须是${type === 'boolean' ? '布尔值' : '字符串'}`);
  }
  if (typeof o.azure_responses_version === 'string' && !/^[\w.-]*$/.test(o.azure_responses_version)) {
    throw invalid('azure_responses_version 格式错误，例如 preview 或 2025-04-01-preview');
  }
  return raw.trim();
}
