/**
 * The groups a user may pick, as GET /api/user/self/groups, the token form and the pricing page
 * show them (new-api's GetUserGroups and GetPricing): UserUsableGroups changed by the user
 * group's special usable groups, each priced group with the ratio this user pays in it
 * (GroupGroupRatio, else GroupRatio), and `auto` when offered.
 */
import {
  AUTO_GROUP,
  type GroupGroupRatio,
  groupRatioFor,
  type OptionsCache,
  type SpecialUsableGroups,
  usableGroupsFor,
} from '@aigw/common';
import { invalid } from '@aigw/common/errors';

type Options = Pick<OptionsCache, 'json'>;

/** Who picks: the user's own group and role. */
export interface GroupOwner {
  group: string;
  role: number;
}

function read(o: Options) {
  return {
    usable: o.json<Record<string, string>>('UserUsableGroups'),
    special: o.json<SpecialUsableGroups>('group_ratio_setting.group_special_usable_group'),
    groupRatio: o.json<Record<string, number>>('GroupRatio'),
    groupGroupRatio: o.json<GroupGroupRatio>('GroupGroupRatio'),
  };
}

/** Group name -> description of every group the user may pick (usableGroupsFor). */
export function selectableGroups(user: GroupOwner, o: Options): Record<string, string> {
  const { usable, special, groupRatio } = read(o);
  return usableGroupsFor(user.group, usable, special, { role: user.role, groupRatio });
}

/**
 * GET /api/user/self/groups: {group: {ratio, desc}} for each priced group the user may pick
 * (the ratio this user pays there), and `auto` with ratio 自动 when it is offered.
 */
export function userGroupsView(user: GroupOwner, o: Options): Record<string, { ratio: number | string; desc: string }> {
  const { groupRatio, groupGroupRatio } = read(o);
  const usable = selectableGroups(user, o);
  const out: Record<string, { ratio: number | string; desc: string }> = {};
  for (const g of Object.keys(groupRatio)) {
    const desc = usable[g];
    if (desc !== undefined) out[g] = { ratio: groupRatioFor(user.group, g, groupRatio, groupGroupRatio), desc };
  }
  const auto = usable[AUTO_GROUP];
  if (auto !== undefined && !out[AUTO_GROUP]) out[AUTO_GROUP] = { ratio: '自动', desc: auto };
  return out;
}

/** The pricing page's group ratios for a user: what they pay in each group they may pick. */
export function pricingGroupRatios(user: GroupOwner, o: Options): Record<string, number> {
  const { groupRatio, groupGroupRatio } = read(o);
  const usable = selectableGroups(user, o);
  const out: Record<string, number> = {};
  for (const g of Object.keys(groupRatio)) {
    if (Object.hasOwn(usable, g)) out[g] = groupRatioFor(user.group, g, groupRatio, groupGroupRatio);
  }
  return out;
}

/** A token's group: empty (the owner's), or one the owner may pick; refused with a 400 otherwise. */
export function checkTokenGroup(group: string | undefined, user: GroupOwner, o: Options): void {
  const g = group?.trim();
  if (!g || g === user.group) return;
  if (!Object.hasOwn(selectableGroups(user, o), g)) throw invalid(`分组 ${g} 不可用`);
}
