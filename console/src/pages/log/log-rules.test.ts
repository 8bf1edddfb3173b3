import { describe, expect, it } from 'vitest';
import { cacheAndTierLines, frtColor, logTypeOptions, timeColor, todayStart } from './log-rules.ts';

describe('log colour rules', () => {
  it('when the use time is under 101 s, then green; under 300 s orange; else red', () => {
    expect(timeColor(100)).toBe('green');
    expect(timeColor(101)).toBe('orange');
    expect(timeColor(299)).toBe('orange');
    expect(timeColor(300)).toBe('red');
  });
  it('when the first token takes under 3 s, then green; under 10 s orange; else red', () => {
    expect(frtColor(2.9)).toBe('green');
    expect(frtColor(3)).toBe('orange');
    expect(frtColor(9.9)).toBe('orange');
    expect(frtColor(10)).toBe('red');
  });
  it('when the default window is computed, then it starts at midnight', () => {
    const t = todayStart(new Date(2026, 0, 2, 15, 30));
    expect(new Date(t * 1000).getHours()).toBe(0);
  });
  it('when the type filter is offered, then it lists all and every logged type, refunds (6) included', () => {
    expect(logTypeOptions().map((o) => [o.value, o.label])).toEqual([
      [0, '全部'],
      [1, '充值'],
      [2, '消费'],
      [3, '管理'],
      [4, '系统'],
      [5, '错误'],
      [6, '退款'],
    ]);
  });
});

describe('log details: prompt cache and long-context tier', () => {
  it('when a row has cache reads and one-hour writes, then reads and writes of 5 min and 1 h show with their ratios', () => {
    const lines = cacheAndTierLines({
      cache_tokens: 100,
      cache_ratio: 0.1,
      cache_creation_tokens: 300,
      cache_creation_ratio: 2,
      cache_creation_tokens_5m: 0,
      cache_creation_ratio_5m: 2,
      cache_creation_tokens_1h: 300,
      cache_creation_ratio_1h: 3.2,
    });
    expect(lines.map((l) => `${l.label}：${l.value}`)).toEqual([
      '缓存 Tokens：100',
      '缓存倍率：0.1',
      '缓存写入 Tokens（5 分钟）：0',
      '缓存写入倍率（5 分钟）：2',
      '缓存写入 Tokens（1 小时）：300',
      '缓存写入倍率（1 小时）：3.2',
    ]);
    // Only 5-minute writes: the total and its ratio, as before.
    expect(cacheAndTierLines({ cache_creation_tokens: 40, cache_creation_ratio: 1.25 })).toEqual([
      { label: '缓存写入 Tokens', value: '40' },
      { label: '缓存写入倍率', value: '1.25' },
    ]);
    expect(cacheAndTierLines({ model_ratio: 1 })).toEqual([]);
  });

  it('when a long-context tier priced the row, then it is named with its ratios', () => {
    const lines = cacheAndTierLines({
      matched_tier: '>200000',
      tier_above_prompt_tokens: 200000,
      tier_model_ratio: 3,
      tier_completion_ratio: 8,
      tier_cache_ratio: 0.2,
      tier_create_cache_ratio: 1.25,
    });
    expect(lines).toEqual([
      {
        label: '长上下文阶梯',
        value: '提示超过 200000 tokens（模型倍率 3，补全倍率 8，缓存倍率 0.2，缓存写入倍率 1.25）',
      },
    ]);
  });
});
