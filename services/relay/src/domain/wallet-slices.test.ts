import { describe, expect, it } from 'vitest';
import { admitFrom, type Slice, sliceSize, walletSlices } from './wallet-slices.ts';

/** A billing of one user's wallet as the ledger keeps it: slice holds, charges from them, releases. */
function fakeBilling(quota: number) {
  const holds = new Map<string, number>();
  const released: string[] = [];
  let balance = quota;
  let takes = 0;
  let gate: Promise<void> | undefined;
  return {
    holds,
    released,
    balance: () => balance,
    takes: () => takes,
    hold(p: Promise<void>) {
      gate = p;
    },
    async take(_userId: number, id: string, want: number, min: number) {
      takes++;
      if (gate) await gate;
      if (balance < min) throw Object.assign(new Error('用户额度不足'), { code: 'FAILED_PRECONDITION' });
      // As billing grants it (wallet-ops.ts sliceGrant): at most half of a short balance.
      const half = Math.min(want, Math.max(min, Math.floor(balance / 2)));
      const granted = balance - half < min ? Math.min(want, balance) : half;
      balance -= granted;
      holds.set(id, granted);
      return { granted, userQuota: balance };
    },
    charge(id: string, actual: number) {
      const h = holds.get(id) ?? 0;
      const taken = Math.min(h, actual);
      if (holds.has(id)) holds.set(id, h - taken);
      balance -= actual - taken;
    },
    release(_userId: number, id: string) {
      released.push(id);
      balance += holds.get(id) ?? 0;
      holds.delete(id);
    },
  };
}

function setup(quota: number, opts: { requests?: number; idleMs?: number } = {}) {
  const billing = fakeBilling(quota);
  let now = 1_000;
  let n = 0;
  const slices = walletSlices(
    { requests: opts.requests ?? 4, idleMs: opts.idleMs ?? 1_000, maxAgeMs: 60_000 },
    {
      take: (u, id, a, min) => billing.take(u, id, a, min),
      release: (u, id) => billing.release(u, id),
      newId: () => `p1-s${++n}`,
      clock: () => now,
    },
  );
  const tick = (ms: number) => {
    now += ms;
  };
  return { billing, slices, tick };
}

describe('slice sizing', () => {
  it('when the balance is unknown or ample, then a slice is `requests` bounds; never more than the known balance; 0 when one bound does not fit', () => {
    expect(sliceSize(100, 8, undefined)).toBe(800);
    expect(sliceSize(100, 8, 5_000)).toBe(800);
    expect(sliceSize(100, 8, 350)).toBe(350);
    expect(sliceSize(100, 8, 99)).toBe(0);
    expect(sliceSize(100, 0, undefined)).toBe(100);
  });
});

describe('admission', () => {
  const slice = (left: number, over: Partial<Slice> = {}): Slice => ({
    id: 's',
    userId: 1,
    size: left,
    left,
    inflight: 0,
    openedAt: 0,
    usedAt: 0,
    closed: false,
    released: false,
    ...over,
  });

  it('when a slice has room, then the request takes its bound from it; closed, old or short slices admit nothing', () => {
    const open = slice(250);
    expect(admitFrom([slice(99), open], 100, 10, 1_000)?.slice).toBe(open);
    expect(open.left).toBe(150);
    expect(open.inflight).toBe(1);
    expect(admitFrom([slice(500, { closed: true })], 100, 10, 1_000)).toBeUndefined();
    expect(admitFrom([slice(500)], 100, 2_000, 1_000)).toBeUndefined();
  });

  it('when many requests of one user run on a small wallet, then the slices never admit more than billing granted and the wallet ends at start - charges, every slice released', async () => {
    const { billing, slices, tick } = setup(1_000);
    const tickets = [];
    for (let i = 0; i < 12; i++) {
      const t = await slices.reserve(1, 100);
      if (t) tickets.push(t);
    }
    // Never more bounds admitted than billing holds (a slice's last sliver below one bound is
    // left for its release); the wallet is nearly all in slices.
    const held = [...billing.holds.values()].reduce((a, b) => a + b, 0);
    expect(tickets.length * 100).toBeLessThanOrEqual(held);
    expect(tickets.length).toBeGreaterThanOrEqual(8);
    expect(held + billing.balance()).toBe(1_000);
    expect(billing.takes()).toBeLessThanOrEqual(4);
    let charged = 0;
    for (const t of tickets) {
      billing.charge(t.slice.id, 60);
      charged += 60;
      slices.finish(t, 60);
    }
    tick(1_500);
    slices.sweep();
    expect(slices.held()).toBe(0);
    expect(billing.holds.size).toBe(0);
    expect(billing.balance()).toBe(1_000 - charged);
  });

  it('when concurrent requests find no room, then they share one take (one billing round for all of them) and a refill starts in the background', async () => {
    const { billing, slices } = setup(1_000_000);
    let open: () => void = () => undefined;
    billing.hold(
      new Promise<void>((r) => {
        open = r;
      }),
    );
    const waiting = Array.from({ length: 4 }, () => slices.reserve(1, 100));
    open();
    const got = await Promise.all(waiting);
    expect(got.every((t) => t !== undefined)).toBe(true);
    expect(new Set(got.map((t) => t?.slice.id)).size).toBe(1);
    // All four bounds taken from it: the next slice is asked for in the background.
    expect(billing.takes()).toBe(2);
  });

  it('when billing refuses a slice for the balance, then reserve answers undefined (the request pre-consumes) and no slice is tried again before a balance is seen', async () => {
    const { billing, slices } = setup(50);
    expect(await slices.reserve(1, 100)).toBeUndefined();
    expect(await slices.reserve(1, 100)).toBeUndefined();
    expect(billing.takes()).toBe(1);
    slices.observe(1, 10_000);
    await slices.reserve(1, 100);
    expect(billing.takes()).toBe(2);
  });

  it('when slices are closed with requests in flight, then each is released only after its last request ended', async () => {
    const { billing, slices } = setup(10_000);
    const t = await slices.reserve(1, 100);
    expect(t).toBeDefined();
    slices.closeAll(true);
    expect(billing.released).toEqual([]);
    if (t) {
      billing.charge(t.slice.id, 30);
      slices.finish(t, 30);
    }
    expect(billing.released).toEqual([t?.slice.id]);
    expect(billing.balance()).toBe(10_000 - 30);
    // Finishing twice changes nothing.
    if (t) slices.finish(t, 30);
    expect(billing.released.length).toBe(1);
  });
});

describe('revoke', () => {
  it('when billing asks a user slices back, then they take no more requests and each goes back once its requests ended; other users keep theirs; the next request takes a new slice', async () => {
    const { billing, slices, tick } = setup(10_000);
    const running = await slices.reserve(1, 100);
    const other = await slices.reserve(2, 100);
    expect(running && other).toBeDefined();
    tick(1);
    slices.revoke(1);
    // In flight: not yet released; user 2's slice untouched.
    expect(billing.released).toEqual([]);
    if (running) slices.finish(running, 40);
    expect(billing.released).toEqual([running?.slice.id]);
    expect((await slices.reserve(2, 100))?.slice).toBe(other?.slice);
    const next = await slices.reserve(1, 100);
    expect(next).toBeDefined();
    expect(next?.slice.id).not.toBe(running?.slice.id);
  });

  it('when a revoke comes while a slice is being asked for, then that slice goes back as soon as it is granted and the request draws from one asked for after the revoke', async () => {
    const { billing, slices, tick } = setup(10_000);
    let open: () => void = () => undefined;
    billing.hold(
      new Promise<void>((r) => {
        open = r;
      }),
    );
    const waiting = slices.reserve(4, 100);
    tick(1);
    slices.revoke(4);
    open();
    const ticket = await waiting;
    expect(billing.released).toEqual(['p1-s1']);
    expect(ticket?.slice.id).toBe('p1-s2');
    expect([...billing.holds.keys()]).toEqual(['p1-s2']);
  });
});
