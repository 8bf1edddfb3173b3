import { randomUUID } from 'node:crypto';
import {
  createClient,
  createKafka,
  createLogger,
  createPublisher,
  type Publisher,
  runConsumer,
  topicName,
} from '@aigw/common';
import type { Stack } from '@aigw/local-stack/stack';
import { AdjustMode, CreditReason, TokensService, WalletService } from '@aigw/proto/billing/v1/billing';
import { type AuditEvent, AuditEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import { eventually } from '@aigw/testkit';
import { rootApi, startMoneyStack, userApi } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The wallet's relay-facing calls (gRPC, as the relay makes them) and its admin calls. Balance
 * bound under concurrency: a pre-consume never takes the wallet (or a limited token) below 0;
 * only a settle that charges more than was reserved can, by that excess.
 */
describe('wallet: pre-consume, settle, refund, credit and admin changes', () => {
  let stack: Stack;
  let wallet: ReturnType<typeof createClient<typeof WalletService>>;
  let tokens: ReturnType<typeof createClient<typeof TokensService>>;
  let publisher: Publisher;
  const audits: AuditEvent[] = [];
  let stopConsumer: () => Promise<void>;

  beforeAll(async () => {
    stack = await startMoneyStack();
    wallet = createClient(WalletService, stack.env.BILLING_ADDR as string, { deadlineMs: 30_000 });
    tokens = createClient(TokensService, stack.env.BILLING_ADDR as string);
    const logger = createLogger('test', 'warn');
    const kafka = createKafka(stack.env.KAFKA_BROKERS?.split(',') ?? [], 'wallet-test', logger);
    publisher = await createPublisher(kafka);
    const consumer = await runConsumer({
      kafka,
      groupId: `wallet-test-${randomUUID()}`,
      topic: topicName(TOPICS.audit),
      schema: AuditEventSchema,
      publisher,
      logger,
      fromBeginning: true,
      handle: async (e) => {
        audits.push(e);
      },
    });
    stopConsumer = consumer.stop;
  });
  afterAll(async () => {
    await stopConsumer?.();
    await publisher?.disconnect();
    wallet?.close();
    tokens?.close();
    await stack?.stop();
  });

  const fund = (userId: number, amount: number) =>
    wallet.credit({ requestId: randomUUID(), userId, amount, reason: CreditReason.OTHER, content: '' });

  it('when 200 pre-consumes race for a wallet of 1000 (10 each), then exactly 100 win, none sees a negative balance, and settling gives the exact sum', async () => {
    const userId = 900_001;
    await fund(userId, 1000);
    const rids = Array.from({ length: 200 }, () => randomUUID());
    const results = await Promise.allSettled(
      rids.map((requestId) => wallet.preConsume({ requestId, userId, tokenId: 0, amount: 10 })),
    );
    const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ rid: rids[i] as string, res: r.value }] : []));
    expect(won).toHaveLength(100);
    expect(won.every((w) => w.res.userQuota >= 0 && w.res.preConsumed === 10)).toBe(true);
    const refused = results
      .filter((r) => r.status === 'rejected')
      .map((r) => (r as PromiseRejectedResult).reason.message);
    expect(new Set(refused)).toEqual(new Set(['用户额度不足']));
    expect((await wallet.getWallet({ userId })).wallet?.quota).toBe(0);

    // Every winner used 7: 1000 - 100 x 7 = 300 left, settled concurrently.
    await Promise.all(won.map((w) => wallet.settle({ requestId: w.rid, actual: 7 })));
    expect((await wallet.getWallet({ userId })).wallet).toMatchObject({
      quota: 300,
      usedQuota: 700,
      requestCount: 100,
    });
  });

  it('when a limited token races the wallet, then the token caps the wins and its balance settles exactly', async () => {
    const user = await userApi(stack);
    await fund(user.id, 100_000);
    const created = await user.api.post<{ id: number }[]>('/token/', { name: 'race', remain_quota: 250 });
    const tokenId = created.body.data?.[0]?.id ?? 0;
    const rids = Array.from({ length: 60 }, () => randomUUID());
    const results = await Promise.allSettled(
      rids.map((requestId) => wallet.preConsume({ requestId, userId: user.id, tokenId, amount: 10 })),
    );
    const won = rids.filter((_, i) => results[i]?.status === 'fulfilled');
    expect(won).toHaveLength(25);
    await Promise.all(won.map((requestId) => wallet.settle({ requestId, actual: 4 })));
    const token = (await tokens.getToken({ userId: user.id, id: tokenId })).token;
    expect(token).toMatchObject({ remainQuota: 250 - 25 * 4, usedQuota: 100, status: 1 });
    expect((await wallet.getWallet({ userId: user.id })).wallet?.quota).toBe(100_000 - 100);
  });

  it('when pre-consume, settle and refund are replayed, then each applies once and answers the same', async () => {
    const userId = 900_002;
    await fund(userId, 500);
    const requestId = randomUUID();
    const first = await wallet.preConsume({ requestId, userId, tokenId: 0, amount: 100 });
    const again = await wallet.preConsume({ requestId, userId, tokenId: 0, amount: 100 });
    expect(again).toEqual(first);
    expect((await wallet.getWallet({ userId })).wallet?.quota).toBe(400);
    const s1 = await wallet.settle({ requestId, actual: 130 });
    const s2 = await wallet.settle({ requestId, actual: 130 });
    expect(s1).toEqual(s2);
    expect(s1.delta).toBe(30);
    expect((await wallet.getWallet({ userId })).wallet).toMatchObject({ quota: 370, usedQuota: 130, requestCount: 1 });
    // A pre-consume replayed after its settle still answers the first answer and reserves nothing.
    expect(await wallet.preConsume({ requestId, userId, tokenId: 0, amount: 100 })).toEqual(first);
    await expect(wallet.refund({ requestId })).rejects.toThrow('该请求已结算，不能退款');

    const failed = randomUUID();
    await wallet.preConsume({ requestId: failed, userId, tokenId: 0, amount: 50 });
    expect((await wallet.refund({ requestId: failed })).refunded).toBe(50);
    expect((await wallet.refund({ requestId: failed })).refunded).toBe(50);
    await expect(wallet.settle({ requestId: failed, actual: 1 })).rejects.toThrow('该请求已退款，不能再结算');
    expect((await wallet.getWallet({ userId })).wallet?.quota).toBe(370);
  });

  it('when the relay skipped the pre-consume, then settle charges the whole amount once', async () => {
    const userId = 900_003;
    await fund(userId, 20);
    const requestId = randomUUID();
    await wallet.settle({ requestId, actual: 25, userId, tokenId: 0 });
    await wallet.settle({ requestId, actual: 25, userId, tokenId: 0 });
    expect((await wallet.getWallet({ userId })).wallet).toMatchObject({ quota: -5, usedQuota: 25, requestCount: 1 });
  });

  it('when an admin adjusts quota, then it applies once per request id and an audit event (type 3) is published', async () => {
    const userId = 900_004;
    const requestId = randomUUID();
    const req = {
      requestId,
      userId,
      username: 'target',
      mode: AdjustMode.ADD,
      amount: 1000,
      remark: '测试',
      actor: { userId: 1, role: 100, username: 'root' },
    };
    await wallet.adjustQuota(req);
    await wallet.adjustQuota(req);
    expect((await wallet.getWallet({ userId })).wallet?.quota).toBe(1000);
    await wallet.adjustQuota({ ...req, requestId: randomUUID(), mode: AdjustMode.SET, amount: 42 });
    expect((await wallet.getWallet({ userId })).wallet?.quota).toBe(42);
    const seen = await eventually(
      async () => audits.filter((a) => a.userId === userId),
      (a) => new Set(a.map((e) => e.eventId)).size >= 2,
    );
    const distinct = [...new Map(seen.map((e) => [e.eventId, e])).values()];
    expect(distinct).toHaveLength(2);
    expect(distinct.every((e) => e.type === 3 && e.actorUserId === 1 && e.username === 'target')).toBe(true);
    expect(distinct.map((e) => e.quotaDelta).sort((a, b) => a - b)).toEqual([-958, 1000]);
    expect(distinct[0]?.content).toContain('管理员');
  });

  it('when the wallets of several users are asked, then unknown users get zero wallets', async () => {
    const res = await wallet.getWallets({ userIds: [900_004, 424242] });
    expect(res.wallets.map((w) => [w.userId, w.quota])).toEqual([
      [900_004, 42],
      [424242, 0],
    ]);
  });

  it('when a common user calls admin-only money routes, then 403; without a session 401', async () => {
    const { api } = await userApi(stack);
    expect((await api.get('/redemption/')).status).toBe(403);
    expect((await api.post('/option/rest_model_ratio')).status).toBe(403);
    const root = await rootApi(stack);
    expect((await root.get('/redemption/')).status).toBe(200);
  });
});
