/**
 * The token drawer's values and rules (pure, tested without a browser): presets, the limits and
 * budgets the server accepts, the values of a stored token, the body sent and the first error.
 */
import type { Token, TokenInput } from '../../api/token.ts';
import { tr } from '../../locale/translate.ts';

/** Quota presets of spec 02 section 5 (500000 units = 1 dollar). */
export const QUOTA_PRESETS = [
  { label: '1$', quota: 500000 },
  { label: '10$', quota: 5000000 },
  { label: '50$', quota: 25000000 },
  { label: '100$', quota: 50000000 },
  { label: '500$', quota: 250000000 },
  { label: '1000$', quota: 500000000 },
];
export const COUNT_PRESETS = [10, 20, 30, 100];

/** The drawer's fields; expired_time in Unix seconds, -1 never. */
export interface TokenFormValues {
  name: string;
  remain_quota: number;
  unlimited_quota: boolean;
  expired_time: number;
  count: number;
  model_limits_enabled: boolean;
  model_limits: string[];
  allow_ips: string;
  group: string;
  cross_group_retry: boolean;
  rpm_limit: number;
  tpm_limit: number;
  concurrency_limit: number;
  budget_daily: number;
  budget_weekly: number;
  budget_monthly: number;
}

/** The largest RPM, TPM or concurrency limit the server accepts. */
export const MAX_TOKEN_LIMIT = 1_000_000_000;
export const LIMIT_FIELDS = [
  ['rpm_limit', 'token.rpmLimit'],
  ['tpm_limit', 'token.tpmLimit'],
  ['concurrency_limit', 'token.concurrencyLimit'],
] as const;

/** The first invalid rate limit field (its label key), or undefined when all are whole numbers in range. */
export function invalidLimit(
  form: Pick<TokenFormValues, 'rpm_limit' | 'tpm_limit' | 'concurrency_limit'>,
): (typeof LIMIT_FIELDS)[number][1] | undefined {
  for (const [field, label] of LIMIT_FIELDS) {
    const v = form[field];
    if (!Number.isInteger(v) || v < 0 || v > MAX_TOKEN_LIMIT) return label;
  }
  return undefined;
}

/** Period budgets (quota; 0 none): the relay refuses a token's requests once one is spent. */
export const BUDGET_FIELDS = [
  ['budget_daily', 'token.budgetDaily'],
  ['budget_weekly', 'token.budgetWeekly'],
  ['budget_monthly', 'token.budgetMonthly'],
] as const;

export type BudgetField = (typeof BUDGET_FIELDS)[number][0];

/** The first invalid budget field (its label key), or undefined when all are whole numbers from 0. */
export function invalidBudget(form: Pick<TokenFormValues, BudgetField>): (typeof BUDGET_FIELDS)[number][1] | undefined {
  for (const [field, label] of BUDGET_FIELDS) {
    const v = form[field];
    if (!Number.isSafeInteger(v) || v < 0) return label;
  }
  return undefined;
}

export const EMPTY_TOKEN: TokenFormValues = {
  name: '',
  remain_quota: 500000,
  unlimited_quota: false,
  expired_time: -1,
  count: 1,
  model_limits_enabled: false,
  model_limits: [],
  allow_ips: '',
  group: '',
  cross_group_retry: false,
  rpm_limit: 0,
  tpm_limit: 0,
  concurrency_limit: 0,
  budget_daily: 0,
  budget_weekly: 0,
  budget_monthly: 0,
};

/** Expiry quick buttons: never, one hour, one day, one month (from now). */
export function expiryIn(choice: 'never' | 'hour' | 'day' | 'month', now = Date.now()): number {
  if (choice === 'never') return -1;
  const seconds = { hour: 3600, day: 86400, month: 30 * 86400 }[choice];
  return Math.floor(now / 1000) + seconds;
}

/** The fields of a stored token (count 1: only a new token is made several times). */
export function tokenValuesOf(t: Token): TokenFormValues {
  return {
    name: t.name,
    remain_quota: t.remain_quota,
    unlimited_quota: t.unlimited_quota,
    expired_time: t.expired_time,
    count: 1,
    model_limits_enabled: t.model_limits_enabled,
    model_limits: t.model_limits ? t.model_limits.split(',') : [],
    allow_ips: t.allow_ips,
    group: t.group,
    cross_group_retry: t.cross_group_retry ?? false,
    rpm_limit: t.rpm_limit ?? 0,
    tpm_limit: t.tpm_limit ?? 0,
    concurrency_limit: t.concurrency_limit ?? 0,
    budget_daily: t.budget_daily ?? 0,
    budget_weekly: t.budget_weekly ?? 0,
    budget_monthly: t.budget_monthly ?? 0,
  };
}

/** What the edited token spent in its current day, week and month (shown beside its budgets). */
export const spentOf = (t: Token): Record<BudgetField, number> => ({
  budget_daily: t.budget_daily_used ?? 0,
  budget_weekly: t.budget_weekly_used ?? 0,
  budget_monthly: t.budget_monthly_used ?? 0,
});

/** The first error of the values in the order the drawer checks them, or undefined when they may be saved. */
export function tokenFormError(form: TokenFormValues, editing: boolean): string | undefined {
  if (!editing && form.name.trim() === '') return tr('token.theTokenNameCannotBe');
  if (form.expired_time !== -1 && !Number.isFinite(form.expired_time)) return tr('token.invalidExpiryTime');
  const bad = invalidLimit(form);
  if (bad) return tr('token.limitMustBeWhole', { field: tr(bad), max: MAX_TOKEN_LIMIT });
  const badBudget = invalidBudget(form);
  if (badBudget) return tr('token.budgetMustBeWhole', { field: tr(badBudget) });
  return undefined;
}

/** The body sent (name trimmed; cross-group retry only with group auto; the count is the caller's). */
export function tokenBody(form: TokenFormValues): TokenInput {
  return {
    name: form.name.trim(),
    remain_quota: form.remain_quota,
    unlimited_quota: form.unlimited_quota,
    expired_time: form.expired_time,
    model_limits_enabled: form.model_limits_enabled,
    model_limits: form.model_limits,
    allow_ips: form.allow_ips,
    group: form.group,
    cross_group_retry: form.group === 'auto' && form.cross_group_retry,
    rpm_limit: form.rpm_limit,
    tpm_limit: form.tpm_limit,
    concurrency_limit: form.concurrency_limit,
    budget_daily: form.budget_daily,
    budget_weekly: form.budget_weekly,
    budget_monthly: form.budget_monthly,
  };
}
