/** Relay process leases in the real Redis: renewed by the relay, watched by billing (docs/reliability.md). */
import { randomBytes } from 'node:crypto';
import { privateRedis } from '@aigw/local-stack/stack';
import { eventually } from '@aigw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectRedis,
  RELAY_LEASE_FENCE_MS,
  RELAY_LEASES_KEY,
  type Redis,
  type RenewThroughPeer,
  redisLease,
  renewRelayLease,
  renewRelayLeaseFor,
  watchRelayLeases,
} from '../src/index.ts';

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

  it('when a hold carries the relay lease age, then that age decides, however late billing placed it', async () => {
    let now = 0;
    let relayNow = 0;
    const r = renewRelayLease(redis, 'abab0007', 60_000, { fenceMs: 0, clock: () => relayNow });
    await eventually(
      async () => (await redis.zscore(RELAY_LEASES_KEY, 'abab0007')) !== null,
      (v) => v,
      { what: 'the first renewal' },
    );
    // The relay's own clock: its renewal was confirmed at 0, so 1.5 s later its lease age is 1.5 s.
    relayNow = 1_500;
    expect(r.age()).toBe(1_500);
    const watch = watchRelayLeases(redis, { everyMs: 1_000, lapseMs: 1_000, holdGraceMs: 0, clock: () => now });
    await watch.check();
    now = 800;
    await watch.check();
    now = 1_600;
    await watch.check();
    // Placed by billing 9 s after the lease last moved (a backlog), but sent by a relay whose lease
    // was 1.5 s old: given back. Sent with an age past RELAY_LEASE_FENCE_MS: the relay was alive
    // then and cut off from Redis, its settle will come.
    expect(watch.lapsed('abab0007', 9_000, r.age())).toBe(true);
    expect(watch.lapsed('abab0007', 9_000, RELAY_LEASE_FENCE_MS)).toBe(true);
    expect(watch.lapsed('abab0007', 0, RELAY_LEASE_FENCE_MS + 1)).toBe(false);
    r.stop();
    watch.stop();
  });
});

/**
 * Renewal through billing: a relay whose own write to Redis fails renews through billing, which
 * writes it with its own connection. Each side here has its own Redis connection, cut by
 * disconnecting it; `billing` stands for billing's (its lease watch reads through it too).
 */
describe('relay lease renewal through billing', () => {
  const FENCE = 300;
  const LAPSE = 600;
  /** Billing's RenewRelayLease over its own connection (what the gRPC handler does), or unreachable. */
  const through =
    (billing: Redis, reachable = () => true): RenewThroughPeer =>
    async (renewal, deadlineMs) => {
      if (!reachable()) throw new Error('billing unreachable');
      return renewRelayLeaseFor(billing, renewal, (deadlineMs * 3) / 4);
    };
  /** A relay renewing every 50 ms over its own connection, watched by billing over another. */
  async function setup(instance: string, reachable?: () => boolean, on: Redis = redis) {
    const own = on.duplicate();
    const billing = on.duplicate();
    const fences: boolean[] = [];
    const r = renewRelayLease(own, instance, 50, {
      fenceMs: FENCE,
      onFence: (f) => fences.push(f),
      viaPeer: through(billing, reachable),
    });
    const watch = watchRelayLeases(billing, { everyMs: 50, lapseMs: LAPSE });
    await eventually(
      async () => (await on.zscore(RELAY_LEASES_KEY, instance)) !== null,
      (v) => v,
      { what: 'the first renewal' },
    );
    await watch.check();
    const stop = () => {
      r.stop();
      watch.stop();
      own.disconnect();
      billing.disconnect();
    };
    return { own, billing, fences, r, watch, stop };
  }

  it('when the relay is cut off from Redis but billing is not, then its lease keeps moving: not fenced, holds not lapsed', async () => {
    const t = await setup('acac0008');
    t.own.disconnect();
    const before = await redis.zscore(RELAY_LEASES_KEY, 'acac0008');
    // Past the fence and the lapse (wall-clock time passing is the scenario).
    await sleep(LAPSE + 300);
    await t.watch.check();
    expect(await redis.zscore(RELAY_LEASES_KEY, 'acac0008')).not.toBe(before);
    expect(t.fences).toEqual([]);
    expect(t.r.age()).toBeLessThan(FENCE);
    // A hold sent just now, and one sent right after the cut: neither is given back.
    expect(t.watch.lapsed('acac0008', Date.now(), t.r.age())).toBe(false);
    expect(t.watch.lapsed('acac0008', Date.now(), 0)).toBe(false);
    t.stop();
  });

  it('when neither the relay nor billing reaches Redis, then the relay is not fenced, its lease age grows, and nothing lapses', async () => {
    const t = await setup('adad0009');
    t.own.disconnect();
    t.billing.disconnect();
    await sleep(LAPSE + 300);
    await t.watch.check();
    // Billing answered that it cannot reach Redis either: no billing replica on that Redis can read
    // the leases, so the fence waits; the age is not refreshed (holds sent now stay past a lapse).
    expect(t.fences).toEqual([]);
    expect(t.r.fenced()).toBe(false);
    expect(t.r.age()).toBeGreaterThan(FENCE);
    expect(t.watch.lapsed('adad0009', Date.now(), 0)).toBe(false);
    t.stop();
  });

  it('when the relay reaches neither Redis nor billing, then it is fenced and its lease lapses', async () => {
    let billingUp = true;
    const t = await setup('aeae0010', () => billingUp);
    t.own.disconnect();
    billingUp = false;
    await eventually(
      () => t.r.fenced(),
      (v) => v,
      { what: 'the fence', timeoutMs: 3_000 },
    );
    expect(t.fences).toEqual([true]);
    await eventually(
      async () => {
        await t.watch.check();
        return t.watch.lapsed('aeae0010', Date.now(), 0);
      },
      (v) => v,
      { what: 'the lapse', timeoutMs: 3_000 },
    );
    t.stop();
  });

  it('when Redis refuses writes but still serves reads, then billing says so and the relay is fenced: its lease can lapse', async () => {
    // A private Redis (the shared one is left alone) that refuses writes without a replica.
    const server = await privateRedis();
    const admin = await connectRedis(server.url, `lease-test-${randomBytes(4).toString('hex')}:`);
    try {
      const t = await setup('afaf0011', undefined, admin);
      await admin.config('SET', 'min-replicas-to-write', '1');
      expect(await renewRelayLeaseFor(t.billing, { instance: 'afaf0011', score: 1 }, 500)).toBe('readable');
      await eventually(
        () => t.r.fenced(),
        (v) => v,
        { what: 'the fence', timeoutMs: 3_000 },
      );
      await eventually(
        async () => {
          await t.watch.check();
          return t.watch.lapsed('afaf0011', Date.now(), 0);
        },
        (v) => v,
        { what: 'the lapse', timeoutMs: 3_000 },
      );
      t.stop();
    } finally {
      admin.disconnect();
      await server.kill();
    }
  });
});

describe('a job lease (one runner at a time)', () => {
  it('when one process holds it, then another cannot take, renew or release it; it is free again once released or expired', async () => {
    const a = redisLease(redis, 'job-lease', 10_000, 'a');
    const b = redisLease(redis, 'job-lease', 150, 'b');
    expect(await a.acquire()).toBe(true);
    expect(await a.acquire()).toBe(true);
    expect(await b.acquire()).toBe(false);
    expect(await b.renew()).toBe(false);
    await b.release();
    expect(await redis.get('job-lease')).toBe('a');
    expect(await a.renew()).toBe(true);
    await a.release();
    expect(await a.renew()).toBe(false);
    expect(await b.acquire()).toBe(true);
    // b's lease expires unless renewed: then a takes it.
    await eventually(
      () => a.acquire(),
      (ok) => ok,
      { what: 'the expired lease taken' },
    );
    expect(await redis.get('job-lease')).toBe('a');
    await a.release();
  });
});
