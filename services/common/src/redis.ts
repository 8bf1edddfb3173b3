import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export type { Redis };

/**
 * Creates a Redis client that fails fast on start-up and reconnects afterwards. A lost connection
 * is logged once per outage (a warning, then an info line when it answers again): without an error
 * listener ioredis printed an unstructured "[ioredis] Unhandled error event" with a stack trace to
 * stderr on every reconnect attempt, several a second in every service while Redis was down.
 */
export async function connectRedis(url: string, keyPrefix = '', logger?: Logger): Promise<Redis> {
  const client = new Redis(url, {
    keyPrefix,
    lazyConnect: true,
    maxRetriesPerRequest: 3,
    enableAutoPipelining: true,
  });
  let lostAt = 0;
  let failures = 0;
  client.on('error', (err: Error) => {
    failures++;
    if (lostAt) return;
    lostAt = Date.now();
    logger?.warn({ err: err.message }, 'redis: connection lost, reconnecting');
  });
  client.on('ready', () => {
    if (!lostAt) return;
    logger?.info({ downMs: Date.now() - lostAt, failedAttempts: failures }, 'redis: connection back');
    lostAt = 0;
    failures = 0;
  });
  await client.connect();
  return client;
}

/** Readiness probe for a Redis client. */
export async function pingRedis(client: Redis): Promise<void> {
  await client.ping();
}
