import { Redis } from 'ioredis';

export type { Redis };

/** Creates a Redis client that fails fast on start-up and reconnects afterwards. */
export async function connectRedis(url: string, keyPrefix = ''): Promise<Redis> {
  const client = new Redis(url, {
    keyPrefix,
    lazyConnect: true,
    maxRetriesPerRequest: 3,
    enableAutoPipelining: true,
  });
  await client.connect();
  return client;
}

/** Readiness probe for a Redis client. */
export async function pingRedis(client: Redis): Promise<void> {
  await client.ping();
}
