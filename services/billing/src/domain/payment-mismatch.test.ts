import { describe, expect, it } from 'vitest';
import { mismatchContent } from './payment-mismatch.ts';

describe('payment mismatch', () => {
  it('when a paid amount is not the order’s, then the audit line names the order, both amounts and what was not done', () => {
    const base = { provider: 'stripe', tradeNo: 'STRIPE1NOx', userId: 1, username: 'u' };
    expect(
      mismatchContent({
        ...base,
        order: 'topup',
        expected: { cents: 2400, currency: 'USD' },
        paid: { cents: 100, currency: 'usd' },
      }),
    ).toBe('充值订单 STRIPE1NOx（stripe）支付金额不符，未入账：应付 24.00 USD，实付 1.00 USD');
    expect(
      mismatchContent({
        ...base,
        provider: 'epay',
        order: 'subscription',
        expected: { cents: 1250, currency: '' },
        paid: { cents: Number.NaN, currency: '' },
      }),
    ).toBe('订阅订单 STRIPE1NOx（epay）支付金额不符，未开通：应付 12.50，实付 ?');
  });
});
