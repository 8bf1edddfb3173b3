/**
 * Groups as new-api has them (issue 25.4), one set of rules for the relay, the tasks service,
 * billing (token groups) and the gateway (pricing page, GET /api/user/self/groups):
 * - GroupGroupRatio {userGroup: {usingGroup: ratio}}: what a user of one group pays for another
 *   group, in place of GroupRatio[usingGroup];
 * - group_ratio_setting.group_special_usable_group {userGroup: {"group" | "+:group" | "-:group":
 *   description}}: extra groups (or, with "-:", fewer) that users of one group may pick beyond
 *   UserUsableGroups;
 * - the `auto` token group: AutoGroups (an ordered list) walked for the first group with a
 *   channel for the model.
 */
import type { JsonOptionKey } from './option-catalogue.ts';

/** The token group that walks AutoGroups. */
export const AUTO_GROUP = 'auto';

/** The role from which every priced group is usable (new-api's admins). */
const ADMIN_ROLE = 10;

export type GroupGroupRatio = Record<string, Record<string, number>>;
export type SpecialUsableGroups = Record<string, Record<string, string>>;

/**
 * The ratio a user of `userGroup` pays in `usingGroup`: GroupGroupRatio's entry when there is
 * one, else GroupRatio's (1 for a group GroupRatio does not know).
 */
export function groupRatioFor(
  userGroup: string,
  usingGroup: string,
  groupRatio: Record<string, number>,
  groupGroupRatio: GroupGroupRatio | undefined,
): number {
  const special = groupGroupRatio?.[userGroup];
  if (special && Object.hasOwn(special, usingGroup)) {
    const r = special[usingGroup];
    if (typeof r === 'number' && Number.isFinite(r) && r >= 0) return r;
  }
  const r = groupRatio[usingGroup];
  return typeof r === 'number' ? r : 1;
}

/**
 * The groups a user may pick, name -> description: UserUsableGroups, changed by the user group's
 * special usable groups ("-:g" removes g, "+:g" or "g" adds it), plus the user's own group
 * (described as 用户分组 when nothing else describes it); administrators also get every group
 * GroupRatio prices. `auto` is usable only when one of these lists names it.
 */
export function usableGroupsFor(
  userGroup: string,
  usable: Record<string, string>,
  special: SpecialUsableGroups | undefined,
  opts: { role?: number; groupRatio?: Record<string, number> } = {},
): Record<string, string> {
  const out: Record<string, string> = { ...usable };
  const extra = userGroup ? special?.[userGroup] : undefined;
  if (extra && typeof extra === 'object') {
    for (const [name, desc] of Object.entries(extra)) {
      if (name.startsWith('-:')) delete out[name.slice(2)];
      else out[name.startsWith('+:') ? name.slice(2) : name] = String(desc);
    }
  }
  if (userGroup && !Object.hasOwn(out, userGroup)) out[userGroup] = '用户分组';
  if ((opts.role ?? 0) >= ADMIN_ROLE && opts.groupRatio) {
    for (const g of Object.keys(opts.groupRatio)) if (!Object.hasOwn(out, g)) out[g] = usable[g] ?? g;
  }
  return out;
}

/**
 * Every group some user may pick (UserUsableGroups, the groups special usable groups add, and the
 * priced groups administrators may use): a token outside it is refused whoever owns it.
 */
export function anyUsableGroups(
  usable: Record<string, string>,
  special: SpecialUsableGroups | undefined,
  groupRatio: Record<string, number>,
): Record<string, string> {
  const out: Record<string, string> = { ...usable };
  for (const g of Object.keys(groupRatio)) out[g] ??= g;
  for (const extra of Object.values(special ?? {})) {
    if (!extra || typeof extra !== 'object') continue;
    for (const [name, desc] of Object.entries(extra)) {
      if (!name.startsWith('-:')) out[name.startsWith('+:') ? name.slice(2) : name] ??= String(desc);
    }
  }
  return out;
}

/**
 * The groups an `auto` token walks, in AutoGroups' order: those the user may pick and GroupRatio
 * prices, each once (`auto` itself never).
 */
export function autoGroupsFor(
  autoGroups: unknown,
  usable: Record<string, string>,
  groupRatio: Record<string, number>,
): string[] {
  if (!Array.isArray(autoGroups)) return [];
  const out: string[] = [];
  for (const g of autoGroups) {
    if (typeof g !== 'string' || !g || g === AUTO_GROUP || out.includes(g)) continue;
    if (Object.hasOwn(usable, g) && Object.hasOwn(groupRatio, g)) out.push(g);
  }
  return out;
}

/** The group options a request's group is resolved with. */
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

/** A token group the user may not run in (a 403 in each API's shape); `reason` is the error code. */
export class GroupRefused extends Error {
  constructor(
    message: string,
    readonly reason: 'group_forbidden' | 'group_deprecated',
  ) {
    super(message);
    this.name = 'GroupRefused';
  }
}

/**
 * The group a request runs in: the token's group (or the user's). A group other than the user's
 * own must be usable by the user (UserUsableGroups with the user group's special usable groups;
 * every priced group for admins) and priced in GroupRatio. `auto` walks AutoGroups and takes the
 * first group with a channel for the model (`serves`; callers whose channel lookup is async walk
 * `autoGroups` themselves). Throws GroupRefused.
 */
export function resolveGroup(
  requested: string,
  user: { group: string; role: number },
  s: GroupSettings,
  serves: (group: string) => boolean = () => true,
): ResolvedGroup {
  const group = requested || user.group || 'default';
  const usable = usableGroupsFor(user.group, s.usable, s.special, { role: user.role, groupRatio: s.groupRatio });
  if (group !== user.group && !Object.hasOwn(usable, group)) {
    throw new GroupRefused(`无权访问 ${group} 分组`, 'group_forbidden');
  }
  if (group === AUTO_GROUP && !Object.hasOwn(s.groupRatio, AUTO_GROUP)) {
    const autoGroups = autoGroupsFor(s.autoGroups, usable, s.groupRatio);
    const first = autoGroups.find(serves) ?? autoGroups[0];
    if (!first) throw new GroupRefused('自动分组未启用或没有可用的分组', 'group_forbidden');
    return { group: first, autoGroups };
  }
  if (!Object.hasOwn(s.groupRatio, group)) throw new GroupRefused(`分组 ${group} 已被弃用`, 'group_deprecated');
  return { group };
}

/** GroupGroupRatio's shape, for the check on save: throws a message naming what is wrong. */
export function checkGroupGroupRatio(value: unknown): void {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error('应为 {"用户分组": {"使用分组": 倍率}}');
  }
  for (const [userGroup, m] of Object.entries(value)) {
    if (!m || typeof m !== 'object' || Array.isArray(m)) throw new Error(`分组 ${userGroup} 的值应为对象`);
    for (const [g, r] of Object.entries(m)) {
      if (typeof r !== 'number' || !Number.isFinite(r) || r < 0) {
        throw new Error(`分组 ${userGroup} 使用 ${g} 的倍率必须是非负数`);
      }
    }
  }
}

/** group_special_usable_group's shape, for the check on save. */
export function checkSpecialUsableGroups(value: unknown): void {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error('应为 {"用户分组": {"分组": "描述"}}（"+:分组" 添加，"-:分组" 移除）');
  }
  for (const [userGroup, m] of Object.entries(value)) {
    if (!m || typeof m !== 'object' || Array.isArray(m)) throw new Error(`分组 ${userGroup} 的值应为对象`);
    for (const [g, d] of Object.entries(m)) {
      if (typeof d !== 'string') throw new Error(`分组 ${userGroup} 中 ${g} 的描述必须是字符串`);
      if (g === '' || g === '+:' || g === '-:') throw new Error(`分组 ${userGroup} 中有空的分组名`);
    }
  }
}

/** AutoGroups' shape: a list of group names. */
export function checkAutoGroups(value: unknown): void {
  if (!Array.isArray(value) || value.some((g) => typeof g !== 'string' || g.trim() === '')) {
    throw new Error('应为分组名的列表，例如 ["default","vip"]');
  }
  if (value.includes(AUTO_GROUP)) throw new Error('不能包含 auto 本身');
}
