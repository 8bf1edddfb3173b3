import { describe, expect, it } from 'vitest';
import {
  checkModel,
  checkToken,
  ipAllowed,
  parseAllowIps,
  parseKey,
  resolveGroup,
  type TokenInfo,
  type UserInfo,
} from './authorize.ts';
import { buildChannelIndex, type SnapshotChannel } from './channel-index.ts';
import { isRetryable, mapStatus, shouldDisable, UpstreamFailure } from './exchange/failure.ts';
import { preConsumeAmount, priceOf, type Ratios, settleQuota } from './pricing.ts';
import { RelayError } from './relay-error.ts';

const token = (over: Partial<TokenInfo> = {}): TokenInfo => ({
  id: 1,
  userId: 1,
  name: 't',
  status: 1,
  remainQuota: 100,
  usedQuota: 0,
  unlimitedQuota: false,
  expiredTime: -1,
  allowIps: null,
  modelLimits: null,
  group: '',
  ...over,
});
const user: UserInfo = { id: 1, username: 'u', group: 'default', role: 1, status: 1, deleted: false };

describe('keys and token checks', () => {
  it('when keys come in their forms, then the key and a pinned channel are read', () => {
    expect(parseKey('Bearer sk-abc')).toEqual({ key: 'abc', pinnedChannelId: 0 });
    expect(parseKey('sk-abc-12')).toEqual({ key: 'abc', pinnedChannelId: 12 });
    expect(parseKey('abc')).toEqual({ key: 'abc', pinnedChannelId: 0 });
    expect(parseKey('Bearer ')).toBeUndefined();
  });

  it('when a token is expired, exhausted or disabled, then it is refused with 401', () => {
    const now = 1_000_000;
    expect(() => checkToken(token({ expiredTime: now - 1 }), now)).toThrow('该令牌已过期');
    expect(() => checkToken(token({ remainQuota: 0 }), now)).toThrow('该令牌额度已用尽');
    expect(() => checkToken(token({ remainQuota: 0, unlimitedQuota: true }), now)).not.toThrow();
    expect(() => checkToken(token({ status: 2 }), now)).toThrow('该令牌状态不可用');
    try {
      checkToken(token({ status: 2 }), now);
    } catch (e) {
      expect((e as RelayError).status).toBe(401);
    }
  });

  it('when an allow-list holds IPs and CIDRs, then only those addresses pass (IPv4-mapped too)', () => {
    const list = parseAllowIps('10.0.0.0/8\n192.168.1.7\n::1');
    expect(ipAllowed(list, '10.2.3.4')).toBe(true);
    expect(ipAllowed(list, '::ffff:192.168.1.7')).toBe(true);
    expect(ipAllowed(list, '::1')).toBe(true);
    expect(ipAllowed(list, '11.0.0.1')).toBe(false);
    expect(ipAllowed(parseAllowIps(''), '11.0.0.1')).toBe(true);
  });

  it('when model limits are on, then other models are refused; groups must be usable and priced', () => {
    expect(() => checkModel(token({ modelLimits: new Set(['a']) }), 'b')).toThrow('该令牌无权访问模型 b');
    expect(() => checkModel(token(), '')).toThrow(RelayError);
    const settings = (usable: Record<string, string>, groupRatio: Record<string, number>, more = {}) => ({
      usable,
      special: {},
      groupRatio,
      autoGroups: [],
      ...more,
    });
    expect(resolveGroup('', user, settings({}, { default: 1 }))).toEqual({ group: 'default' });
    expect(() => resolveGroup('vip', user, settings({ default: '默认分组' }, { default: 1, vip: 1 }))).toThrow(
      '无权访问 vip 分组',
    );
    expect(() => resolveGroup('vip', user, settings({ vip: 'vip分组' }, { default: 1 }))).toThrow('分组 vip 已被弃用');
    // Special usable groups of the user's group open a group UserUsableGroups does not list.
    const special = { special: { default: { '+:vip': 'vip分组' } } };
    expect(resolveGroup('vip', user, settings({}, { default: 1, vip: 1 }, special))).toEqual({ group: 'vip' });
  });

  it('when a token is in the auto group, then the first auto group with a channel for the model is used', () => {
    const s = {
      usable: { default: '默认分组', vip: 'vip分组', auto: '自动' },
      special: {},
      groupRatio: { default: 1, vip: 2, svip: 3 },
      autoGroups: ['svip', 'vip', 'default'],
    };
    expect(resolveGroup('auto', user, s, (g) => g === 'default')).toEqual({
      group: 'default',
      autoGroups: ['vip', 'default'],
    });
    expect(resolveGroup('auto', user, s)).toEqual({ group: 'vip', autoGroups: ['vip', 'default'] });
    expect(() => resolveGroup('auto', user, { ...s, usable: { default: '默认分组' } })).toThrow('无权访问 auto 分组');
    expect(() => resolveGroup('auto', user, { ...s, autoGroups: ['svip'] })).toThrow('自动分组未启用');
  });
});

describe('pricing', () => {
  const r: Ratios = {
    modelRatio: { 'gpt-4o-mini': 0.075, 'gpt-4o': 1.25 },
    completionRatio: { 'gpt-4o-mini': 4 },
    modelPrice: { 'dall-e-3': 0.04 },
    groupRatio: { default: 1, vip: 2 },
  };

  it('when a dated or suffixed model is priced, then the base model’s ratios apply; unpriced models are refused', () => {
    const mini = {
      kind: 'ratio',
      modelRatio: 0.075,
      completionRatio: 4,
      cacheRatio: 1,
      cacheCreationRatio: 1,
      cacheCreation1hRatio: 1.6,
      audioRatio: 1,
      audioCompletionRatio: 1,
      imageRatio: 1,
    };
    expect(priceOf(r, 'gpt-4o-mini-2024-07-18')).toEqual(mini);
    expect(priceOf(r, 'gpt-4o-mini-tabc')).toEqual(mini);
    expect(priceOf(r, 'dall-e-3')).toEqual({ kind: 'call', price: 0.04 });
    expect(() => priceOf(r, 'mystery')).toThrow('倍率或价格未配置');
  });

  it('when a model carries a reasoning suffix, then an entry with the suffix wins, then a * pattern, then the base model (new-api)', () => {
    const t: Ratios = {
      ...r,
      modelRatio: {
        'claude-sonnet-4-5': 1.5,
        'claude-3-7-sonnet-20250219-thinking': 2,
        'gemini-2.5-flash': 0.15,
        'gemini-2.5-flash-thinking-*': 0.2,
      },
    };
    const ratioOf = (m: string) => (priceOf(t, m) as { modelRatio: number }).modelRatio;
    expect(ratioOf('claude-3-7-sonnet-20250219-thinking')).toBe(2);
    expect(ratioOf('claude-sonnet-4-5-thinking')).toBe(1.5);
    expect(ratioOf('gemini-2.5-flash-thinking-2048')).toBe(0.2);
    expect(ratioOf('gemini-2.5-flash-nothinking')).toBe(0.15);
  });

  it('when a model has no price, then it is refused with a 400 naming it, unless a default ratio serves unpriced models', () => {
    let refused: unknown;
    try {
      priceOf(r, 'mystery-model');
    } catch (err) {
      refused = err;
    }
    expect(refused).toMatchObject({
      status: 400,
      code: 'model_price_missing',
      message: '模型 mystery-model 倍率或价格未配置，请联系管理员设置',
    });
    expect(priceOf(r, 'mystery-model', 2)).toMatchObject({ kind: 'ratio', modelRatio: 2, completionRatio: 1 });
    // A priced model keeps its own price whatever the default.
    expect(priceOf(r, 'gpt-4o-mini', 2)).toMatchObject({ modelRatio: 0.075, completionRatio: 4 });
    expect(priceOf(r, 'dall-e-3', 2)).toEqual({ kind: 'call', price: 0.04 });
  });

  it('when quota is settled, then (prompt + completion x completion ratio) x ratios, at least 1; per call price x QuotaPerUnit x group', () => {
    const p = priceOf(r, 'gpt-4o-mini');
    expect(settleQuota(p, 1, 500000, { promptTokens: 10, completionTokens: 5 })).toBe(Math.round(30 * 0.075));
    expect(settleQuota(p, 2, 500000, { promptTokens: 1, completionTokens: 0 })).toBe(1);
    expect(settleQuota(priceOf(r, 'dall-e-3'), 2, 500000, { promptTokens: 0, completionTokens: 0 }, 3)).toBe(120000);
    // The reservation covers the answer at its own price: 100 output tokens x completion ratio 4.
    expect(preConsumeAmount(p, 1, 500000, 10, 500, 100)).toBe(Math.ceil((500 + 100 * 4) * 0.075));
  });

  it('when the upstream reports cached, cache-written, audio or image tokens, then each kind counts with its own ratio', () => {
    const kinds: Ratios = {
      ...r,
      modelRatio: { ...r.modelRatio, 'claude-x': 1.5, 'gpt-4o-audio-preview': 1.25 },
      completionRatio: { ...r.completionRatio, 'claude-x': 5, 'gpt-4o-audio-preview': 4 },
      cacheRatio: { 'gpt-4o-mini': 0.5, 'claude-x': 0.1 },
      cacheCreationRatio: { 'claude-x': 1.25 },
      audioRatio: { 'gpt-4o-audio-preview': 16 },
      audioCompletionRatio: { 'gpt-4o-audio-preview': 2 },
      imageRatio: { 'gpt-image-1': 2 },
    };
    // 1,000 prompt tokens of which 800 cached: 200 + 800 x 0.5 = 600, plus 10 x 4 completion.
    const mini = priceOf(kinds, 'gpt-4o-mini-2024-07-18');
    expect(settleQuota(mini, 1, 500000, { promptTokens: 1000, completionTokens: 10, cachedTokens: 800 })).toBe(
      Math.round((200 + 800 * 0.5 + 10 * 4) * 0.075),
    );
    // Claude: 100 fresh, 3,000 read (x 0.1), 500 written (x 1.25); group ratio 2.
    const claude = priceOf(kinds, 'claude-x');
    expect(
      settleQuota(claude, 2, 500000, {
        promptTokens: 3600,
        completionTokens: 20,
        cachedTokens: 3000,
        cacheCreationTokens: 500,
      }),
    ).toBe(Math.round((100 + 300 + 625 + 20 * 5) * 1.5 * 2));
    // Audio: 50 text + 200 audio in (x 16); 30 text + 100 audio out (x 16 x 2).
    const audio = priceOf(kinds, 'gpt-4o-audio-preview');
    expect(
      settleQuota(audio, 1, 500000, {
        promptTokens: 250,
        completionTokens: 130,
        audioInputTokens: 200,
        audioOutputTokens: 100,
      }),
    ).toBe(Math.round((50 + 200 * 16 + 30 * 4 + 100 * 16 * 2) * 1.25));
    // gpt-image-1: 40 text + 200 image tokens in (x 2), 4,160 image tokens out (x 8); ratio 2.5.
    const image = priceOf(
      { ...kinds, modelRatio: { 'gpt-image-1': 2.5 }, completionRatio: { 'gpt-image-1': 8 } },
      'gpt-image-1',
    );
    expect(settleQuota(image, 1, 500000, { promptTokens: 240, completionTokens: 4160, imageInputTokens: 200 })).toBe(
      Math.round((40 + 200 * 2 + 4160 * 8) * 2.5),
    );
    // No token-kind ratio for the model: every prompt token at the text price, as before.
    expect(
      settleQuota(priceOf(kinds, 'gpt-4o'), 1, 500000, { promptTokens: 1000, completionTokens: 0, cachedTokens: 800 }),
    ).toBe(Math.round(1000 * 1.25));
  });
});

describe('channel choice', () => {
  const ch = (id: number, status = 1): SnapshotChannel => ({
    id,
    name: `c${id}`,
    type: 1,
    key: 'k',
    baseUrl: '',
    other: '',
    modelMapping: id === 1 ? '{"m":"m-up"}' : '',
    statusCodeMapping: '',
    autoBan: true,
    status,
    openaiOrganization: '',
  });
  const idx = buildChannelIndex(
    [ch(1), ch(2), ch(3), ch(4, 2)],
    [
      { group: 'default', model: 'm', channelId: 1, priority: 10, weight: 1, enabled: true },
      { group: 'default', model: 'm', channelId: 2, priority: 0, weight: 3, enabled: true },
      { group: 'default', model: 'm', channelId: 3, priority: 0, weight: 0, enabled: true },
      { group: 'default', model: 'm', channelId: 4, priority: 20, weight: 1, enabled: true },
    ],
  );

  it('when attempts go on, then tier N serves attempt N (the lowest when fewer), tried channels excluded, disabled never', () => {
    expect(idx.select('default', 'm', 0, [])?.id).toBe(1);
    expect([2, 3]).toContain(idx.select('default', 'm', 1, [1])?.id);
    expect(idx.select('default', 'm', 5, [1, 2])?.id).toBe(3);
    expect(idx.select('default', 'm', 0, [1, 2, 3])).toBeUndefined();
    expect(idx.models('default')).toEqual(['m']);
    expect(idx.byId(1)?.modelMapping).toEqual({ m: 'm-up' });
  });

  it('when a tier is chosen, then weights decide (weight 0 next to weight 3 is never picked)', () => {
    const picks = new Set<number>();
    for (let i = 0; i < 50; i++) picks.add(idx.select('default', 'm', 1, [], () => i / 50)?.id ?? 0);
    expect([...picks]).toEqual([2]);
  });
});

describe('failure rules', () => {
  it('when an upstream fails, then 429, 5xx (not 504/524) and connection failures retry; 400 does not', () => {
    expect(isRetryable(new UpstreamFailure(429, 'x'))).toBe(true);
    expect(isRetryable(new UpstreamFailure(500, 'x'))).toBe(true);
    expect(isRetryable(new UpstreamFailure(504, 'x'))).toBe(false);
    expect(isRetryable(new UpstreamFailure(524, 'x'))).toBe(false);
    expect(isRetryable(new UpstreamFailure(400, 'x'))).toBe(false);
    expect(isRetryable(new UpstreamFailure(0, 'x', 'connection'))).toBe(true);
    expect(isRetryable(new UpstreamFailure(0, 'x', 'stream', true))).toBe(false);
  });

  it('when a key is rejected, then the channel should be disabled; mapping rewrites statuses but never 200', () => {
    expect(shouldDisable(new UpstreamFailure(401, 'whatever'))).toBe(true);
    expect(
      shouldDisable(
        new UpstreamFailure(429, 'You exceeded your current quota, please check your plan and billing details'),
      ),
    ).toBe(true);
    expect(shouldDisable(new UpstreamFailure(403, 'Your account has been deactivated'))).toBe(true);
    expect(shouldDisable(new UpstreamFailure(500, 'boom'))).toBe(false);
    expect(mapStatus(400, { '400': '500' })).toBe(500);
    expect(mapStatus(200, { '200': '500' })).toBe(200);
  });
});
