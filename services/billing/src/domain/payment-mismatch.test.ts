import { LogType } from '@aigw/proto/common/v1/common';
import { describe, expect, it } from 'vitest';
import { mismatchContent, paymentAlarms } from './payment-mismatch.ts';
import type { AuditRecord } from './ports.ts';

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

  it('when a mismatch is told, then it is a warn line and a system audit event of the order user, one id per order and amount; an unpublished event is only logged', async () => {
    const warns: string[] = [];
    const logger = { warn: (_f: unknown, msg: string) => warns.push(msg) };
    const audits: AuditRecord[] = [];
    let down = false;
    const alarms = paymentAlarms({
      logger: logger as never,
      events: {
        audit: async (r) => {
          if (down) throw new Error('kafka down');
          audits.push(r);
        },
      },
    });
    const m = {
      order: 'topup' as const,
      provider: 'creem',
      tradeNo: 'CREEM7NOx',
      userId: 7,
      username: 'u7',
      expected: { cents: 1250, currency: 'USD' },
      paid: { cents: 100, currency: 'usd' },
    };
    await alarms.mismatch(m);
    expect(audits).toEqual([
      {
        eventId: 'billing:paid-mismatch:CREEM7NOx:100:USD',
        userId: 7,
        username: 'u7',
        type: LogType.SYSTEM,
        content: '充值订单 CREEM7NOx（creem）支付金额不符，未入账：应付 12.50 USD，实付 1.00 USD',
        quotaDelta: 0,
        actorUserId: 0,
      },
    ]);
    down = true;
    await alarms.mismatch(m);
    expect(warns).toEqual([
      'paid amount or currency does not match the order; nothing credited',
      'paid amount or currency does not match the order; nothing credited',
      'payment mismatch audit event not published',
    ]);
  });
});
