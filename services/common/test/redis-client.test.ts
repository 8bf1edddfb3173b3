/**
 * A service's Redis client during an outage: one warning when the connection is lost, one info
 * line when it answers again, and nothing printed by ioredis itself (before, every reconnect
 * attempt printed "[ioredis] Unhandled error event" with a stack trace to stderr). A private
 * redis-server is started, killed and started again on the same port (the shared one is left alone).
 */
import { connectRedis, type Redis } from '@aigw/common';
import { privateRedis } from '@aigw/local-stack/stack';
import pino from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let server: Awaited<ReturnType<typeof privateRedis>> | undefined;
let redis: Redis | undefined;
afterAll(async () => {
  redis?.disconnect();
  await server?.kill();
});

describe('Redis client during an outage', () => {
  it('when Redis goes away and comes back, then the service logs one warning and one recovery per outage and ioredis prints nothing', async () => {
    server = await privateRedis();
    const lines: { level: number; msg: string; failedAttempts?: number; downMs?: number }[] = [];
    const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    const printed = vi.spyOn(console, 'error');
    try {
      redis = await connectRedis(server.url, 'rc:', logger);
      await redis.set('k', 'v');

      for (let outage = 1; outage <= 2; outage++) {
        await server.kill();
        // ioredis retries every 50, 100, 150 ... ms: several failed attempts in 2 s.
        await sleep(2_000);
        expect(lines.filter((l) => l.msg === 'redis: connection lost, reconnecting')).toHaveLength(outage);
        expect(lines.filter((l) => l.level === 40)).toHaveLength(outage);

        await server.start();
        for (let i = 0; i < 100 && redis.status !== 'ready'; i++) await sleep(100);
        expect(redis.status).toBe('ready');
        const back = lines.filter((l) => l.msg === 'redis: connection back');
        expect(back).toHaveLength(outage);
        expect(back[outage - 1]?.failedAttempts).toBeGreaterThan(1);
        expect(back[outage - 1]?.downMs).toBeGreaterThanOrEqual(2_000);
        // The data is gone with the killed server (no persistence), the client works again.
        await redis.set('k', `v${outage}`);
        expect(await redis.get('k')).toBe(`v${outage}`);
      }
      expect(printed.mock.calls.filter((c) => String(c[0]).includes('[ioredis]'))).toEqual([]);
    } finally {
      printed.mockRestore();
    }
  }, 60_000);
});
