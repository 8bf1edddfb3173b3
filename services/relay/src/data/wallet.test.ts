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

  it('when many skips of several users and tokens start, finish and age out in any order, then the running sums equal a recount', () => {
    const { view, now, advance } = setup({ quota: 1_000_000 });
    // A reference: every skip with its state, summed from scratch.
    interface Ref {
      userId: number;
      tokenId: number;
      amount: number;
      doneAt: number;
      gone: boolean;
      ticket: object;
    }
    const ref: Ref[] = [];
    const recount = (userId: number, tokenId = 0) =>
      ref
        .filter((r) => !r.gone && r.userId === userId && (!tokenId || r.tokenId === tokenId))
        .reduce((a, r) => a + r.amount, 0);
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    for (let i = 0; i < 20_000; i++) {
      const userId = 1 + rnd(3);
      const pick = rnd(10);
      if (pick < 5) {
        const tokenId = rnd(3);
        const token = tokenId
          ? ({ id: tokenId, unlimitedQuota: false, remainQuota: 1e12 } as Parameters<typeof view.ample>[1])
          : undefined;
        const amount = 1 + rnd(500);
        ref.push({ userId, tokenId, amount, doneAt: 0, gone: false, ticket: view.hold(userId, amount, token) });
      } else if (pick < 9) {
        const open = ref.filter((r) => r.doneAt === 0 && !r.gone);
        const r = open[rnd(Math.max(1, open.length))];
        if (!r) continue;
        const charged = rnd(4) === 0 ? 0 : rnd(r.amount + 1);
        view.release(r.ticket, charged);
        r.amount = charged;
        r.doneAt = now();
        if (charged === 0) r.gone = true;
      } else {
        view.observe(userId, 1_000_000, now());
        for (const r of ref) if (r.userId === userId && r.doneAt && r.doneAt + 13_000 < now()) r.gone = true;
      }
      advance(rnd(40));
      if (i % 500 === 0) {
        for (const u of [1, 2, 3]) {
          for (const t of [0, 1, 2]) expect(view.unsettled(u, t), `user ${u} token ${t} at ${i}`).toBe(recount(u, t));
        }
      }
    }
    // Everything finished and read long after: nothing counts any more.
    for (const r of ref.filter((x) => x.doneAt === 0 && !x.gone)) view.release(r.ticket, 10);
    advance(20_000);
    for (const u of [1, 2, 3]) view.observe(u, 1_000_000, now());
    for (const u of [1, 2, 3]) expect(view.unsettled(u)).toBe(0);
  });
});
