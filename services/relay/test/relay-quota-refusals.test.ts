/**
 * Refusals for quota the relay cannot reserve: the client reads billing's reason once
 * (用户额度不足 or 令牌额度不足), not a prefix that repeats it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProvider, startFakeProvider } from './fakes/fake-provider.ts';
import {
  createChannel,
  modelName,
  type RelayStack,
  routable,
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
});
