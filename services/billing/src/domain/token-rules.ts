import { randomInt } from 'node:crypto';
import { isIP } from 'node:net';
import { invalid } from '@aigw/common/errors';

const ALPHANUMERIC = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Random [0-9a-zA-Z] text from a cryptographic source. */
export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

/** A new token key: 48 alphanumeric characters, stored without the sk- prefix. */
export const newTokenKey = () => randomAlphanumeric(48);

/** Token statuses (spec 02 section 4). */
export const TOKEN_STATUS = { enabled: 1, disabled: 2, expired: 3, exhausted: 4 } as const;

/** The status a token shows: a stored enabled status turns expired or exhausted when due. */
export function effectiveStatus(
  t: { status: number; expired_time: number; unlimited_quota: boolean },
  remain: number,
  nowSec: number,
): number {
  if (t.status !== TOKEN_STATUS.enabled) return t.status;
  if (t.expired_time !== -1 && t.expired_time <= nowSec) return TOKEN_STATUS.expired;
  if (!t.unlimited_quota && remain <= 0) return TOKEN_STATUS.exhausted;
  return TOKEN_STATUS.enabled;
}

function validCidr(entry: string): boolean {
  const slash = entry.indexOf('/');
  if (slash < 0) return isIP(entry) !== 0;
  const ip = entry.slice(0, slash);
  const bits = entry.slice(slash + 1);
  const family = isIP(ip);
  if (family === 0 || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** Normalises an IP allow-list (one IP or CIDR per line; commas accepted too) and validates it. */
export function normaliseAllowIps(raw: string): string {
  const entries = raw
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
  for (const e of entries) if (!validCidr(e)) throw invalid(`IP 白名单格式错误：${e}`);
  return entries.join('\n');
}

/** Normalises a model list to comma-separated, trimmed, unique names. */
export function normaliseModelList(raw: string): string {
  return [
    ...new Set(
      raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ].join(',');
}

/** Validates a token name. */
export function checkTokenName(name: string, required: boolean): string {
  const n = name.trim();
  if (required && n === '') throw invalid('令牌名称不能为空');
  if ([...n].length > 50) throw invalid('令牌名称过长');
  return n;
}

/** Validates an expiry: -1 (never) or a future unix time in seconds. */
export function checkExpiry(expiredTime: number, nowSec: number): number {
  if (!Number.isInteger(expiredTime) || (expiredTime < 0 && expiredTime !== -1)) throw invalid('过期时间格式错误！');
  if (expiredTime !== -1 && expiredTime <= nowSec) throw invalid('过期时间不能早于当前时间');
  return expiredTime;
}

/** Validates a token quota. */
export function checkRemainQuota(remain: number): number {
  if (!Number.isInteger(remain) || remain < 0) throw invalid('额度必须为非负整数');
  return remain;
}

/** Validates a token group against the usable groups (empty means the owner's group). */
export function checkGroup(group: string, usable: Record<string, string>): string {
  const g = group.trim();
  if (g !== '' && !Object.hasOwn(usable, g)) throw invalid(`分组 ${g} 不可用`);
  return g;
}

/** The extra names of a batch: `name-xxxxxx` (a random 6-character suffix). */
/** Maximum of a token's RPM, TPM and concurrency limits (an int32 on the wire). */
export const MAX_TOKEN_LIMIT = 1_000_000_000;

/** A token's RPM, TPM or concurrent-request limit: a whole number from 0 (no limit). */
export function checkTokenLimit(value: number, label: string): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_TOKEN_LIMIT)
    throw invalid(`${label}必须是 0 到 ${MAX_TOKEN_LIMIT} 之间的整数（0 表示不限制）`);
  return value;
}

export function batchNames(name: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => (i === 0 ? name : `${name}-${randomAlphanumeric(6)}`));
}
