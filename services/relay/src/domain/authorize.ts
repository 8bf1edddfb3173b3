/**
 * Key and token checks of reference-behaviour step 1-2: key forms, token status, expiry, quota,
 * IP allow-list, user status, group and model limits.
 */
import type { BlockList } from 'node:net';
import {
  AUTO_GROUP,
  autoGroupsFor,
  ipAllowed,
  type JsonOptionKey,
  parseAllowIps,
  type SpecialUsableGroups,
  usableGroupsFor,
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

/** The group options a request's group is resolved with (services/common/src/groups.ts). */
export interface GroupSettings {
  /** UserUsableGroups. */
  usable: Record<string, string>;
  /** group_ratio_setting.group_special_usable_group. */
  special: SpecialUsableGroups;
  groupRatio: Record<string, number>;
  /** AutoGroups. */
  autoGroups: unknown;
}

/** The group settings from the options (read per request: the cache parses each once per change). */
export function groupSettings(
  options: { json<T>(key: JsonOptionKey): T },
  groupRatio: Record<string, number>,
): GroupSettings {
  return {
    usable: options.json<Record<string, string>>('UserUsableGroups'),
    special: options.json<SpecialUsableGroups>('group_ratio_setting.group_special_usable_group'),
    groupRatio,
    autoGroups: options.json<unknown>('AutoGroups'),
  };
}

/** The group a request runs in and, for an `auto` token, the groups it may walk. */
export interface ResolvedGroup {
  group: string;
  /** Set for an `auto` token: AutoGroups that the user may use, in order. */
  autoGroups?: string[];
}

/**
 * The group a request runs in: the token's group (or the user's). A group other than the user's
 * own must be usable by the user (UserUsableGroups with the user group's special usable groups;
 * every priced group for admins) and priced in GroupRatio. `auto` walks AutoGroups and takes the
 * first group with a channel for the model (`serves`).
 */
export function resolveGroup(
  requested: string,
  user: UserInfo,
  s: GroupSettings,
  serves: (group: string) => boolean = () => true,
): ResolvedGroup {
  const group = requested || user.group || 'default';
  const usable = usableGroupsFor(user.group, s.usable, s.special, { role: user.role, groupRatio: s.groupRatio });
  if (group !== user.group && !Object.hasOwn(usable, group)) {
    throw new RelayError(403, `无权访问 ${group} 分组`, 'group_forbidden');
  }
  if (group === AUTO_GROUP && !Object.hasOwn(s.groupRatio, AUTO_GROUP)) {
    const autoGroups = autoGroupsFor(s.autoGroups, usable, s.groupRatio);
    const first = autoGroups.find(serves) ?? autoGroups[0];
    if (!first) throw new RelayError(403, '自动分组未启用或没有可用的分组', 'group_forbidden');
    return { group: first, autoGroups };
  }
  if (!Object.hasOwn(s.groupRatio, group)) throw new RelayError(403, `分组 ${group} 已被弃用`, 'group_deprecated');
  return { group };
}
