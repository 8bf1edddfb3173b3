/**
 * Key and token checks of reference-behaviour step 1-2: key forms, token status, expiry, quota,
 * IP allow-list, user status, group and model limits.
 */
import type { BlockList } from 'node:net';
import {
  GroupRefused,
  type GroupSettings,
  groupSettings,
  ipAllowed,
  parseAllowIps,
  type ResolvedGroup,
  resolveGroup as resolveCommonGroup,
} from '@aigw/common';
import { RelayError } from './relay-error.ts';

/** The allow-list helpers live in @aigw/common (the tasks service checks the same lists). */
export { ipAllowed, parseAllowIps };

/** What the relay keeps of a token (from billing's LookupToken). */
export interface TokenInfo {
  id: number;
  userId: number;
  name: string;
  status: number;
  remainQuota: number;
  usedQuota: number;
  unlimitedQuota: boolean;
  expiredTime: number;
  /** Null: every address. */
  allowIps: BlockList | null;
  /** Null: every model. */
  modelLimits: Set<string> | null;
  group: string;
  /** The token's own requests and tokens per minute and concurrent requests (0 no limit). */
  rpmLimit?: number;
  tpmLimit?: number;
  concurrencyLimit?: number;
  /** Daily, weekly and monthly quota budgets (0 none); billing enforces them at pre-consume. */
  budgets?: { daily: number; weekly: number; monthly: number };
  /** An `auto` token: when a group's channels all fail, retry in the next auto group. */
  crossGroupRetry?: boolean;
}

/** Whether a token has a period budget: its requests always pre-consume (never skip). */
export const hasBudget = (t: TokenInfo | undefined): boolean =>
  Boolean(t?.budgets && (t.budgets.daily || t.budgets.weekly || t.budgets.monthly));

/**
 * The error code of billing's pre-consume refusal (its message names what ran out: 用户额度不足,
 * 令牌额度不足, or a token budget: 令牌每日预算不足, 令牌每周预算不足, 令牌每月预算不足).
 */
export function quotaRefusalCode(message: string): string {
  if (message === '令牌额度不足') return 'insufficient_token_quota';
  if (/^令牌.+预算不足$/.test(message)) return 'token_budget_exceeded';
  return 'insufficient_user_quota';
}

/** What the relay keeps of a user (from the users service). */
export interface UserInfo {
  id: number;
  username: string;
  group: string;
  role: number;
  status: number;
  deleted: boolean;
}

export const ADMIN_ROLE = 10;

/** The key of a request: `Authorization: Bearer sk-...`, `x-api-key`, `x-goog-api-key` or `?key=`. */
export function parseKey(raw: string | undefined): { key: string; pinnedChannelId: number } | undefined {
  if (!raw) return undefined;
  let k = raw
    .trim()
    .replace(/^bearer(\s+|$)/i, '')
    .trim();
  if (k.startsWith('sk-')) k = k.slice(3);
  if (!k) return undefined;
  // sk-KEY-CHANNELID pins a channel (admins only).
  const dash = k.indexOf('-');
  if (dash > 0) {
    const id = Number(k.slice(dash + 1));
    return { key: k.slice(0, dash), pinnedChannelId: Number.isInteger(id) && id > 0 ? id : 0 };
  }
  return { key: k, pinnedChannelId: 0 };
}

/** Token checks; throws RelayError with the status the client gets. */
export function checkToken(t: TokenInfo, nowSeconds: number): void {
  if (t.status === 3 || (t.expiredTime !== -1 && t.expiredTime > 0 && t.expiredTime < nowSeconds)) {
    throw new RelayError(401, '该令牌已过期', 'token_expired');
  }
  if (t.status === 4 || (!t.unlimitedQuota && t.remainQuota <= 0))
    throw new RelayError(401, '该令牌额度已用尽', 'token_quota_exhausted');
  if (t.status !== 1) throw new RelayError(401, '该令牌状态不可用', 'token_disabled');
}

export function checkUser(u: UserInfo | undefined): asserts u is UserInfo {
  if (!u || u.deleted) throw new RelayError(401, '用户不存在或已注销', 'user_not_found');
  if (u.status !== 1) throw new RelayError(403, '用户已被封禁', 'user_banned');
}

export function checkModel(t: TokenInfo | undefined, model: string): void {
  if (!model) throw new RelayError(400, '未指定模型名称，模型名称不能为空', 'model_required');
  if (t?.modelLimits && !t.modelLimits.has(model))
    throw new RelayError(403, `该令牌无权访问模型 ${model}`, 'model_not_allowed');
}

/** The group rules live in @aigw/common (the tasks service resolves groups the same way). */
export { type GroupSettings, groupSettings, type ResolvedGroup };

/** resolveGroup of @aigw/common with its refusal as a RelayError (403 in each API's shape). */
export function resolveGroup(
  requested: string,
  user: UserInfo,
  s: GroupSettings,
  serves: (group: string) => boolean = () => true,
): ResolvedGroup {
  try {
    return resolveCommonGroup(requested, user, s, serves);
  } catch (err) {
    if (err instanceof GroupRefused) throw new RelayError(403, err.message, err.reason);
    throw err;
  }
}
