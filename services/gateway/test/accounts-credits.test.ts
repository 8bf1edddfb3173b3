import { connectMongo, createLogger } from '@aigw/common';
import { freePort, type Stack, startStack } from '@aigw/local-stack/stack';
import { eventually } from '@aigw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../billing/src/app.ts';
import { readConfig } from '../../billing/src/config.ts';
import { Client, rootClient, setOptions, uniqueUsername } from './accounts-harness.ts';

/**
 * Quota the users service grants (root's start quota, QuotaForNewUser) while billing is down:
 * registration still succeeds, the grant waits as a pending credit, and once billing is up it
 * arrives exactly once.
 */
describe('accounts: quota grants survive a billing outage', () => {
  let stack: Stack;
  let billingPort: number;
  let billing: { start(): Promise<void>; stop(): Promise<void> } | undefined;

  beforeAll(async () => {
    billingPort = await freePort();
    stack = await startStack({
      services: ['users', 'gateway'],
      env: { BILLING_ADDR: `127.0.0.1:${billingPort}`, CREDIT_RETRY_MS: '300' },
    });
  });
  afterAll(async () => {
    await billing?.stop();
    await stack?.stop();
  });

  it('when billing is down at registration, then the user is created and the gift arrives once billing is up', async () => {
    const root = await rootClient(stack.gatewayUrl);
    await setOptions(root, { QuotaForNewUser: '777' });
    const client = new Client(stack.gatewayUrl);
    const username = uniqueUsername();
    const reg = await client.post('/user/register', { username, password: 'password123', password2: 'password123' });
    expect(reg.body.success).toBe(true);
    expect((await client.login(username, 'password123')).body.data).toMatchObject({ username, quota: 0 });

    const config = readConfig({
      ...stack.env,
      SERVICE_NAME: 'billing',
      HTTP_PORT: '0',
      GRPC_PORT: String(billingPort),
      MONGO_DB: `aigw_billing_${stack.id}`,
    });
    billing = await createApp(config, createLogger('billing', stack.env.LOG_LEVEL));
    await billing.start();

    const funded = await eventually(
      () => client.get<{ quota: number }>('/user/self'),
      (r) => r.body.data?.quota === 777,
      20_000,
    );
    expect(funded.body.data?.quota).toBe(777);
    const rootSelf = await eventually(
      () => root.get<{ quota: number }>('/user/self'),
      (r) => r.body.data?.quota === 100_000_000,
      20_000,
    );
    expect(rootSelf.body.data?.quota).toBe(100_000_000);
    // Retries keep running until the outbox is empty (each grant forgotten once delivered): from
    // then on no pass delivers these grants again, and nothing was paid twice.
    const users = await connectMongo(stack.env.MONGO_URL as string, `aigw_users_${stack.id}`);
    try {
      await eventually(
        () => users.collection('users').countDocuments({ 'pending_credits.request_id': { $exists: true } }),
        (n) => n === 0,
        { timeoutMs: 20_000, what: 'no pending credit left in the outbox' },
      );
    } finally {
      await users.close();
    }
    expect((await client.get<{ quota: number }>('/user/self')).body.data?.quota).toBe(777);
    expect((await root.get<{ quota: number }>('/user/self')).body.data?.quota).toBe(100_000_000);
  });
});
