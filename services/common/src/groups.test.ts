import { describe, expect, it } from 'vitest';
import { autoGroupsFor, groupRatioFor, usableGroupsFor } from './groups.ts';

const groupRatio = { default: 1, vip: 2, svip: 3 };

describe('groups as new-api has them', () => {
  it('when GroupGroupRatio names the user group and the group used, then its ratio replaces GroupRatio', () => {
    const gg = { vip: { default: 0.5, svip: 0 } };
    expect(groupRatioFor('vip', 'default', groupRatio, gg)).toBe(0.5);
    expect(groupRatioFor('vip', 'svip', groupRatio, gg)).toBe(0);
    expect(groupRatioFor('vip', 'vip', groupRatio, gg)).toBe(2);
    expect(groupRatioFor('default', 'default', groupRatio, gg)).toBe(1);
    expect(groupRatioFor('default', 'svip', groupRatio, undefined)).toBe(3);
    expect(groupRatioFor('default', 'unknown', groupRatio, gg)).toBe(1);
  });

  it('when a user group has special usable groups, then they add to or remove from UserUsableGroups', () => {
    const usable = { default: '默认分组', vip: 'vip分组' };
    const special = { vip: { '+:svip': '超级分组', '-:default': '', lab: '实验' } };
    expect(usableGroupsFor('vip', usable, special)).toEqual({ vip: 'vip分组', svip: '超级分组', lab: '实验' });
    expect(usableGroupsFor('default', usable, special)).toEqual(usable);
    expect(usableGroupsFor('team', usable, special)).toEqual({ ...usable, team: '用户分组' });
    expect(usableGroupsFor('default', usable, undefined, { role: 10, groupRatio })).toEqual({
      ...usable,
      svip: 'svip',
    });
  });

  it('when AutoGroups is walked, then only usable, priced groups count, in order and once', () => {
    const usable = { default: 'd', vip: 'v', auto: 'a', gone: 'g' };
    expect(autoGroupsFor(['vip', 'auto', 'svip', 'gone', 'default', 'vip'], usable, groupRatio)).toEqual([
      'vip',
      'default',
    ]);
    expect(autoGroupsFor('nope', usable, groupRatio)).toEqual([]);
  });
});
