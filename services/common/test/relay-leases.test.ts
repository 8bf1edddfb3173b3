/** Relay process leases in the real Redis: renewed by the relay, watched by billing (docs/reliability.md). */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, type Redis, renewRelayLease, watchRelayLeases } from '../src/index.ts';

let redis: Redis;
beforeAll(async () => {
  redis = await connectRedis(process.env.REDIS_URL as string, `lease-test-${randomBytes(4).toString('hex')}:`);
});
afterAll(async () => {
  await redis?.quit();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('relay leases', () => {
  it('when a relay stops renewing, then its lease lapses; a renewing one and an unknown one never do', async () => {
    const a = renewRelayLease(redis, 'aaaa0001', 50);
    const b = renewRelayLease(redis, 'bbbb0002', 50);
    const watch = watchRelayLeases(redis, { everyMs: 50, lapseMs: 400 });
    await sleep(200);
    await watch.check();
    expect(watch.lapsed('aaaa0001')).toBe(false);
    expect(watch.lapsed('bbbb0002')).toBe(false);
    a.stop();
    await sleep(700);
    await watch.check();
    expect(watch.lapsed('aaaa0001')).toBe(true);
    expect(watch.lapsed('bbbb0002')).toBe(false);
    // Never seen (another service's request ids, or a relay older than the watch's memory).
    expect(watch.lapsed('cccc0003')).toBe(false);
    b.stop();
    watch.stop();
  });

  it('when billing could not read the leases for a while (Redis down), then nothing lapses right after', async () => {
    let now = 0;
    const r = renewRelayLease(redis, 'dddd0004', 10_000);
    const watch = watchRelayLeases(redis, { everyMs: 1_000, lapseMs: 1_000, clock: () => now });
    await watch.check();
    now = 5_000;
    // The view is stale (last read 5 s ago, more than 3 reads missed): no verdicts.
    expect(watch.lapsed('dddd0004')).toBe(false);
    await watch.check();
    // Fresh again, but the lapse time starts over after the gap.
    expect(watch.lapsed('dddd0004')).toBe(false);
    now = 6_500;
    await watch.check();
    expect(watch.lapsed('dddd0004')).toBe(true);
    r.stop();
    watch.stop();
  });
});
