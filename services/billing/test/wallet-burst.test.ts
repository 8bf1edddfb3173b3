import { randomBytes } from 'node:crypto';
import { AppError, createClient } from '@aigw/common';
import { type Stack, startStack } from '@aigw/local-stack/stack';
import { CreditReason, WalletService } from '@aigw/proto/billing/v1/billing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * One user's burst: the relay gives PreConsume and Refund 5 s. Billing writes a user's
 * operations in group commits, so 500 concurrent calls share a few ledger entries instead of
 * queueing 500 inserts behind each other.
 */
describe('a burst of one user against billing', () => {
  let stack: Stack;
  let wallet: ReturnType<typeof createClient<typeof WalletService>>;
  beforeAll(async () => {
    stack = await startStack({ services: ['users', 'channels', 'billing'] });
    wallet = createClient(WalletService, stack.env.BILLING_ADDR as string);
  });
  afterAll(async () => {
    wallet?.close();
    await stack?.stop();
  });

  const newUser = async (quota: number) => {
    const userId = 800_000 + Math.floor(Math.random() * 100_000);
    await wallet.credit({
      requestId: `seed-${randomBytes(6).toString('hex')}`,
      userId,
      amount: quota,
      reason: CreditReason.TOPUP,
      username: 'burst',
    });
    return userId;
  };
  const pct = (xs: number[], p: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
  };
  const timed = async <T>(fn: () => Promise<T>) => {
    const t0 = performance.now();
    try {
      return { ok: true as const, value: await fn(), ms: performance.now() - t0 };
    } catch (err) {
      return { ok: false as const, code: err instanceof AppError ? err.code : String(err), ms: performance.now() - t0 };
    }
  };

  it('when 500 requests of one user pre-consume at once and then refund, then every call answers within its deadline and the wallet is whole again', async () => {
    const userId = await newUser(500 * 1_500);
    const rids = Array.from({ length: 500 }, (_, i) => `burst-${randomBytes(4).toString('hex')}-${i}`);
    const holds = await Promise.all(
      rids.map((requestId) => timed(() => wallet.preConsume({ requestId, userId, tokenId: 0, amount: 1_500 }))),
    );
    const refunds = await Promise.all(rids.map((requestId) => timed(() => wallet.refund({ requestId, userId }))));
    const holdMs = holds.map((h) => h.ms);
    const refundMs = refunds.map((h) => h.ms);
    console.log(
      `pre-consume x500 (one user): p50 ${pct(holdMs, 50).toFixed(0)} ms, p99 ${pct(holdMs, 99).toFixed(0)} ms, ` +
        `max ${Math.max(...holdMs).toFixed(0)} ms, errors ${holds.filter((h) => !h.ok).length}; ` +
        `refund x500: p50 ${pct(refundMs, 50).toFixed(0)} ms, p99 ${pct(refundMs, 99).toFixed(0)} ms, errors ${refunds.filter((h) => !h.ok).length}`,
    );
    expect(holds.filter((h) => !h.ok)).toEqual([]);
    expect(refunds.filter((h) => !h.ok)).toEqual([]);
    expect(pct(holdMs, 99)).toBeLessThan(5_000);
    expect(pct(refundMs, 99)).toBeLessThan(5_000);
    const w = (await wallet.getWallet({ userId })).wallet;
    expect(w?.quota).toBe(500 * 1_500);
    // Replays answer what was recorded and change nothing.
    const again = await wallet.refund({ requestId: rids[0] as string, userId });
    expect(again.refunded).toBe(1_500);
    expect((await wallet.getWallet({ userId })).wallet?.quota).toBe(500 * 1_500);
  });

  it('when 500 requests of one user compete for a wallet worth 10 of them, then 10 hold, the rest get 用户额度不足, none fails', async () => {
    const userId = await newUser(10 * 1_500);
    const rids = Array.from({ length: 500 }, (_, i) => `small-${randomBytes(4).toString('hex')}-${i}`);
    const holds = await Promise.all(
      rids.map((requestId) => timed(() => wallet.preConsume({ requestId, userId, tokenId: 0, amount: 1_500 }))),
    );
    const codes = holds.map((h) => (h.ok ? 'OK' : h.code));
    expect(codes.filter((c) => c === 'OK')).toHaveLength(10);
    expect(codes.filter((c) => c === 'FAILED_PRECONDITION')).toHaveLength(490);
    expect(
      pct(
        holds.map((h) => h.ms),
        99,
      ),
    ).toBeLessThan(5_000);
    expect((await wallet.getWallet({ userId })).wallet?.quota).toBe(0);
    // A replayed pre-consume answers its first result.
    const first = rids[codes.indexOf('OK')] as string;
    expect((await wallet.preConsume({ requestId: first, userId, tokenId: 0, amount: 1_500 })).preConsumed).toBe(1_500);
    expect((await wallet.getWallet({ userId })).wallet?.quota).toBe(0);
  });

  it('when a refund arrives before its pre-consume (the caller gave up waiting), then the late pre-consume is refused', async () => {
    const userId = await newUser(10_000);
    const requestId = `late-${randomBytes(6).toString('hex')}`;
    expect((await wallet.refund({ requestId, userId })).refunded).toBe(0);
    await expect(wallet.preConsume({ requestId, userId, tokenId: 0, amount: 1_000 })).rejects.toMatchObject({
      code: 'FAILED_PRECONDITION',
    });
    expect((await wallet.getWallet({ userId })).wallet?.quota).toBe(10_000);
  });

  it('when a relay asks for a wallet slice, then it is granted up to half a short balance, refused below one bound with 用户额度不足, and malformed asks get a 4xx error', async () => {
    const userId = await newUser(1_000);
    const rid = () => `p1-${randomBytes(4).toString('hex')}-slice`;
    const ask = (amount: number, sliceMin: number, tokenId = 0) =>
      timed(() => wallet.preConsume({ requestId: rid(), userId, tokenId, amount, walletSlice: true, sliceMin }));
    const first = await ask(800, 100);
    expect(first.ok && first.value.preConsumed).toBe(500);
    const second = await ask(800, 100);
    expect(second.ok && second.value.preConsumed).toBe(250);
    // 250 left: half would leave less than one bound, so all of it.
    const third = await ask(800, 200);
    expect(third.ok && third.value.preConsumed).toBe(250);
    const short = await ask(800, 100);
    expect(short.ok ? 'granted' : short.code).toBe('FAILED_PRECONDITION');
    expect((await ask(100, 200)).ok ? 'granted' : 'refused').toBe('refused');
    const bad = await timed(() =>
      wallet.preConsume({ requestId: rid(), userId, tokenId: 0, amount: 100, walletSlice: true, sliceMin: 200 }),
    );
    expect(bad.ok ? 'granted' : bad.code).toBe('INVALID_ARGUMENT');
    const withToken = await ask(800, 100, 12345);
    expect(withToken.ok ? 'granted' : withToken.code).toBe('INVALID_ARGUMENT');
    expect((await wallet.getWallet({ userId })).wallet?.quota).toBe(0);
  });

  it('when a pre-consume names a request id with a dot, then it alone is refused with INVALID_ARGUMENT and the same round still holds the others', async () => {
    const userId = await newUser(1_000);
    const [dotted, plain] = await Promise.all([
      timed(() =>
        wallet.preConsume({ requestId: `p1.${randomBytes(4).toString('hex')}`, userId, tokenId: 0, amount: 100 }),
      ),
      timed(() =>
        wallet.preConsume({ requestId: `p1-${randomBytes(4).toString('hex')}`, userId, tokenId: 0, amount: 100 }),
      ),
    ]);
    expect(dotted.ok ? 'held' : dotted.code).toBe('INVALID_ARGUMENT');
    expect(plain.ok && plain.value.preConsumed).toBe(100);
    expect((await wallet.getWallet({ userId })).wallet?.quota).toBe(900);
  });
});
