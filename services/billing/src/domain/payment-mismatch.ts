import type { Logger } from '@aigw/common';
import { LogType } from '@aigw/proto/common/v1/common';
import type { BillingEvents, PaymentAlarms, PaymentMismatch } from './ports.ts';

const money = (q: { cents: number; currency: string }) =>
  `${Number.isFinite(q.cents) ? (q.cents / 100).toFixed(2) : '?'}${q.currency ? ` ${q.currency.toUpperCase()}` : ''}`;

/** The audit log's line for a mismatch (the admin's log view shows it under the order's user). */
export function mismatchContent(m: PaymentMismatch): string {
  const what = m.order === 'topup' ? '充值订单' : '订阅订单';
  const effect = m.order === 'topup' ? '未入账' : '未开通';
  return `${what} ${m.tradeNo}（${m.provider}）支付金额不符，${effect}：应付 ${money(m.expected)}，实付 ${money(m.paid)}`;
}

/**
 * Tells a payment mismatch at warn and as a system audit event of the order's user (one per
 * order and paid amount: a replayed webhook is deduplicated downstream). An audit event that
 * cannot be published is logged; the provider's answer does not depend on it.
 */
export function paymentAlarms(deps: { logger: Logger; events: Pick<BillingEvents, 'audit'> }): PaymentAlarms {
  return {
    async mismatch(m) {
      deps.logger.warn(
        { provider: m.provider, tradeNo: m.tradeNo, userId: m.userId, expected: m.expected, paid: m.paid },
        'paid amount or currency does not match the order; nothing credited',
      );
      try {
        await deps.events.audit({
          eventId: `billing:paid-mismatch:${m.tradeNo}:${m.paid.cents}:${m.paid.currency.toUpperCase()}`,
          userId: m.userId,
          username: m.username,
          type: LogType.SYSTEM,
          content: mismatchContent(m),
          quotaDelta: 0,
          actorUserId: 0,
        });
      } catch (err) {
        deps.logger.warn({ err, tradeNo: m.tradeNo }, 'payment mismatch audit event not published');
      }
    },
  };
}
