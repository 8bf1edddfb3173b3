/** Relay process leases in the real Redis: renewed by the relay, watched by billing (docs/reliability.md). */
import { randomBytes } from 'node:crypto';
import { eventually } from '@aigw/common/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, RELAY_LEASES_KEY, type Redis, renewRelayLease, watchRelayLeases } from '../src/index.ts';

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

describe('relay lease fence', () => {
  it('when a relay cannot renew for the fence time, then it is fenced once, and unfenced once a renewal succeeds again', async () => {
    const own = redis.duplicate();
    const changes: boolean[] = [];
    const r = renewRelayLease(own, 'eeee0005', 50, { fenceMs: 150, onFence: (f) => changes.push(f) });
    await eventually(
      async () => (await redis.zscore(RELAY_LEASES_KEY, 'eeee0005')) !== null,
      (v) => v,
      { what: 'the first renewal' },
    );
    // Renewed every 50 ms: never fenced while Redis answers (wall-clock time passing is the scenario).
    await sleep(400);
    expect(changes).toEqual([]);
    own.disconnect();
    await eventually(
      () => r.fenced(),
      (v) => v,
      { what: 'the fence', timeoutMs: 3_000 },
    );
    expect(changes).toEqual([true]);
    own.connect();
    await eventually(
      () => r.fenced(),
      (v) => !v,
      { what: 'the fence lifted', timeoutMs: 5_000 },
    );
    expect(changes).toEqual([true, false]);
    r.stop();
    own.disconnect();
  });

  it('when a lease lapsed, then holds placed up to the grace after it last moved count as lapsed, later ones do not', async () => {
    let now = 0;
    const r = renewRelayLease(redis, 'ffff0006', 10_000);
    const watch = watchRelayLeases(redis, { everyMs: 1_000, lapseMs: 1_000, holdGraceMs: 3_000, clock: () => now });
    await watch.check();
    now = 500;
    await watch.check();
    now = 1_600;
    await watch.check();
    // The lease stopped moving at 0 (billing's clock). A relay killed right after its last renewal
    // placed its last holds within a renewal period: given back. A hold placed past the grace came
    // from a relay still alive then (one that cannot reach Redis): left to its settle.
    expect(watch.lapsed('ffff0006')).toBe(true);
    expect(watch.lapsed('ffff0006', 0)).toBe(true);
    expect(watch.lapsed('ffff0006', 2_000)).toBe(true);
    expect(watch.lapsed('ffff0006', 3_500)).toBe(false);
    r.stop();
    watch.stop();
  });
});
