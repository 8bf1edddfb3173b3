/** Requests and tokens per minute, shared through the real Redis (as between relay replicas). */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { connectRedis, type Redis } from '@aigw/common';
import { eventually } from '@aigw/testkit';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimiter } from '../src/data/rate-limiter.ts';

let a: Redis;
let b: Redis;
beforeAll(async () => {
  const prefix = `rl-test-${randomBytes(4).toString('hex')}:`;
  a = await connectRedis(process.env.REDIS_URL as string, prefix);
  b = await connectRedis(process.env.REDIS_URL as string, prefix);
});
afterAll(async () => {
  await a?.quit();
  await b?.quit();
});

describe('relay rate limits', () => {
  it('when two replicas share a token RPM limit, then the limit counts both', async () => {
    const limits = { tokenRpm: 3, tokenTpm: 0, userRpm: 0, userTpm: 0 };
    const one = rateLimiter(a, limits);
    const two = rateLimiter(b, limits);
    expect(await one.check(7, 1)).toEqual({ ok: true });
    expect(await two.check(7, 1)).toEqual({ ok: true });
    expect(await one.check(7, 1)).toEqual({ ok: true });
    expect(await two.check(7, 1)).toEqual({ ok: false, subject: 'token', what: 'rpm' });
    expect(await two.check(8, 1)).toEqual({ ok: true });
  });

  it('when a user used their tokens per minute, then the next request is refused', async () => {
    const limiter = rateLimiter(a, { tokenRpm: 0, tokenTpm: 0, userRpm: 100, userTpm: 50 });
    expect(await limiter.check(1, 42)).toEqual({ ok: true });
    limiter.addTokens(1, 42, 60);
    await new Promise((r) => setTimeout(r, 50));
    expect(await limiter.check(1, 42)).toEqual({ ok: false, subject: 'user', what: 'tpm' });
  });

  it('when Redis does not answer, then requests are allowed at once (fail open) and counted again once it does', async () => {
    // A real client whose server is gone: nothing listens on the port any more.
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as { port: number }).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const gone = new IORedis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
    gone.on('error', () => undefined);
    const opened: unknown[] = [];
    const limiter = rateLimiter(gone, { tokenRpm: 0, tokenTpm: 0, userRpm: 1, userTpm: 0 }, '', (e) => opened.push(e));
    const t0 = Date.now();
    for (let i = 0; i < 3; i++) expect(await limiter.check(0, 77)).toEqual({ ok: true });
    expect(Date.now() - t0).toBeLessThan(500);
    expect(limiter.failedOpen()).toBe(3);
    expect(opened).toHaveLength(1);
    gone.disconnect();
    // The same limits on a Redis that answers: enforced.
    const up = rateLimiter(a, { tokenRpm: 0, tokenTpm: 0, userRpm: 1, userTpm: 0 });
    expect(await up.check(0, 77)).toEqual({ ok: true });
    expect(await up.check(0, 77)).toEqual({ ok: false, subject: 'user', what: 'rpm' });
    expect(up.failedOpen()).toBe(0);
  });

  it('when no limit is set, then Redis is not asked', async () => {
    const limiter = rateLimiter(a, { tokenRpm: 0, tokenTpm: 0, userRpm: 0, userTpm: 0 });
    expect(limiter.enabled).toBe(false);
    expect(await limiter.check(1, 1)).toEqual({ ok: true });
  });

  it("when two replicas share new-api's model request limits, then both count, a group has its own pair and the refusal says when to retry", async () => {
    const settings = {
      enabled: true,
      minutes: 1,
      total: 3,
      success: 2,
      groups: { vip: [0, 5] } as Record<string, unknown>,
    };
    const one = rateLimiter(a, { tokenRpm: 0, tokenTpm: 0, userRpm: 0, userTpm: 0 }, '', undefined, () => settings);
    const two = rateLimiter(b, { tokenRpm: 0, tokenTpm: 0, userRpm: 0, userTpm: 0 }, '', undefined, () => settings);
    expect(one.enabled).toBe(true);
    const user = 900_000 + Math.floor(Math.random() * 1000);
    // Two successes (one per replica) reach the success limit.
    expect(await one.check(0, user, 'default')).toEqual({ ok: true });
    one.success(user, 'default');
    expect(await two.check(0, user, 'default')).toEqual({ ok: true });
    two.success(user, 'default');
    const refused = await eventually(
      () => one.check(0, user, 'default'),
      (v) => !v.ok,
    );
    expect(refused).toMatchObject({ ok: false, what: 'model_success', limit: 2, minutes: 1 });
    expect((refused as { retryAfter: number }).retryAfter).toBeGreaterThan(0);
    expect((refused as { retryAfter: number }).retryAfter).toBeLessThanOrEqual(60);
    // The vip group: no total limit, five successes.
    expect(await two.check(0, user, 'vip')).toEqual({ ok: true });

    // Failures count towards the total: three requests, none successful, then refused on either replica.
    const other = user + 1;
    for (const r of [one, two, one]) expect(await r.check(0, other, 'default')).toEqual({ ok: true });
    expect(await two.check(0, other, 'default')).toMatchObject({ ok: false, what: 'model_total', limit: 3 });

    settings.enabled = false;
    expect(one.enabled).toBe(false);
    expect(await one.check(0, other, 'default')).toEqual({ ok: true });
  });
});

describe("a token's own limits (rpm_limit, tpm_limit, concurrency_limit)", () => {
  const none = { tokenRpm: 0, tokenTpm: 0, userRpm: 0, userTpm: 0 };
  const tokenId = () => 800_000 + Math.floor(Math.random() * 100_000);

  it("when two replicas check one token's own RPM, then they hold it together, and the lower of it and TOKEN_RPM applies", async () => {
    const one = rateLimiter(a, none);
    const two = rateLimiter(b, none);
    expect(one.enabled).toBe(false);
    const id = tokenId();
    const own = { rpm: 2, tpm: 0, concurrency: 0 };
    expect(await one.check(id, 1, 'default', own)).toEqual({ ok: true });
    expect(await two.check(id, 1, 'default', own)).toEqual({ ok: true });
    expect(await one.check(id, 1, 'default', own)).toEqual({ ok: false, subject: 'token', what: 'rpm' });
    // Another token is not affected; a token without its own limit is not counted.
    expect(await two.check(id + 1, 1, 'default', own)).toEqual({ ok: true });
    expect(await two.check(id + 2, 1, 'default', { rpm: 0, tpm: 0, concurrency: 0 })).toEqual({ ok: true });
    // TOKEN_RPM 1 is lower than the token's 5: 1 applies.
    const capped = rateLimiter(a, { ...none, tokenRpm: 1 });
    const id2 = tokenId();
    expect(await capped.check(id2, 1, 'default', { rpm: 5, tpm: 0, concurrency: 0 })).toEqual({ ok: true });
    expect(await capped.check(id2, 1, 'default', { rpm: 5, tpm: 0, concurrency: 0 })).toMatchObject({ ok: false });
  });

  it('when a token used its own TPM, then its next request is refused on the other replica', async () => {
    const one = rateLimiter(a, none);
    const two = rateLimiter(b, none);
    const id = tokenId();
    const own = { rpm: 0, tpm: 100, concurrency: 0 };
    expect(await one.check(id, 1, 'default', own)).toEqual({ ok: true });
    one.addTokens(id, 1, 150, own.tpm);
    const v = await eventually(
      () => two.check(id, 1, 'default', own),
      (r) => !r.ok,
    );
    expect(v).toEqual({ ok: false, subject: 'token', what: 'tpm' });
  });

  it('when two replicas share a concurrency limit, then slots are held together, freed on release, and a killed replica frees its slot when its lease ends', async () => {
    const one = rateLimiter(a, none, '', undefined, undefined, 400);
    const two = rateLimiter(b, none, '', undefined, undefined, 400);
    const id = tokenId();
    const s1 = await one.acquire(id, 2);
    const s2 = await two.acquire(id, 2);
    expect(s1.ok && s2.ok).toBe(true);
    // Held past several leases: renewed while the request runs.
    await new Promise((r) => setTimeout(r, 900));
    expect(await one.acquire(id, 2)).toEqual({ ok: false, limit: 2, retryAfter: 1 });
    if (s1.ok) {
      s1.release();
      s1.release(); // idempotent
    }
    const s3 = await eventually(
      () => two.acquire(id, 2),
      (s) => s.ok,
    );
    expect(await one.acquire(id, 2)).toMatchObject({ ok: false });
    // A replica killed while holding a slot (its connection gone, no renewal, no release).
    const prefix = (a.options.keyPrefix as string) ?? '';
    const doomed = await connectRedis(process.env.REDIS_URL as string, prefix);
    const killed = rateLimiter(doomed, none, '', undefined, undefined, 400);
    if (s3.ok) s3.release();
    const held = await eventually(
      () => killed.acquire(id, 2),
      (s) => s.ok,
    );
    expect(held.ok).toBe(true);
    doomed.disconnect();
    // Two held (s2 and the killed replica's): refused until the dead lease ends.
    expect(await one.acquire(id, 2)).toMatchObject({ ok: false });
    const t0 = Date.now();
    const freed = await eventually(
      () => one.acquire(id, 2),
      (s) => s.ok,
    );
    expect(freed.ok).toBe(true);
    expect(Date.now() - t0).toBeLessThan(2_000);
    if (freed.ok) freed.release();
    if (s2.ok) s2.release();
  });
});
