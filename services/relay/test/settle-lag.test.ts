/** The relay's read of billing's settle lag in the real Redis, and what it logs when Redis goes away. */
import { randomBytes } from 'node:crypto';
import { connectRedis, type Logger, type Redis } from '@aigw/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTLE_LAG_KEY, settleLagWatch } from '../src/data/settle-lag.ts';

let redis: Redis;
beforeAll(async () => {
  redis = await connectRedis(process.env.REDIS_URL as string, `lag-test-${randomBytes(4).toString('hex')}:`);
});
afterAll(async () => {
  await redis?.quit();
});

/** The lines a logger was given: level, message and fields. */
function capturedLogger() {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown> | string, msg?: string): void => {
      lines.push(typeof fields === 'string' ? { level, msg: fields, fields: {} } : { level, msg: msg ?? '', fields });
    };
  const logger = { warn: at('warn'), info: at('info'), error: at('error'), debug: at('debug') };
  return { lines, logger: logger as unknown as Logger };
}

describe('settle lag reads', () => {
  it('when Redis goes away, then one warn line without a stack is logged per outage, every request pre-consumes, and its end is logged once', async () => {
    const { lines, logger } = capturedLogger();
    const watch = settleLagWatch({ redis, logger, maxLagMs: 5_000, maxLagEvents: 100, everyMs: 3_600_000 });
    try {
      await redis.set(SETTLE_LAG_KEY, JSON.stringify({ ms: 10, events: 0 }), 'EX', 60);
      await watch.check();
      expect(watch.behind()).toBe(false);

      redis.disconnect();
      for (let i = 0; i < 5; i++) await watch.check();
      expect(watch.behind()).toBe(true);
      const warns = lines.filter((l) => l.level === 'warn' && l.msg.startsWith('could not read the settle lag'));
      expect(warns).toHaveLength(1);
      expect(typeof warns[0]?.fields.err).toBe('string');
      expect(JSON.stringify(warns[0]?.fields)).not.toContain('    at ');

      await redis.connect();
      await watch.check();
      expect(watch.behind()).toBe(false);
      expect(lines.filter((l) => l.msg === 'settle lag readable again')).toMatchObject([
        { level: 'info', fields: { failures: 5 } },
      ]);

      // A second outage is told again, once.
      redis.disconnect();
      await watch.check();
      await watch.check();
      expect(lines.filter((l) => l.level === 'warn')).toHaveLength(2);
      await redis.connect();
    } finally {
      watch.stop();
    }
  });
});
