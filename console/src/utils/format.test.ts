import { describe, expect, it } from 'vitest';
import { renderNumber, renderQuota, renderQuotaPrecise } from './format.ts';

describe('number and quota display', () => {
  it('when numbers grow, then k, M and B appear at 1e4, 1e6 and 1e9', () => {
    expect(renderNumber(9999)).toBe('9999');
    expect(renderNumber(12_345)).toBe('12.3k');
    expect(renderNumber(2_500_000)).toBe('2.5M');
    expect(renderNumber(3_000_000_000)).toBe('3.0B');
  });
  it('when currency display is on, then quota shows dollars by quota_per_unit', () => {
    expect(renderQuota(500000, { display_in_currency: true, quota_per_unit: 500000 })).toBe('$1.00');
    expect(renderQuota(1234, { display_in_currency: false, quota_per_unit: 500000 })).toBe('1234');
  });
  it('when a chart shows small amounts, then dollars keep two significant digits, never fewer than two decimals', () => {
    const status = { display_in_currency: true, quota_per_unit: 500000 };
    expect(renderQuotaPrecise(1200, status)).toBe('$0.0024');
    expect(renderQuotaPrecise(300, status)).toBe('$0.00060');
    expect(renderQuotaPrecise(0, status, 1200)).toBe('$0.0000');
    expect(renderQuotaPrecise(0, status)).toBe('$0.00');
    expect(renderQuotaPrecise(750000, status)).toBe('$1.50');
    expect(renderQuotaPrecise(1, status)).toBe('$0.000002');
    expect(renderQuotaPrecise(1234, { display_in_currency: false, quota_per_unit: 500000 })).toBe('1234');
  });
});
