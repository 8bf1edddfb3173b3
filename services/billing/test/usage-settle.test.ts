import { randomBytes } from 'node:crypto';
import { createClient, createKafka, createLogger, createPublisher, type Publisher, topicName } from '@aigw/common';
import { type Stack, startStack } from '@aigw/local-stack/stack';
import { CreditReason, WalletService } from '@aigw/proto/billing/v1/billing';
import { UsageEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import { eventually } from '@aigw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The relay does not call Settle: billing settles each request from its usage event. Delivery is
 * at least once, so the same event may arrive twice; the wallet must move once.
 */
describe('settling from usage events', () => {
  let stack: Stack;
  let publisher: Publisher;
  let wallet: ReturnType<typeof createClient<typeof WalletService>>;
  beforeAll(async () => {
    stack = await startStack({ services: ['users', 'channels', 'billing'] });
    const kafka = createKafka(stack.env.KAFKA_BROKERS!.split(','), 'settle-test', createLogger('t', 'silent'));
    publisher = await createPublisher(kafka);
    wallet = createClient(WalletService, stack.env.BILLING_ADDR!);
  });
  afterAll(async () => {
    wallet?.close();
    await publisher?.disconnect();
    await stack?.stop();
  });

  const usage = (userId: number, requestId: string, quota: number, type = 2) =>
    publisher.publish(
      topicName(TOPICS.usage),
      UsageEventSchema,
      { eventId: requestId, requestId, occurredAtMs: Date.now(), userId, tokenId: 0, quota, type },
      String(userId),
    );

  it('when a consumption event arrives twice and an error event once, then the wallet is charged once', async () => {
    const userId = 900_000 + Math.floor(Math.random() * 10_000);
    await wallet.credit({
      requestId: `seed-${randomBytes(6).toString('hex')}`,
      userId,
      amount: 10_000,
      reason: CreditReason.TOPUP,
      username: 'settle-test',
    });
    const rid = `req-${randomBytes(6).toString('hex')}`;
    await usage(userId, rid, 700);
    await usage(userId, rid, 700);
    await usage(userId, `req-${randomBytes(6).toString('hex')}`, 300, 5);

    // A marker after them on the same key (so the same partition, consumed in order): a charge of
    // 1 for another request. Once it is applied, the duplicate before it has been handled too.
    await usage(userId, `marker-${randomBytes(6).toString('hex')}`, 1);
    const w = await eventually(
      async () => (await wallet.getWallet({ userId })).wallet,
      (x) => (x?.usedQuota ?? 0) % 700 === 1,
      { timeoutMs: 20_000, what: 'the marker charge applied' },
    );
    expect(w?.usedQuota).toBe(701);
    expect(w?.quota).toBe(9_299);
    expect(w?.requestCount).toBe(2);
  });

  it('when the relay could not refund a failed request, then its error event refunds the hold, once', async () => {
    const userId = 910_000 + Math.floor(Math.random() * 10_000);
    await wallet.credit({
      requestId: `seed-${randomBytes(6).toString('hex')}`,
      userId,
      amount: 10_000,
      reason: CreditReason.TOPUP,
      username: 'settle-test',
    });
    const rid = `req-${randomBytes(6).toString('hex')}`;
    await wallet.preConsume({ requestId: rid, userId, tokenId: 0, amount: 4_000 });
    expect((await wallet.getWallet({ userId })).wallet?.quota).toBe(6_000);
    await usage(userId, rid, 0, 5);
    await usage(userId, rid, 0, 5);
    const w = await eventually(
      async () => (await wallet.getWallet({ userId })).wallet,
      (x) => (x?.quota ?? 0) >= 10_000,
      { timeoutMs: 20_000, what: 'the hold refunded' },
    );
    expect(w?.quota).toBe(10_000);
    // The relay's own refund arriving late answers what the event recorded.
    expect((await wallet.refund({ requestId: rid, userId })).refunded).toBe(4_000);
    expect((await wallet.getWallet({ userId })).wallet?.quota).toBe(10_000);
    expect((await wallet.getWallet({ userId })).wallet?.requestCount).toBe(0);
  });
});
