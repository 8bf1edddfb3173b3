import { describe, expect, it } from 'vitest';
import { frtColor, logTypeOptions, timeColor, todayStart } from './log-rules.ts';

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
