import { describe, expect, it } from 'vitest';
import { checkHoldBudget, countTokenSpend, periodClock, periodStarts, spentIn } from './token-budgets.ts';

const sec = (iso: string) => Date.parse(iso) / 1000;

describe('token budget periods', () => {
  it('when the operator is in Shanghai, then the day, week (Monday) and month start at local midnight', () => {
    // Wednesday 2026-11-04 01:30 in Shanghai is Tuesday 17:30 UTC.
    const { starts, nextDayMs } = periodStarts(Date.parse('2026-11-03T17:30:00Z'), 'Asia/Shanghai');
    expect(starts).toEqual({
      d: sec('2026-11-03T16:00:00Z'),
      w: sec('2026-11-01T16:00:00Z'),
      m: sec('2026-10-31T16:00:00Z'),
    });
    expect(nextDayMs).toBe(Date.parse('2026-11-04T16:00:00Z'));
  });

  it('when a period spans a daylight-saving change, then its start keeps the offset of that midnight', () => {
    // New York, Tuesday 2026-03-10 (EDT, -4) — the week began Monday 03-09 (EDT) and the month on 03-01 (EST, -5).
    const { starts } = periodStarts(Date.parse('2026-03-10T15:00:00Z'), 'America/New_York');
    expect(starts).toEqual({
      d: sec('2026-03-10T04:00:00Z'),
      w: sec('2026-03-09T04:00:00Z'),
      m: sec('2026-03-01T05:00:00Z'),
    });
  });

  it('when the clock passes midnight, then the memoised starts move to the new day', () => {
    let now = Date.parse('2026-11-30T23:59:59Z');
    const clock = periodClock(
      () => 'UTC',
      () => now,
    );
    expect(clock().d).toBe(sec('2026-11-30T00:00:00Z'));
    now += 1_000;
    expect(clock()).toEqual({
      d: sec('2026-12-01T00:00:00Z'),
      w: sec('2026-11-30T00:00:00Z'),
      m: sec('2026-12-01T00:00:00Z'),
    });
  });
});

describe('token budget holds and spend', () => {
  const starts = { d: 100, w: 50, m: 10 };
  const state = (p?: Record<string, [number, number]>) => ({
    tokens: { '7': { r: 0, u: 0, ...(p ? { p } : {}) } },
    holds: { a: { a: 30, t: 7 }, b: { a: 0, t: 7, sa: 20 }, c: { a: 500, t: 8 } },
  });

  it('when spend and holds in flight leave less than the request, then the period is refused by name', () => {
    const s = state({ d: [100, 40], w: [50, 40], m: [10, 40] });
    // Spent 40 + held 50 (30 wallet, 20 subscription) + 10 = 100: fits a daily budget of 100.
    expect(() => checkHoldBudget(s, { tokenId: 7, amount: 10, budgets: { d: 100, w: 0, m: 0 }, starts })).not.toThrow();
    expect(() => checkHoldBudget(s, { tokenId: 7, amount: 11, budgets: { d: 100, w: 0, m: 0 }, starts })).toThrow(
      '令牌每日预算不足',
    );
    expect(() => checkHoldBudget(s, { tokenId: 7, amount: 0, budgets: { d: 0, w: 40, m: 0 }, starts })).toThrow(
      '令牌每周预算不足',
    );
  });

  it('when the spend was counted in an earlier period, then it does not count now', () => {
    const s = state({ d: [99, 1_000], w: [50, 5], m: [9, 1_000] });
    expect(spentIn(s.tokens['7'].p, starts)).toEqual({ d: 0, w: 5, m: 0 });
    expect(() =>
      checkHoldBudget(s, { tokenId: 7, amount: 10, budgets: { d: 100, w: 100, m: 100 }, starts }),
    ).not.toThrow();
  });

  it('when a request settles, then its usage counts in all three periods, restarting an old one', () => {
    const s = state({ d: [99, 1_000], w: [50, 5] });
    const next = countTokenSpend(s, 7, 25, starts);
    expect(next.tokens['7'].p).toEqual({ d: [100, 25], w: [50, 30], m: [10, 25] });
    expect(s.tokens['7'].p).toEqual({ d: [99, 1_000], w: [50, 5] });
  });
});
