import { describe, expect, it } from 'vitest';
import {
  adjust,
  credit,
  draftOf,
  emptyState,
  expireHolds,
  HOLD_TTL_MS,
  hold,
  type LedgerState,
  refund,
  sealDraft,
  setTokenRemain,
  settle,
} from './ledger-state.ts';

const funded = (quota: number, tokenRemain = 0) => setTokenRemain({ ...emptyState(), quota }, 7, tokenRemain);

describe('ledger state', () => {
  it('when a hold fits, then wallet and limited token both shrink', () => {
    const s = hold(funded(100, 50), { rid: 'r1', amount: 30, tokenId: 7, tokenLimited: true, now: 0 });
    expect(s.quota).toBe(70);
    expect(s.tokens['7']?.r).toBe(20);
    expect(s.holds.r1).toMatchObject({ a: 30, t: 7, ta: 30, l: true });
  });

  it('when the wallet or the token cannot cover a hold, then it is refused with the Chinese message', () => {
    expect(() => hold(funded(10, 50), { rid: 'r', amount: 11, tokenId: 7, tokenLimited: true, now: 0 })).toThrow(
      '用户额度不足',
    );
    expect(() => hold(funded(100, 5), { rid: 'r', amount: 6, tokenId: 7, tokenLimited: true, now: 0 })).toThrow(
      '令牌额度不足',
    );
    expect(hold(funded(100, 0), { rid: 'r', amount: 6, tokenId: 7, tokenLimited: false, now: 0 }).quota).toBe(94);
  });

  it('when a held request settles for less, then the difference comes back and usage is counted', () => {
    const held = hold(funded(100, 50), { rid: 'r1', amount: 30, tokenId: 7, tokenLimited: true, now: 0 });
    const { state, delta } = settle(held, { rid: 'r1', actual: 12, tokenId: 0, tokenLimited: false });
    expect(delta).toBe(-18);
    expect(state).toMatchObject({ quota: 88, used_quota: 12, request_count: 1, holds: {} });
    expect(state.tokens['7']).toEqual({ r: 38, u: 12 });
  });

  it('when a request settles for more than it held or without a hold, then the excess is charged', () => {
    const held = hold(funded(100, 50), { rid: 'r1', amount: 10, tokenId: 7, tokenLimited: true, now: 0 });
    expect(settle(held, { rid: 'r1', actual: 25, tokenId: 0, tokenLimited: false }).state.quota).toBe(75);
    const direct = settle(funded(5, 50), { rid: 'x', actual: 8, tokenId: 7, tokenLimited: true });
    expect(direct.state.quota).toBe(-3);
    expect(direct.state.tokens['7']).toEqual({ r: 42, u: 8 });
  });

  it('when a request is refunded, then everything held returns', () => {
    const held = hold(funded(100, 50), { rid: 'r1', amount: 30, tokenId: 7, tokenLimited: true, now: 0 });
    const { state, refunded } = refund(held, 'r1');
    expect(refunded).toBe(30);
    expect(state.quota).toBe(100);
    expect(state.tokens['7']?.r).toBe(50);
    expect(refund(state, 'r1').refunded).toBe(0);
  });

  it('when a hold is older than the TTL, then the next change gives it back', () => {
    const held = hold(funded(100), { rid: 'old', amount: 40, tokenId: 0, tokenLimited: false, now: 0 });
    const { state, expired } = expireHolds(held, HOLD_TTL_MS + 1);
    expect(expired).toEqual(['old']);
    expect(state.quota).toBe(100);
  });

  it('when a relay sends its lease age with a hold, then the hold keeps it for the lapse check', () => {
    const s = hold(funded(100), {
      rid: 'aged',
      amount: 10,
      tokenId: 0,
      tokenLimited: false,
      now: 0,
      leaseAgeMs: 1_200,
    });
    expect(s.holds.aged?.g).toBe(1_200);
    const young = (_rid: string, h: { g?: number }) => (h.g ?? 0) <= 1_000;
    expect(expireHolds(s, 1, young).expired).toEqual([]);
    expect(expireHolds(s, 1, (_rid, h) => (h.g ?? 0) <= 5_000).expired).toEqual(['aged']);
  });

  it('when the relay process of a hold is gone (lease lapsed), then the next change gives it back and a late settle charges it all', () => {
    let s = hold(funded(100, 50), { rid: 'dead-1', amount: 40, tokenId: 7, tokenLimited: true, now: 1_000 });
    s = hold(s, { rid: 'live-1', amount: 30, tokenId: 0, tokenLimited: false, now: 1_000 });
    const lapsed = (rid: string) => rid.startsWith('dead-');
    const { state, expired } = expireHolds(s, 2_000, lapsed);
    expect(expired).toEqual(['dead-1']);
    expect(state.quota).toBe(70);
    expect(state.tokens['7']).toEqual({ r: 50, u: 0 });
    expect(Object.keys(state.holds)).toEqual(['live-1']);
    // The dead process's usage event still comes: charged in full, as without a pre-consume.
    const late = settle(state, { rid: 'dead-1', actual: 25, tokenId: 7, tokenLimited: true });
    expect(late.delta).toBe(25);
    expect(late.state.quota).toBe(45);
    expect(late.state.tokens['7']).toEqual({ r: 25, u: 25 });
  });

  it('when an admin adds or sets quota, then negative adds are allowed and fractions are not', () => {
    expect(adjust(funded(100), 'add', -30).quota).toBe(70);
    expect(adjust(funded(100), 'set', 5).quota).toBe(5);
    expect(() => adjust(funded(1), 'add', 1.5)).toThrow('额度必须为整数');
    expect(() => credit(funded(1), 0)).toThrow('额度必须为正整数');
  });
});

describe('a round draft', () => {
  const ops = (s: LedgerState, n: number, tag: string) => {
    // Holds, settles of some of them, a refund, a credit and an adjust: every kind that touches holds.
    let x = s;
    for (let i = 0; i < n; i++)
      x = hold(x, { rid: `${tag}${i}`, amount: 10, tokenId: i % 2 ? 7 : 0, tokenLimited: true, now: 1 });
    for (let i = 0; i < n; i += 2)
      x = settle(x, { rid: `${tag}${i}`, actual: 8, tokenId: 0, tokenLimited: false }).state;
    x = refund(x, `${tag}1`).state;
    x = credit(x, 5);
    return adjust(x, 'add', -3);
  };
  const start = (): LedgerState => {
    let s = setTokenRemain({ ...emptyState(), quota: 10_000 }, 7, 1_000);
    for (let i = 0; i < 50; i++) s = hold(s, { rid: `old${i}`, amount: 1, tokenId: 0, tokenLimited: false, now: 1 });
    return s;
  };

  it('when a round works on a draft, then it ends in the same state as copying per operation, and its start is untouched', () => {
    const copied = ops(start(), 40, 'r');
    const base = start();
    const before = JSON.stringify(base);
    const draft = draftOf(base);
    const drafted = ops(draft, 40, 'r');
    sealDraft(draft);
    expect(drafted).toEqual(copied);
    expect(JSON.stringify(base)).toBe(before);
    // The state of each step keeps its own scalars and token balances (an adjust's delta compares them).
    const d2 = draftOf(base);
    const a = hold(d2, { rid: 'x', amount: 10, tokenId: 7, tokenLimited: true, now: 1 });
    const b = settle(a, { rid: 'x', actual: 4, tokenId: 0, tokenLimited: false }).state;
    expect([d2.quota, a.quota, b.quota]).toEqual([9_950, 9_940, 9_946]);
    expect([d2.tokens['7']?.r, a.tokens['7']?.r, b.tokens['7']?.r]).toEqual([1_000, 990, 996]);
    sealDraft(d2);
    // Sealed: the final state is an ordinary one again, copied by the next change.
    const c = hold(b, { rid: 'y', amount: 1, tokenId: 0, tokenLimited: false, now: 1 });
    expect(b.holds.y).toBeUndefined();
    expect(c.holds.y).toBeDefined();
  });
});

describe('wallet slices', () => {
  const slice = (quota: number, amount: number) =>
    hold(funded(quota), { rid: 'relay1-s1', amount, tokenId: 0, tokenLimited: false, now: 0 });

  it('when requests drawn from a slice settle, then the slice hold shrinks by each charge and the balance by nothing more; a charge beyond the slice comes from the balance; the release gives back the rest', () => {
    let s = slice(1_000, 300);
    expect(s.quota).toBe(700);
    s = settle(s, { rid: 'a', actual: 120, tokenId: 7, tokenLimited: false, slice: 'relay1-s1' }).state;
    expect(s.holds['relay1-s1']?.a).toBe(180);
    expect(s.quota).toBe(700);
    expect(s.used_quota).toBe(120);
    expect(s.tokens['7']?.u).toBe(120);
    const beyond = settle(s, { rid: 'b', actual: 250, tokenId: 7, tokenLimited: false, slice: 'relay1-s1' });
    expect(beyond.delta).toBe(70);
    s = beyond.state;
    expect(s.holds['relay1-s1']?.a).toBe(0);
    expect(s.quota).toBe(630);
    const released = refund(s, 'relay1-s1');
    expect(released.state.quota).toBe(1_000 - 120 - 250);
    expect(released.state.holds['relay1-s1']).toBeUndefined();
  });

  it('when the slice is gone (released or lapsed) before a charge, then the whole charge comes from the balance: start - charges either way', () => {
    const s = slice(1_000, 300);
    const lapsed = expireHolds(s, 1, (rid) => rid.startsWith('relay1-')).state;
    expect(lapsed.quota).toBe(1_000);
    const after = settle(lapsed, { rid: 'a', actual: 120, tokenId: 0, tokenLimited: false, slice: 'relay1-s1' });
    expect(after.state.quota).toBe(880);
    // Lapsed after a charge: what is left of the slice goes back, the charge stays.
    const charged = settle(s, { rid: 'a', actual: 120, tokenId: 0, tokenLimited: false, slice: 'relay1-s1' }).state;
    expect(expireHolds(charged, 1, () => true).state.quota).toBe(880);
  });

  it('when a usage event names a hold that is not a plain wallet hold (a token or a subscription pays it), then it is not drawn from', () => {
    const s = hold(funded(1_000, 500), { rid: 'other', amount: 300, tokenId: 7, tokenLimited: true, now: 0 });
    const after = settle(s, { rid: 'a', actual: 100, tokenId: 0, tokenLimited: false, slice: 'other' }).state;
    expect(after.holds.other?.a).toBe(300);
    expect(after.quota).toBe(600);
  });
});
