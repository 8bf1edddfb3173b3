import { optionAccessors } from '@aigw/common';
import { describe, expect, it } from 'vitest';
import { type Authorized, keyOf, priceCall, taskChannel } from './authorize.ts';
import {
  actionOfCustomId,
  clearMode,
  modelOfAction,
  modeOfPath,
  parseSimpleChange,
  submitAccepted,
  upstreamBody,
} from './mj-rules.ts';
import type { ChannelRef } from './ports.ts';

describe('midjourney rules', () => {
  it('when a button custom id is read, then it names its action', () => {
    expect(actionOfCustomId('MJ::JOB::upsample::2::abc')).toBe('UPSCALE');
    expect(actionOfCustomId('MJ::JOB::variation::1::abc')).toBe('VARIATION');
    expect(actionOfCustomId('MJ::JOB::high_variation::1::abc::SOLO')).toBe('HIGH_VARIATION');
    expect(actionOfCustomId('MJ::JOB::low_variation::1::abc::SOLO')).toBe('LOW_VARIATION');
    expect(actionOfCustomId('MJ::JOB::reroll::0::abc::SOLO')).toBe('REROLL');
    expect(actionOfCustomId('MJ::JOB::pan_left::1::abc::SOLO')).toBe('PAN');
    expect(actionOfCustomId('MJ::Outpaint::50::1::abc::SOLO')).toBe('ZOOM');
    expect(actionOfCustomId('MJ::CustomZoom::abc')).toBe('CUSTOM_ZOOM');
    expect(actionOfCustomId('MJ::Inpaint::1::abc::SOLO')).toBe('INPAINT');
    expect(actionOfCustomId('nonsense')).toBeUndefined();
  });

  it('when an action is priced, then its model is mj_ plus the action', () => {
    expect(modelOfAction('IMAGINE')).toBe('mj_imagine');
    expect(modelOfAction('UPSCALE')).toBe('mj_upscale');
    expect(modelOfAction('SWAP_FACE')).toBe('swap_face');
  });

  it('when a simple change is parsed, then U and V need an index 1-4 and R none', () => {
    expect(parseSimpleChange('123 U2')).toEqual({ taskId: '123', action: 'UPSCALE', index: 2 });
    expect(parseSimpleChange('123 v4')).toEqual({ taskId: '123', action: 'VARIATION', index: 4 });
    expect(parseSimpleChange('123 R')).toEqual({ taskId: '123', action: 'REROLL', index: 0 });
    expect(parseSimpleChange('123 U5')).toBeUndefined();
    expect(parseSimpleChange('123')).toBeUndefined();
  });

  it('when the body goes upstream, then notifyHook never does and accountFilter and mode flags follow the options', () => {
    const body = {
      prompt: 'cat --fast --ar 16:9 --relax',
      notifyHook: 'http://h',
      accountFilter: { a: 1 },
      state: 's',
    };
    expect(upstreamBody(body, { accountFilter: false, modeClear: false })).toEqual({
      prompt: 'cat --fast --ar 16:9 --relax',
      state: 's',
    });
    expect(upstreamBody(body, { accountFilter: true, modeClear: true })).toEqual({
      prompt: 'cat --ar 16:9',
      state: 's',
      accountFilter: { a: 1 },
    });
    expect(clearMode('a --turbo')).toBe('a');
  });

  it('when codes and paths are read, then 1, 21, 22 are accepted and mode prefixes are recognised', () => {
    expect([1, 21, 22, 4, 24].map(submitAccepted)).toEqual([true, true, true, false, false]);
    expect(modeOfPath('/mj/submit/imagine')).toEqual({ rest: '/submit/imagine' });
    expect(modeOfPath('/relax/mj/submit/imagine')).toEqual({ mode: 'relax', rest: '/submit/imagine' });
    expect(modeOfPath('/v1/chat')).toBeUndefined();
  });

  it('when a key arrives, then sk- and Bearer are stripped and a pinned channel is ignored', () => {
    expect(keyOf('Bearer sk-abc', undefined)).toBe('abc');
    expect(keyOf(undefined, 'sk-abc-12')).toBe('abc');
    expect(keyOf(undefined, undefined)).toBeUndefined();
  });
});

describe('task prices', () => {
  const auth = (userGroup: string, group: string) =>
    ({
      caller: { token: { modelLimitsEnabled: false, modelLimits: '' }, user: { group: userGroup } },
      group,
    }) as unknown as Authorized;
  const ratios = {
    modelPrice: { mj_imagine: 0.1 },
    groupRatio: { default: 1, vip: 2 },
    groupGroupRatio: { svip: { vip: 0.5 } },
  };

  it('when the user group has a GroupGroupRatio entry for the group used, then it replaces GroupRatio', () => {
    expect(priceCall(auth('default', 'vip'), 'mj_imagine', ratios, 500_000)).toMatchObject({
      quota: 100_000,
      groupRatio: 2,
    });
    expect(priceCall(auth('svip', 'vip'), 'mj_imagine', ratios, 500_000)).toMatchObject({
      quota: 25_000,
      groupRatio: 0.5,
    });
    expect(() => priceCall(auth('svip', 'gone'), 'mj_imagine', ratios, 500_000)).toThrow('分组 gone 已被弃用');
  });

  it('when an auto token picks a channel, then it walks AutoGroups in order for the first group with one; a pinned channel keeps its group', async () => {
    const opts: Record<string, string> = {
      UserUsableGroups: '{"default":"默认分组","auto":"自动分组"}',
      'group_ratio_setting.group_special_usable_group': '{"default":{"+:a":"A","+:b":"B"}}',
      AutoGroups: '["a","b","c"]',
    };
    const asked: string[] = [];
    const ch = (id: number) => ({ id }) as ChannelRef;
    const d = {
      options: optionAccessors((k) => opts[k]),
      peers: {
        ratios: async () => ({ modelPrice: {}, groupRatio: { default: 1, a: 1, b: 2, c: 3 } }),
        selectChannel: async (g: string) => {
          asked.push(g);
          return g === 'b' ? ch(7) : undefined;
        },
      },
    };
    const picked = await taskChannel(d, auth('default', 'auto'), 'm');
    // c is not usable by the user: never asked.
    expect([picked.auth.group, picked.channel?.id, asked]).toEqual(['b', 7, ['a', 'b']]);
    const pinned = await taskChannel(d, auth('default', 'auto'), 'm', { channel: ch(9), group: 'a' });
    expect([pinned.auth.group, pinned.channel?.id]).toEqual(['a', 9]);
    await expect(taskChannel(d, auth('default', 'c'), 'm')).rejects.toThrow('无权访问 c 分组');
    opts.AutoGroups = '["c"]';
    await expect(taskChannel(d, auth('default', 'auto'), 'm')).rejects.toThrow('自动分组未启用或没有可用的分组');
  });
});
