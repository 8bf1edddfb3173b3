/**
 * A wallet change made outside the request path (root sets a user's quota through the gateway)
 * reaches the relay as an entity-changed event: the relay drops the user's cached balance, so
 * the next request pre-consumes again and is refused instead of being served on a balance that
 * no longer exists (the relay skips pre-consume while a cached balance looks ample).
 */

import { eventually } from '@aigw/testkit';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import {
  Api,
  createChannel,
  modelName,
  type RelayStack,
  routable,
  setOption,
  startRelayStack,
  userWithToken,
} from '@aigw/testkit/harness';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RelayApp, startSecondRelay } from './second-relay.ts';

let s: RelayStack;
let fake: FakeProvider;
/** A second relay replica on the same stack (its own caches, its own event consumer group). */
let second: RelayApp;
let secondUrl: string;
// Cached balances and identities far outlive the test: only the event can explain a refusal.
const TTLS = { RELAY_CACHE_TTL_MS: '600000', RELAY_BALANCE_TTL_MS: '600000' };

beforeAll(async () => {
  s = await startRelayStack(TTLS);
  fake = await startFakeProvider({ kind: 'openai', key: 'up-wal', reply: 'ok' });
  ({ app: second, url: secondUrl } = await startSecondRelay(s.stack));
});
afterAll(async () => {
  await second?.stop();
  await s?.stop();
  await fake?.close();
});

async function chat(
  key: string,
  model: string,
  relayUrl = s.stack.relayUrl,
): Promise<{ status: number; message: string }> {
  const res = await fetch(`${relayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 }),
  });
  const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
  return { status: res.status, message: body.error?.message ?? '' };
}

describe('wallet changes reach the relay', () => {
  it('when root sets a served user quota to 0 through the gateway, then both relays refuse the next requests with 用户额度不足', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s, { quota: 1_000_000_000 });
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-wal', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    await routable(secondUrl, u.key, model);
    // Served by both replicas; each has seen the (large) balance and skips pre-consume from now on.
    for (let i = 0; i < 3; i++) {
      expect((await chat(u.key, model)).status).toBe(200);
      expect((await chat(u.key, model, secondUrl)).status).toBe(200);
    }

    const root = new Api(s.stack.gatewayUrl);
    await root.login('root', '123456');
    const set = await root.put('/user/', { id: u.userId, quota: 0 });
    expect(set.body).toMatchObject({ success: true });

    const refused = { status: 403, message: '用户额度不足' };
    for (const url of [s.stack.relayUrl, secondUrl]) {
      const after = await eventually(
        () => chat(u.key, model, url),
        (r) => r.status === 403,
        5_000,
      );
      expect(after).toEqual(refused);
      // And it stays refused.
      expect(await chat(u.key, model, url)).toEqual(refused);
    }
  });
});

describe('limits across relay replicas', () => {
  it("when a token's RPM and new-api's model request limit are hit through two relays in turn, then both count in one window: the requests beyond the limit are refused by either relay", async () => {
    const model = modelName('gpt-4o-mini');
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-wal', models: model });
    const relays = [s.stack.relayUrl, secondUrl];
    // Both relays route the new model before anything is counted (a 503 would not be a refusal).
    const probe = await userWithToken(s);
    for (const url of relays) await routable(url, probe.key, model);

    // A token's own RPM of 3: A, B, A pass; then B and A refuse (one relay alone would let B pass twice more).
    const t = await userWithToken(s, { token: { rpmLimit: 3 } });
    for (const url of [relays[0], relays[1], relays[0]]) expect((await chat(t.key, model, url)).status).toBe(200);
    for (const url of [relays[1], relays[0]])
      expect(await chat(t.key, model, url)).toEqual({ status: 429, message: '令牌请求频率超过限制，请稍后再试' });

    // new-api's model request limit (2 successes a minute per user), once both relays hold the options.
    await setOption(s, 'ModelRequestRateLimitSuccessCount', '2');
    await setOption(s, 'ModelRequestRateLimitEnabled', 'true');
    try {
      for (const url of relays) {
        const first = await userWithToken(s);
        await eventually(
          () => chat(first.key, model, url),
          (r) => r.status === 429,
          { what: `the model request limit on ${url}` },
        );
      }
      const u = await userWithToken(s);
      expect((await chat(u.key, model, relays[0])).status).toBe(200);
      expect((await chat(u.key, model, relays[1])).status).toBe(200);
      // A success is counted just after its answer (fire and forget): wait until both are in Redis.
      const redis = new Redis(s.stack.env.REDIS_URL as string);
      try {
        await eventually(
          () => redis.zcard(`${s.stack.env.REDIS_KEY_PREFIX}mrl:s:${u.userId}`),
          (n) => n === 2,
          { what: 'both successes counted' },
        );
      } finally {
        redis.disconnect();
      }
      for (const url of relays)
        expect(await chat(u.key, model, url)).toEqual({
          status: 429,
          message: '您已达到请求数限制：1分钟内最多请求2次',
        });
    } finally {
      await setOption(s, 'ModelRequestRateLimitEnabled', 'false');
      await setOption(s, 'ModelRequestRateLimitSuccessCount', '1000');
    }
  });
});

interface Window {
  period: string;
  limit: number;
  used: number;
}
interface Mine {
  billing_preference: string;
  subscriptions: { subscription: { id: string; plan_id: number; status: string; windows: Window[] } }[];
}

describe('subscriptions pay relay requests', () => {
  it('when a user buys a plan with the balance (double click), then the wallet pays once; requests are charged to its windows while all have room (the log says so), then to the wallet; wallet_first is honoured', async () => {
    // No ratio matches the name: until the relay has the price below, the model is refused as unpriced.
    const model = modelName('plan-call');
    // A per-call price: every request costs 0.002 x 500,000 = 1,000 (reserved and charged alike).
    await setOption(s, 'ModelPrice', JSON.stringify({ [model]: 0.002 }));
    try {
      const root = new Api(s.stack.gatewayUrl);
      await root.login('root', '123456');
      const refused = await root.post('/subscription/admin/plans', { plan: { title: ' ', price_amount: 1 } });
      expect(refused.body).toMatchObject({ success: false, message: '套餐标题不能为空' });
      const negative = await root.post('/subscription/admin/plans', { plan: { title: 'x', price_amount: -1 } });
      expect(negative.body).toMatchObject({ success: false, message: '价格不能为负数' });
      const created = await root.post<{ id: number }>('/subscription/admin/plans', {
        plan: {
          title: 'Pro',
          price_amount: 2,
          duration_unit: 'month',
          daily_quota: 1500,
          weekly_quota: 9000,
          models: [model],
        },
      });
      expect(created.body.success).toBe(true);
      const planId = created.body.data?.id as number;

      const u = await userWithToken(s, { quota: 5_000_000 });
      await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-wal', models: model });
      await routable(s.stack.relayUrl, u.key, model);
      const user = new Api(s.stack.gatewayUrl);
      await user.login(u.username, 'password123');
      const plans = await user.get<{ plan: { id: number; daily_quota: number } }[]>('/subscription/plans');
      expect(plans.body.data?.find((p) => p.plan.id === planId)?.plan.daily_quota).toBe(1500);

      // A double click: both answer success, the wallet pays 2 x 500,000 once, one subscription.
      const buy = () => user.post('/subscription/balance/pay', { plan_id: planId, request_id: `buy-${u.userId}` });
      const [a, b] = await Promise.all([buy(), buy()]);
      expect([a.body.success, b.body.success]).toEqual([true, true]);
      const quota = async () => (await s.wallet.getWallet({ userId: u.userId })).wallet?.quota;
      expect(await quota()).toBe(4_000_000);
      const mine = async () => (await user.get<Mine>('/subscription/self')).body.data as Mine;
      const bought = await mine();
      expect(bought.billing_preference).toBe('subscription_first');
      expect(bought.subscriptions).toHaveLength(1);
      expect(bought.subscriptions[0]?.subscription.windows.map((w) => [w.period, w.limit, w.used])).toEqual([
        ['daily', 1500, 0],
        ['weekly', 9000, 0],
      ]);
      const admin = await root.get<Mine>(`/subscription/admin/users/${u.userId}/subscriptions`);
      expect(admin.body.data?.subscriptions[0]?.subscription.plan_id).toBe(planId);
      expect((await user.get(`/subscription/admin/users/${u.userId}/subscriptions`)).status).toBe(403);

      const logs = async (n: number) =>
        (
          await eventually(
            () =>
              s.logs.queryLogs({
                filter: { userId: u.userId, modelName: model, type: 2 },
                page: { page: 1, pageSize: 10 },
              }),
            (r) => r.items.length >= n,
            { what: `${n} consumption logs` },
          )
        ).items.map((l) => ({
          quota: l.quota,
          source: (JSON.parse(l.other) as { billing_source?: string }).billing_source,
        }));
      const daily = async (used: number) =>
        eventually(mine, (m) => m.subscriptions[0]?.subscription.windows[0]?.used === used, {
          what: `daily window at ${used}`,
        });
      const settled = (q: number) => eventually(quota, (v) => v === q, { what: `the wallet at ${q}` });

      // wallet_first: the wallet pays while it can, the windows stay empty.
      const pref = await user.put('/subscription/self/preference', { billing_preference: 'wallet_first' });
      expect(pref.body.data).toEqual({ billing_preference: 'wallet_first' });
      expect((await user.put('/subscription/self/preference', { billing_preference: 'both' })).status).toBe(400);
      const first = await eventually(
        () => chat(u.key, model),
        (r) => !r.message.includes('倍率或价格未配置'),
        {
          what: 'the relay pricing the model',
        },
      );
      expect(first.status).toBe(200);
      expect(await logs(1)).toEqual([{ quota: 1000, source: undefined }]);
      await settled(3_999_000);

      // subscription_first: the subscription pays (the wallet stays), its windows count the log's quota.
      await user.put('/subscription/self/preference', { billing_preference: 'subscription_first' });
      expect((await chat(u.key, model)).status).toBe(200);
      expect((await logs(2))[0]).toEqual({ quota: 1000, source: 'subscription' });
      const after = await daily(1000);
      expect(after.subscriptions[0]?.subscription.windows[1]?.used).toBe(1000);
      await eventually(
        async () => (await s.wallet.getWallet({ userId: u.userId })).wallet,
        (w) => w?.usedQuota === 2000,
        { what: 'the second request settled' },
      );
      expect(await quota()).toBe(3_999_000);

      // 500 left in the daily window: the next request falls back to the wallet.
      expect((await chat(u.key, model)).status).toBe(200);
      expect((await logs(3))[0]).toEqual({ quota: 1000, source: undefined });
      await settled(3_998_000);
      expect((await mine()).subscriptions[0]?.subscription.windows.map((w) => w.used)).toEqual([1000, 1000]);
    } finally {
      await setOption(s, 'ModelPrice', '{}');
    }
  });
});
