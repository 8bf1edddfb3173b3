/**
 * Refusals for quota the relay cannot reserve: the client reads billing's reason once
 * (用户额度不足 or 令牌额度不足), not a prefix that repeats it.
 */
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AdjustMode, CreditReason } from '@aigw/proto/billing/v1/billing';
import { eventually } from '@aigw/testkit';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import {
  createChannel,
  modelName,
  type RelayStack,
  routable,
  setOption,
  startRelayStack,
  userWithToken,
} from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBilled } from './expect-billed.ts';

let s: RelayStack;
let fake: FakeProvider;

beforeAll(async () => {
  // The quota warning's webhook receiver listens on loopback.
  s = await startRelayStack({ NOTIFY_PRIVATE: 'true' });
  fake = await startFakeProvider({ kind: 'openai', key: 'up-quota', reply: 'ok' });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});

/** The console's calls as the token's owner (a password login through the gateway, its session cookie). */
async function consoleApi(u: { username: string; userId: number }) {
  const login = await fetch(`${s.stack.gatewayUrl}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: u.username, password: 'password123' }),
  });
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${s.stack.gatewayUrl}${path}`, {
      method,
      headers: { cookie, 'new-api-user': String(u.userId), 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, ...((await res.json()) as { success: boolean; message: string; data: never }) };
  };
}

async function chat(key: string, model: string): Promise<{ status: number; error: { message: string; code: string } }> {
  const res = await fetch(`${s.stack.relayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 }),
  });
  const body = (await res.json()) as { error: { message: string; code: string } };
  return { status: res.status, error: body.error };
}

describe('relay quota refusals', () => {
  it('when the user has no quota, then the answer is 403 用户额度不足, said once', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s, { quota: 0 });
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-quota', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const res = await chat(u.key, model);
    expect(res.status).toBe(403);
    expect(res.error).toMatchObject({ message: '用户额度不足', code: 'insufficient_user_quota' });
  });

  it('when the token holds less than the request may cost, then the answer is 403 令牌额度不足', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s, { token: { unlimitedQuota: false, remainQuota: 1 } });
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-quota', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    const res = await chat(u.key, model);
    expect(res.status).toBe(403);
    expect(res.error).toMatchObject({ message: '令牌额度不足', code: 'insufficient_token_quota' });
  });

  it("when new-api's model request limit is on, then the third success in the window is refused with 429 and Retry-After in each API's shape", async () => {
    const bad = await setOption(s, 'ModelRequestRateLimitGroup', '{"vip": [0, 0]}').catch((e) => e);
    expect(String(bad?.message)).toContain('分组 vip 的速率限制必须是');
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-quota', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    await setOption(s, 'ModelRequestRateLimitSuccessCount', '2');
    await setOption(s, 'ModelRequestRateLimitEnabled', 'true');
    try {
      // Successes count once the relay has the options (within a second); then the limit holds.
      const refused = await eventually(
        async () => {
          const res = await fetch(`${s.stack.relayUrl}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 }),
          });
          return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
        },
        (r) => r.status === 429,
        { what: 'a 429 from the model request limit' },
      );
      expect(refused.body).toMatchObject({
        error: { message: '您已达到请求数限制：1分钟内最多请求2次', code: 'rate_limit_exceeded' },
      });
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
      const claude = await fetch(`${s.stack.relayUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': u.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(claude.status).toBe(429);
      expect(Number(claude.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await claude.json()).toMatchObject({
        type: 'error',
        error: { message: '您已达到请求数限制：1分钟内最多请求2次' },
      });
      const metrics = await fetch(`http://127.0.0.1:${s.stack.ports.relay.metrics}/metrics`).then((r) => r.text());
      expect(metrics).toMatch(/relay_requests_refused_total\{reason="model_rate_limit"\} [1-9]/);
    } finally {
      await setOption(s, 'ModelRequestRateLimitEnabled', 'false');
      await setOption(s, 'ModelRequestRateLimitSuccessCount', '1000');
    }
  });
  it("when a token has its own concurrency and RPM limits (set through /api/token), then the relay refuses beyond them with 429 and Retry-After in each API's shape, frees a slot when the client goes away, counts the refusals and bills nothing for them", async () => {
    const model = modelName('gpt-4o-mini');
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-quota', models: model });
    const u = await userWithToken(s);
    await routable(s.stack.relayUrl, u.key, model);
    const api = await consoleApi(u);
    const bad = await api('POST', '/api/token/', { name: 'bad', unlimited_quota: true, concurrency_limit: -1 });
    expect(bad.status).toBe(400);
    expect(bad.message).toContain('并发请求限制必须是 0 到 1000000000 之间的整数');
    const created = await api('POST', '/api/token/', {
      name: 'limited',
      unlimited_quota: true,
      rpm_limit: 100,
      concurrency_limit: 1,
    });
    expect(created.success).toBe(true);
    const [tok] = created.data as { id: number; key: string }[];
    expect(tok).toMatchObject({ rpm_limit: 100, tpm_limit: 0, concurrency_limit: 1 });
    const listed = await api('GET', '/api/token/?p=1&size=10');
    expect((listed.data as { items: { name: string }[] }).items.filter((t) => t.name === 'bad')).toEqual([]);
    const updated = await api('PUT', '/api/token/', { id: tok?.id, rpm_limit: 0, tpm_limit: 500_000 });
    expect(updated.data).toMatchObject({ rpm_limit: 0, tpm_limit: 500_000, concurrency_limit: 1 });
    expect((await api('GET', `/api/token/${tok?.id}`)).data).toMatchObject({
      rpm_limit: 0,
      tpm_limit: 500_000,
      concurrency_limit: 1,
    });
    const key = `sk-${tok?.key}`;
    const post = (path: string, body: unknown, headers: Record<string, string>, signal?: AbortSignal) =>
      fetch(`${s.stack.relayUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
    const chatBody = { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };

    // One slow answer holds the token's only slot: the next request is refused, in each API's shape.
    fake.set({ delayMs: 5_000 });
    try {
      const seen = fake.requests.length;
      const abort = new AbortController();
      const held = post('/v1/chat/completions', chatBody, { authorization: `Bearer ${key}` }, abort.signal).catch(
        () => undefined,
      );
      await eventually(
        () => fake.requests.length,
        (n) => n > seen,
      );
      const openai = await post('/v1/chat/completions', chatBody, { authorization: `Bearer ${key}` });
      expect(openai.status).toBe(429);
      expect(Number(openai.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await openai.json()).toMatchObject({
        error: { message: '令牌并发请求数超过限制（最多 1 个），请稍后再试', code: 'rate_limit_exceeded' },
      });
      const gemini = await post(
        `/v1beta/models/${model}:generateContent`,
        { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
        { 'x-goog-api-key': key },
      );
      expect(gemini.status).toBe(429);
      expect(gemini.headers.get('retry-after')).toBe('1');
      expect(await gemini.json()).toMatchObject({
        error: { code: 429, message: '令牌并发请求数超过限制（最多 1 个），请稍后再试' },
      });
      expect(fake.requests.length).toBe(seen + 1);
      // The client goes away: its slot is free at once (not after the 60 s lease).
      abort.abort();
      await held;
    } finally {
      fake.set({ delayMs: 0 });
    }
    const after = await eventually(
      () => post('/v1/chat/completions', chatBody, { authorization: `Bearer ${key}` }),
      (r) => r.status === 200,
      { timeoutMs: 5_000, what: 'the slot freed by the client that went away' },
    );
    expect(after.status).toBe(200);

    // A token's own RPM (set through billing as the console does): the third request in the minute
    // is refused, reaches no upstream and is not billed.
    const v = await userWithToken(s, { token: { rpmLimit: 2 } });
    for (let i = 0; i < 2; i++)
      expect((await post('/v1/chat/completions', chatBody, { authorization: `Bearer ${v.key}` })).status).toBe(200);
    const upstream = fake.requests.length;
    const claude = await post(
      '/v1/messages',
      { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      { 'x-api-key': v.key, 'anthropic-version': '2023-06-01' },
    );
    expect(claude.status).toBe(429);
    expect(Number(claude.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(claude.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(await claude.json()).toMatchObject({
      type: 'error',
      error: { message: '令牌请求频率超过限制，请稍后再试' },
    });
    expect(fake.requests.length).toBe(upstream);
    await expectBilled(s, v.userId, model, 2);

    const metrics = await fetch(`http://127.0.0.1:${s.stack.ports.relay.metrics}/metrics`).then((r) => r.text());
    const refused = (reason: string) =>
      Number(new RegExp(`relay_requests_refused_total\\{reason="${reason}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
    expect(refused('token_concurrency')).toBeGreaterThanOrEqual(2);
    expect(refused('token_rpm')).toBeGreaterThanOrEqual(1);
  });

  it("when a token's daily budget is spent (set through /api/token), then the relay refuses with 403 令牌每日预算不足 in each API's shape, the token shows exactly what it spent, and a raised budget lets it through", async () => {
    const model = modelName('gpt-4o-mini');
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-quota', models: model });
    const u = await userWithToken(s);
    await routable(s.stack.relayUrl, u.key, model);
    const api = await consoleApi(u);
    const bad = await api('POST', '/api/token/', { name: 'bad', unlimited_quota: true, budget_daily: -1 });
    expect(bad.status).toBe(400);
    expect(bad.message).toContain('每日预算必须为非负整数');
    const created = await api('POST', '/api/token/', {
      name: 'budgeted',
      unlimited_quota: true,
      budget_weekly: 1_000_000_000_000,
    });
    const [tok] = created.data as { id: number; key: string }[];
    expect(tok).toMatchObject({ budget_daily: 0, budget_weekly: 1_000_000_000_000, budget_daily_used: 0 });
    const key = `sk-${tok?.key}`;
    const chat = () =>
      fetch(`${s.stack.relayUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 }),
      });
    for (let i = 0; i < 3; i++) expect((await chat()).status).toBe(200);
    // Every settled charge counts in the day, week and month: exactly the token's used quota.
    type View = {
      used_quota: number;
      budget_daily_used: number;
      budget_weekly_used: number;
      budget_monthly_used: number;
    };
    const logs = await expectBilled(s, u.userId, model, 3);
    const charged = logs.reduce((sum, l) => sum + l.quota, 0);
    const spent = await eventually(
      async () => (await api('GET', `/api/token/${tok?.id}`)).data as View,
      (t) => t.used_quota === charged,
      { what: 'the three settled charges on the token' },
    );
    expect(spent).toMatchObject({
      budget_daily_used: charged,
      budget_weekly_used: charged,
      budget_monthly_used: charged,
    });

    // A daily budget equal to what was spent today: the next request is refused before any upstream.
    const updated = await api('PUT', '/api/token/', { id: tok?.id, budget_daily: spent.used_quota });
    expect(updated.data).toMatchObject({ budget_daily: spent.used_quota, budget_daily_used: spent.used_quota });
    // (Billing reads a token's budgets at most a second old: a request may still pass meanwhile.)
    const refused = await eventually(chat, (r) => r.status === 403, { what: 'the refusal of the spent daily budget' });
    expect(await refused.json()).toMatchObject({
      error: { message: '令牌每日预算不足', code: 'token_budget_exceeded' },
    });
    const upstream = fake.requests.length;
    const claude = await fetch(`${s.stack.relayUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(claude.status).toBe(403);
    expect(await claude.json()).toMatchObject({ type: 'error', error: { message: '令牌每日预算不足' } });
    expect(fake.requests.length).toBe(upstream);
    const listed = await api('GET', '/api/token/?p=1&size=10');
    const row = (listed.data as { items: (View & { budget_daily: number })[] }).items[0];
    expect(row?.budget_daily).toBe(spent.used_quota);
    expect(row?.budget_daily_used).toBe(row?.used_quota);

    // Raised: requests go through again and keep counting.
    await api('PUT', '/api/token/', { id: tok?.id, budget_daily: spent.used_quota * 100 });
    await eventually(chat, (r) => r.status === 200, { what: 'a request under the raised budget' });
  });

  it("when a balance falls below the user's quota warning threshold (PUT /api/user/setting, webhook), then one signed warning is sent for the crossing, not one per request, and again only after a top-up lifted it", async () => {
    const hooks: { signature: string; body: string }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        hooks.push({ signature: String(req.headers['x-webhook-signature']), body });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const model = modelName('gpt-4o-mini');
      await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-quota', models: model });
      const u = await userWithToken(s, { quota: 0 });
      await routable(s.stack.relayUrl, u.key, model);
      const api = await consoleApi(u);
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const bad = await api('PUT', '/api/user/setting', { notify_type: 'webhook', quota_warning_threshold: 10 });
      expect(bad).toMatchObject({ success: false, message: 'Webhook地址不能为空' });
      const saved = await api('PUT', '/api/user/setting', {
        notify_type: 'webhook',
        quota_warning_threshold: 9_997,
        webhook_url: url,
        webhook_secret: 'hook-secret',
      });
      expect(saved).toMatchObject({ success: true, message: '设置已更新' });
      const self = (await api('GET', '/api/user/self')).data as { setting: string };
      expect(JSON.parse(self.setting)).toEqual({
        notify_type: 'webhook',
        quota_warning_threshold: 9_997,
        webhook_url: url,
        accept_unset_model_ratio_model: false,
        record_ip_log: false,
      });
      const credit = (amount: number) =>
        s.wallet.credit({
          requestId: `warn-${u.userId}-${amount}-${Date.now()}`,
          userId: u.userId,
          amount,
          reason: CreditReason.TOPUP,
          username: u.username,
        });
      await credit(10_000);
      // Each request costs a little: the balance crosses 9,997 after a few of the eight.
      for (let i = 0; i < 8; i++) {
        const res = await fetch(`${s.stack.relayUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 }),
        });
        expect(res.status).toBe(200);
      }
      await expectBilled(s, u.userId, model, 8);
      const first = await eventually(
        () => hooks,
        (h) => h.length >= 1,
        { what: 'the quota warning webhook' },
      );
      const hook = first[0] as { signature: string; body: string };
      expect(hook.signature).toBe(createHmac('sha256', 'hook-secret').update(hook.body).digest('hex'));
      const payload = JSON.parse(hook.body) as { type: string; title: string; content: string; values: string[] };
      expect(payload).toMatchObject({ type: 'quota_exceed', title: '您的额度即将用尽' });
      expect(payload.content).toMatch(/^您的额度即将用尽，当前剩余额度为 .+，为了不影响您的使用，请及时充值。$/);
      // A top-up lifts the balance above the threshold (re-armed); an admin setting it low crosses
      // again. That second warning comes after every earlier balance was checked (one check at a
      // time per user), so two warnings now means the eight charges sent exactly one.
      await credit(5_000);
      await s.wallet.adjustQuota({
        actor: { userId: 1, role: 100, username: 'root' },
        requestId: `warn-set-${u.userId}`,
        userId: u.userId,
        username: u.username,
        mode: AdjustMode.SET,
        amount: 100,
        remark: '',
      });
      await eventually(
        () => hooks.length,
        (n) => n >= 2,
        { what: 'the warning of the second crossing' },
      );
      expect(hooks).toHaveLength(2);
    } finally {
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});
