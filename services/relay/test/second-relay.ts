/**
 * A second relay replica in the test's process, on the stack's servers: its own caches, its own
 * event consumer group, started with the relay's internal-auth keys. Kept beside the relay's
 * tests (not in @aigw/testkit, which the relay's sources must not be imported into).
 */
import { createInternalAuth, createLogger, keysOf, runWithInternalAuth } from '@aigw/common';
import { type Stack, stackKeys } from '@aigw/local-stack/stack';
import { createApp } from '../src/app.ts';
import { readConfig } from '../src/config.ts';

export type RelayApp = Awaited<ReturnType<typeof createApp>>;

/** Starts it with the stack's environment and `env` over it; `url` is its HTTP address. */
export async function startSecondRelay(
  stack: Stack,
  env: Record<string, string> = {},
  name = 'relay-2',
): Promise<{ app: RelayApp; url: string }> {
  const config = readConfig({
    ...stack.env,
    SERVICE_NAME: 'relay',
    HTTP_PORT: '0',
    GRPC_PORT: '0',
    METRICS_PORT: '0',
    MONGO_DB: `aigw_relay_${stack.id}`,
    ...env,
  });
  const app = await runWithInternalAuth(createInternalAuth(keysOf(stackKeys(), 'relay')), async () => {
    const started = await createApp(config, createLogger(name, 'warn'));
    await started.start();
    return started;
  });
  return { app, url: `http://127.0.0.1:${app.httpPort()}` };
}
