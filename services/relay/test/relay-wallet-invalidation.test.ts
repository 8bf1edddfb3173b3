/**
 * A wallet change made outside the request path (root sets a user's quota through the gateway)
 * reaches the relay as an entity-changed event: the relay drops the user's cached balance, so
 * the next request pre-consumes again and is refused instead of being served on a balance that
 * no longer exists (the relay skips pre-consume while a cached balance looks ample).
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from '../../gateway/test/billing-harness.ts';
import { type FakeProvider, startFakeProvider } from './fakes/fake-provider.ts';
import {
  createChannel,
  eventually,
  modelName,
  type RelayStack,
  routable,
  startRelayStack,
  userWithToken,
} from './relay-harness.ts';

let s: RelayStack;
let fake: FakeProvider;

beforeAll(async () => {
  // Cached balances and identities far outlive the test: only the event can explain a refusal.
  s = await startRelayStack({ RELAY_CACHE_TTL_MS: '600000', RELAY_BALANCE_TTL_MS: '600000' });
  fake = await startFakeProvider({ kind: 'openai', key: 'up-wal', reply: 'ok' });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});

async function chat(key: string, model: string): Promise<{ status: number; message: string }> {
  const res = await fetch(`${s.stack.relayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 }),
  });
  const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
  return { status: res.status, message: body.error?.message ?? '' };
}

describe('wallet changes reach the relay', () => {
  it('when root sets a served user quota to 0 through the gateway, then the next requests are refused with 用户额度不足', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s, { quota: 1_000_000_000 });
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-wal', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    // Served; the relay has seen the (large) balance and skips pre-consume from now on.
    for (let i = 0; i < 3; i++) expect((await chat(u.key, model)).status).toBe(200);

    const root = new Api(s.stack.gatewayUrl);
    await root.login('root', '123456');
    const set = await root.put('/user/', { id: u.userId, quota: 0 });
    expect(set.body).toMatchObject({ success: true });

    const after = await eventually(
      () => chat(u.key, model),
      (r) => r.status === 403,
      5_000,
    );
    expect(after).toEqual({ status: 403, message: '用户额度不足' });
    // And it stays refused.
    expect(await chat(u.key, model)).toEqual({ status: 403, message: '用户额度不足' });
  });
});
