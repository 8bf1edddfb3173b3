/**
 * Cache invalidation end to end: the relay keeps tokens and users in memory (RELAY_CACHE_TTL_MS,
 * 30 s by default); an admin's change reaches it as an entity-changed event, so a disabled user
 * or token is refused within a second or two instead of half a minute.
 */

import { ManageAction } from '@aigw/proto/users/v1/users';
import { eventually } from '@aigw/testkit';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import {
  createChannel,
  modelName,
  type RelayStack,
  routable,
  startRelayStack,
  userWithToken,
} from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let s: RelayStack;
let fake: FakeProvider;
const ROOT = { userId: 1, role: 100, username: 'root' };

beforeAll(async () => {
  // A TTL far beyond the test's waits: only the events can explain a quick refusal.
  s = await startRelayStack({ RELAY_CACHE_TTL_MS: '600000' });
  fake = await startFakeProvider({ kind: 'openai', key: 'up-inv', reply: 'ok' });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});

async function chat(key: string, model: string): Promise<number> {
  const res = await fetch(`${s.stack.relayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** The status the relay answers within 5 s of a change (polled every 100 ms). */
const statusSoon = (key: string, model: string, want: number) =>
  eventually(
    () => chat(key, model),
    (st) => st === want,
    5_000,
  );

describe('relay caches follow admin changes', () => {
  it('when an admin disables a user, then the relay refuses them at once; enabled again, they are served', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-inv', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    expect(await chat(u.key, model)).toBe(200); // the user is cached now

    await s.users.manageUser({ actor: ROOT, id: u.userId, action: ManageAction.DISABLE });
    expect(await statusSoon(u.key, model, 403)).toBe(403);

    await s.users.manageUser({ actor: ROOT, id: u.userId, action: ManageAction.ENABLE });
    expect(await statusSoon(u.key, model, 200)).toBe(200);

    await s.users.manageUser({ actor: ROOT, id: u.userId, action: ManageAction.DELETE });
    expect(await statusSoon(u.key, model, 401)).toBe(401);
  });

  it('when a token is disabled, then the relay refuses it at once', async () => {
    const model = modelName('gpt-4o-mini');
    const u = await userWithToken(s);
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-inv', models: model });
    await routable(s.stack.relayUrl, u.key, model);
    expect(await chat(u.key, model)).toBe(200);

    await s.tokens.updateTokenStatus({ userId: u.userId, id: u.tokenId, status: 2 });
    expect(await statusSoon(u.key, model, 401)).toBe(401);
  });
});
