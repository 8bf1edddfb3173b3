import { invalid } from '@aigw/common/errors';
import { CHANNEL_TYPES, isChannelType } from './channel-types.ts';

/** Channel statuses (spec 01 section 4). */
export const CHANNEL_STATUS = { enabled: 1, manuallyDisabled: 2, autoDisabled: 3 } as const;

/** Comma-separated, trimmed, unique names (models, groups). */
export function normaliseList(raw: string): string {
  return [
    ...new Set(
      raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ].join(',');
}

export const splitList = (raw: string): string[] => (raw ? raw.split(',').filter(Boolean) : []);

/** A trailing slash on base_url is stripped. */
export const normaliseBaseUrl = (url: string) => url.trim().replace(/\/+$/, '');

function checkJsonObject(raw: string, message: string, valuesAre: 'string' | 'status'): string {
  const text = raw.trim();
  if (text === '') return '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid(message);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid(message);
  for (const [k, v] of Object.entries(parsed)) {
    if (typeof v !== 'string') throw invalid(message);
    if (valuesAre === 'status' && (!/^[1-5]\d\d$/.test(k) || !/^[1-5]\d\d$/.test(v))) throw invalid(message);
  }
  return text;
}

/** model_mapping: a JSON object of model -> upstream model. */
export const checkModelMapping = (raw: string) => checkJsonObject(raw, '模型映射必须是合法的 JSON 格式！', 'string');

/** status_code_mapping: a JSON object of HTTP status -> HTTP status, e.g. {"400":"500"}. */
export const checkStatusCodeMapping = (raw: string) =>
  checkJsonObject(raw, '状态码复写必须是合法的 JSON 格式，例如 {"400":"500"}！', 'status');

export function checkType(type: number): number {
  if (!isChannelType(type)) throw invalid('未知的渠道类型');
  return type;
}

export function checkPriority(priority: number): number {
  if (!Number.isInteger(priority)) throw invalid('优先级必须是整数');
  if (priority < -999) throw invalid('优先级不能小于 -999');
  return priority;
}

export function checkWeight(weight: number): number {
  if (!Number.isInteger(weight) || weight < 0) throw invalid('权重必须是不小于 0 的整数');
  return weight;
}

export function checkStatus(status: number): number {
  if (status !== 1 && status !== 2 && status !== 3) throw invalid('无效的渠道状态');
  return status;
}

/** Checks one key against its type's format (spec 01 section 5 key hints). */
export function checkKey(type: number, key: string): string {
  const k = key.trim();
  if (k === '') throw invalid('请填写渠道名称和渠道密钥！');
  if (type === 41) {
    try {
      const sa = JSON.parse(k) as unknown;
      if (typeof sa !== 'object' || sa === null || Array.isArray(sa)) throw new Error('not an object');
    } catch {
      throw invalid('Vertex AI 的密钥必须是服务账号 JSON');
    }
    return k;
  }
  const parts = CHANNEL_TYPES[type]?.keyParts;
  if (parts) {
    const pieces =
      parts.sep === '-' ? [k.slice(0, k.lastIndexOf('-')), k.slice(k.lastIndexOf('-') + 1)] : k.split(parts.sep);
    if (pieces.length !== parts.parts.length || pieces.some((p) => p.trim() === '')) {
      throw invalid(`密钥格式错误，应为 ${parts.parts.map((p) => p.name).join(parts.sep)}`);
    }
  }
  return k;
}

/** Type 41's `other`: a region, or a JSON map of model -> region. */
export function checkOther(type: number, other: string): string {
  const o = other.trim();
  const byDefault = CHANNEL_TYPES[type]?.other?.default;
  if (o === '' && byDefault) return byDefault;
  if (type === 41) {
    if (o === '') throw invalid('请填写 Vertex AI 的区域（或区域 JSON）');
    if (o.startsWith('{')) {
      try {
        const map = JSON.parse(o) as unknown;
        if (typeof map !== 'object' || map === null || Object.values(map).some((v) => typeof v !== 'string'))
          throw new Error();
      } catch {
        throw invalid('区域 JSON 格式错误');
      }
    } else if (!/^[a-z0-9-]+$/.test(o)) throw invalid('区域格式错误');
  }
  return o;
}

/** The keys of a create request: one per non-empty line when batch, else the whole text. */
export function keysOf(type: number, key: string, batch: boolean): string[] {
  if (!batch) return [checkKey(type, key)];
  const keys = key
    .split('\n')
    .map((k) => k.trim())
    .filter(Boolean);
  if (keys.length === 0) throw invalid('请填写渠道名称和渠道密钥！');
  if (keys.length > 1000) throw invalid('一次最多批量添加 1000 个渠道');
  return keys.map((k) => checkKey(type, k));
}

/** A multi-key mode: '' (one key), 'random' or 'polling' (in turn). */
export function checkMultiKeyMode(mode: string): '' | 'random' | 'polling' {
  const m = mode.trim();
  if (m !== '' && m !== 'random' && m !== 'polling') throw invalid('多密钥模式只能是 random（随机）或 polling（轮询）');
  return m;
}

/** The keys of a multi-key channel, one per line, each checked; returned one per line. */
export function multiKeysOf(type: number, text: string): string[] {
  if (type === 41) throw invalid('Vertex AI 渠道不支持多密钥');
  const keys = [
    ...new Set(
      text
        .split('\n')
        .map((k) => k.trim())
        .filter(Boolean),
    ),
  ];
  if (keys.length === 0) throw invalid('请填写渠道名称和渠道密钥！');
  if (keys.length > 1000) throw invalid('一个渠道最多 1000 个密钥');
  return keys.map((k) => checkKey(type, k));
}
