import { describe, expect, it } from 'vitest';
import {
  COUNT_PRESETS,
  EMPTY_TOKEN,
  expiryIn,
  invalidBudget,
  invalidLimit,
  QUOTA_PRESETS,
  tokenBody,
  tokenFormError,
} from './token-form.ts';

describe('token drawer presets', () => {
  it('when presets are offered, then they follow spec 02 section 5', () => {
    expect(QUOTA_PRESETS.map((p) => [p.label, p.quota])).toEqual([
      ['1$', 500000],
      ['10$', 5000000],
      ['50$', 25000000],
      ['100$', 50000000],
      ['500$', 250000000],
      ['1000$', 500000000],
    ]);
    expect(COUNT_PRESETS).toEqual([10, 20, 30, 100]);
  });

  it('when an expiry quick button is used, then it counts from now', () => {
    const now = 1_700_000_000_000;
    expect(expiryIn('never', now)).toBe(-1);
    expect(expiryIn('hour', now)).toBe(1_700_003_600);
    expect(expiryIn('day', now)).toBe(1_700_086_400);
    expect(expiryIn('month', now)).toBe(1_702_592_000);
  });

  it('when a rate limit is negative, fractional or too large, then the drawer names that field before saving', () => {
    expect(invalidLimit({ rpm_limit: 0, tpm_limit: 0, concurrency_limit: 0 })).toBeUndefined();
    expect(invalidLimit({ rpm_limit: 60, tpm_limit: 100_000, concurrency_limit: 4 })).toBeUndefined();
    expect(invalidLimit({ rpm_limit: -1, tpm_limit: 0, concurrency_limit: 0 })).toBe('token.rpmLimit');
    expect(invalidLimit({ rpm_limit: 1, tpm_limit: 1.5, concurrency_limit: 0 })).toBe('token.tpmLimit');
    expect(invalidLimit({ rpm_limit: 1, tpm_limit: 1, concurrency_limit: 2_000_000_000 })).toBe(
      'token.concurrencyLimit',
    );
  });

  it('when a period budget is negative, fractional or beyond a safe integer, then its field is named', () => {
    expect(invalidBudget({ budget_daily: 0, budget_weekly: 0, budget_monthly: 0 })).toBeUndefined();
    expect(invalidBudget({ budget_daily: 500_000, budget_weekly: 0, budget_monthly: 10_000_000 })).toBeUndefined();
    expect(invalidBudget({ budget_daily: -1, budget_weekly: 0, budget_monthly: 0 })).toBe('token.budgetDaily');
    expect(invalidBudget({ budget_daily: 1, budget_weekly: 0.5, budget_monthly: 0 })).toBe('token.budgetWeekly');
    expect(invalidBudget({ budget_daily: 1, budget_weekly: 1, budget_monthly: 2 ** 60 })).toBe('token.budgetMonthly');
  });

  it("when a new token has no name or a bad limit, then the first error is the spec's; an edit may keep its name", () => {
    expect(tokenFormError({ ...EMPTY_TOKEN, name: '  ' }, false)).toBe('令牌名称不能为空');
    expect(tokenFormError({ ...EMPTY_TOKEN, name: '' }, true)).toBeUndefined();
    expect(tokenFormError({ ...EMPTY_TOKEN, name: 'a', rpm_limit: -1, budget_daily: -1 }, false)).toContain('RPM');
    expect(tokenFormError({ ...EMPTY_TOKEN, name: 'a' }, false)).toBeUndefined();
  });

  it('when the values are sent, then the name is trimmed and cross-group retry goes only with group auto', () => {
    const body = tokenBody({ ...EMPTY_TOKEN, name: ' t ', group: 'vip', cross_group_retry: true });
    expect(body).toMatchObject({ name: 't', group: 'vip', cross_group_retry: false });
    expect(tokenBody({ ...EMPTY_TOKEN, group: 'auto', cross_group_retry: true }).cross_group_retry).toBe(true);
    expect(body).not.toHaveProperty('count');
  });
});
