/**
 * Refusals for quota the relay cannot reserve: the client reads billing's reason once
 * (用户额度不足 or 令牌额度不足), not a prefix that repeats it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProvider, startFakeProvider } from './fakes/fake-provider.ts';
import {
  createChannel,
  eventually,
  modelName,
  type RelayStack,
  routable,
  setOption,
  startRelayStack,
  userWithToken,
} from './relay-harness.ts';

let s: RelayStack;
let fake: FakeProvider;

beforeAll(async () => {
  s = await startRelayStack();
  fake = await startFakeProvider({ kind: 'openai', key: 'up-quota', reply: 'ok' });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});

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
    } finally {
      await setOption(s, 'ModelRequestRateLimitEnabled', 'false');
      await setOption(s, 'ModelRequestRateLimitSuccessCount', '1000');
    }
  });
});
