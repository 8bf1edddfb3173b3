import type { ServiceClient } from '@aigw/common';
import type { WalletService } from '@aigw/proto/billing/v1/billing';
import { describe, expect, it } from 'vitest';
import { balanceView } from './wallet.ts';

/** A WalletService answer for GetWallet only (the view reads nothing else). */
const walletOf = (quota: () => number) =>
  ({
    getWallet: async () => ({ wallet: { userId: 1, quota: quota(), usedQuota: 0, requestCount: 0 } }),
  }) as unknown as ServiceClient<typeof WalletService>;

const tick = () => new Promise((r) => setImmediate(r));

describe('skipping pre-consume', () => {
  const setup = (opts: { quota: number; behind?: boolean }) => {
    let now = 1_000_000;
    let quota = opts.quota;
    const view = balanceView({
      wallet: walletOf(() => quota),
      ttlMs: 10_000,
      factor: 100,
      horizonMs: 13_000,
      settleBehind: () => opts.behind ?? false,
      spend: () => undefined,
      clock: () => now,
    });
    return {
      view,
      advance: (ms: number) => {
        now += ms;
      },
      setQuota: (q: number) => {
        quota = q;
      },
      now: () => now,
    };
  };

  it('when no balance was read yet, then the request pre-consumes (and a read starts)', async () => {
    const { view } = setup({ quota: 1_000_000 });
    expect(view.ample(1, undefined, 100)).toBe(false);
    await tick();
    expect(view.ample(1, undefined, 100)).toBe(true);
  });

  it('when unsettled skips would pass 1/factor of the balance, then the next request pre-consumes', () => {
    const { view, now } = setup({ quota: 100_000 });
    view.observe(1, 100_000, now());
    const tickets = [];
    // 100,000 / 100 = 1,000 of unsettled spending: ten requests of 100.
    while (view.ample(1, undefined, 100)) tickets.push(view.hold(1, 100, undefined));
    expect(tickets).toHaveLength(10);
    // Finishing does not free the budget: billing may not have settled them yet.
    for (const t of tickets) view.release(t, 100);
    expect(view.ample(1, undefined, 100)).toBe(false);
  });

  it('when a balance is read more than the horizon after skips finished, then they stop counting', () => {
    const { view, now, advance } = setup({ quota: 100_000 });
    view.observe(1, 100_000, now());
    const t = view.hold(1, 1_000, undefined);
    view.release(t, 900);
    expect(view.unsettled(1)).toBe(900);
    advance(5_000);
    view.observe(1, 99_100, now());
    expect(view.unsettled(1)).toBe(900);
    advance(9_000);
    view.observe(1, 99_100, now());
    expect(view.unsettled(1)).toBe(0);
  });

  it('when the seen balance is older than the TTL, then the request pre-consumes', () => {
    const { view, now, advance } = setup({ quota: 1_000_000 });
    view.observe(1, 1_000_000, now());
    expect(view.ample(1, undefined, 100)).toBe(true);
    advance(10_001);
    expect(view.ample(1, undefined, 100)).toBe(false);
  });

  it('when settles are behind, then nothing is skipped', () => {
    const { view, now } = setup({ quota: 1_000_000, behind: true });
    view.observe(1, 1_000_000, now());
    expect(view.ample(1, undefined, 100)).toBe(false);
  });

  it('when a limited token holds less than factor x need, then the request pre-consumes', () => {
    const { view, now } = setup({ quota: 1_000_000 });
    view.observe(1, 1_000_000, now());
    const token = { id: 3, unlimitedQuota: false, remainQuota: 9_999 } as Parameters<typeof view.ample>[1];
    expect(view.ample(1, token, 100)).toBe(false);
    const enough = { ...token, remainQuota: 10_000 } as typeof token;
    expect(view.ample(1, enough, 100)).toBe(true);
    // Its unsettled skips count against the token too.
    view.hold(1, 100, enough);
    expect(view.ample(1, enough, 100)).toBe(false);
    expect(view.ample(1, undefined, 100)).toBe(true);
  });
});
