import type { Status } from '../api/types.ts';

/** Large numbers: at least 1e4 shows k, 1e6 M, 1e9 B (spec 01 section 9). */
export function renderNumber(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1e9) return `${(n / 1e9).toFixed(1)}B`;
  if (abs >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (abs >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/** The option QuotaPerUnit's default (quota per dollar), for a status that does not carry it yet. */
export const DEFAULT_QUOTA_PER_UNIT = 500_000;

/** Quota per dollar: the server's QuotaPerUnit, else its default. */
export function quotaPerUnitOf(status: Pick<Status, 'quota_per_unit'>): number {
  return status.quota_per_unit || DEFAULT_QUOTA_PER_UNIT;
}

/** Quota as shown to users: dollars when display_in_currency is on, else a (shortened) number. */
export function renderQuota(
  quota: number,
  status: Pick<Status, 'display_in_currency' | 'quota_per_unit'>,
  digits = 2,
): string {
  const perUnit = quotaPerUnitOf(status);
  if (status.display_in_currency !== false) return `$${(quota / perUnit).toFixed(digits)}`;
  return renderNumber(quota);
}

/**
 * Quota in dollars with as many decimals (2 to 6) as `scale` needs for two significant digits, so
 * that small amounts (a few hundred quota at 500000 per dollar) do not all read $0.00. Charts pass
 * their largest value as the scale, so that every tick of one axis has the same decimals.
 */
export function renderQuotaPrecise(
  quota: number,
  status: Pick<Status, 'display_in_currency' | 'quota_per_unit'>,
  scale = quota,
): string {
  const dollars = Math.abs(scale) / quotaPerUnitOf(status);
  const digits = dollars > 0 ? Math.min(6, Math.max(2, Math.ceil(-Math.log10(dollars)) + 1)) : 2;
  return renderQuota(quota, status, digits);
}
