/**
 * A wallet change made outside the request path (root sets a user's quota through the gateway)
 * reaches the relay as an entity-changed event: the relay drops the user's cached balance, so
 * the next request pre-consumes again and is refused instead of being served on a balance that
 * no longer exists (the relay skips pre-consume while a cached balance looks ample).
 */

import { createInternalAuth, createLogger, keysOf, runWithInternalAuth } from '@aigw/common';
import { stackKeys } from '@aigw/local-stack/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from '../../gateway/test/billing-harness.ts';
import { createApp } from '../src/app.ts';
import { readConfig } from '../src/config.ts';
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
/** A second relay replica on the same stack (its own caches, its own event consumer group). */
let second: Awaited<ReturnType<typeof createApp>>;
let secondUrl: string;
// Cached balances and identities far outlive the test: only the event can explain a refusal.
const TTLS = { RELAY_CACHE_TTL_MS: '600000', RELAY_BALANCE_TTL_MS: '600000' };

beforeAll(async () => {
  s = await startRelayStack(TTLS);
  fake = await startFakeProvider({ kind: 'openai', key: 'up-wal', reply: 'ok' });
  const config = readConfig({
    ...s.stack.env,
    SERVICE_NAME: 'relay',
    HTTP_PORT: '0',
    GRPC_PORT: '0',
    METRICS_PORT: '0',
    MONGO_DB: `aigw_relay_${s.stack.id}`,
  });
  second = await runWithInternalAuth(createInternalAuth(keysOf(stackKeys(), 'relay')), async () => {
    const app = await createApp(config, createLogger('relay-2', 'warn'));
    await app.start();
    return app;
  });
  secondUrl = `http://127.0.0.1:${second.httpPort()}`;
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
