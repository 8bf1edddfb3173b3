import { describe, expect, it } from 'vitest';
import { emptyState, expireHolds, HOLD_TTL_MS, hold, type LedgerState, refund, settle } from './ledger-state.ts';
import {
  invalidateSubscription,
  newSubscription,
  pruneEnded,
  purchasesOf,
  subscriptionActive,
  termEnd,
  usage,
  windowStart,
} from './subscription-state.ts';

/** Wednesday 2026-11-25 10:00 UTC. */
const WED = Date.UTC(2026, 10, 25, 10);
const DAY = 86_400_000;
const plan = {
  id: 1,
  title: 'Pro',
  duration_unit: 'month',
  duration_value: 1,
  custom_seconds: 0,
  daily_quota: 100,
  weekly_quota: 300,
  monthly_quota: 0,
  total_amount: 0,
  models: [] as string[],
  group: '',
};
const funding = { model: 'gpt-4o', group: 'default', timeZone: 'UTC' };

const subscribed = (quota: number, p: Partial<typeof plan> = {}, pref?: string): LedgerState => ({
  ...emptyState(),
  quota,
  subs: { s1: newSubscription({ ...plan, ...p }, WED - DAY, 'order') },
  ...(pref ? { pref } : {}),
});

const held = (s: LedgerState, rid: string, amount: number, now = WED, f = funding) =>
  hold(s, { rid, amount, tokenId: 0, tokenLimited: false, now, funding: f });

describe('subscription windows', () => {
  it('when periods are computed, then days start at 00:00, weeks on Monday, months on the 1st, in the operator time zone', () => {
    expect(windowStart('daily', WED, { st: 0 }, 'UTC')).toBe(Date.UTC(2026, 10, 25));
    expect(windowStart('weekly', WED, { st: 0 }, 'UTC')).toBe(Date.UTC(2026, 10, 23));
    expect(windowStart('monthly', WED, { st: 0 }, 'UTC')).toBe(Date.UTC(2026, 10, 1));
    // 10:00 UTC is 18:00 in Shanghai: that day started at 16:00 UTC the day before.
    expect(windowStart('daily', WED, { st: 0 }, 'Asia/Shanghai')).toBe(Date.UTC(2026, 10, 24, 16));
    expect(termEnd(plan, Date.UTC(2026, 0, 31))).toBe(Date.UTC(2026, 2, 3));
  });

  it('when a subscription has room in every window, then it pays the request and the wallet is untouched', () => {
    const s = held(subscribed(1000), 'r1', 40);
    expect(s.quota).toBe(1000);
    expect(s.holds.r1).toMatchObject({ a: 0, s: 's1', sa: 40 });
    const { state, delta, subscription } = settle(s, {
      rid: 'r1',
      actual: 25,
      tokenId: 0,
      tokenLimited: false,
      now: WED,
    });
    expect({ delta, subscription, quota: state.quota, used: state.used_quota }).toEqual({
      delta: 0,
      subscription: 's1',
      quota: 1000,
      used: 25,
    });
    expect(usage(state.subs?.s1 as never, WED, 'UTC').map((w) => [w.kind, w.used])).toEqual([
      ['daily', 25],
      ['weekly', 25],
    ]);
  });

  it('when one window is full, then the wallet pays; a refund gives the windows back', () => {
    const s = held(subscribed(1000), 'r1', 90);
    const next = held(s, 'r2', 20);
    expect(next.holds.r2).toMatchObject({ a: 20 });
    expect(next.holds.r2?.s).toBeUndefined();
    expect(next.quota).toBe(980);
    const back = refund(next, 'r1').state;
    expect(usage(back.subs?.s1 as never, WED, 'UTC')[0]?.used).toBe(0);
    expect(expireHolds(s, WED + HOLD_TTL_MS + 1).state.subs?.s1?.w.daily?.[1]).toBe(0);
  });

  it('when the next day starts, then the daily window starts at 0 while the weekly one keeps counting', () => {
    const s = settle(held(subscribed(0), 'r1', 100), {
      rid: 'r1',
      actual: 100,
      tokenId: 0,
      tokenLimited: false,
      now: WED,
    }).state;
    expect(() => held(s, 'r2', 1)).toThrow('用户额度不足');
    const tomorrow = Date.UTC(2026, 10, 26);
    const next = held(s, 'r2', 60, tomorrow);
    expect(next.holds.r2).toMatchObject({ s: 's1', sa: 60 });
    expect(usage(next.subs?.s1 as never, tomorrow, 'UTC').map((w) => w.used)).toEqual([60, 160]);
  });

  it('when the preference is wallet first, then the wallet pays while it can; subscription only refuses when no window has room', () => {
    expect(held(subscribed(1000, {}, 'wallet_first'), 'r1', 40).holds.r1?.s).toBeUndefined();
    expect(held(subscribed(10, {}, 'wallet_first'), 'r1', 40).holds.r1?.s).toBe('s1');
    expect(held(subscribed(1000, {}, 'wallet_only'), 'r1', 40).holds.r1?.s).toBeUndefined();
    expect(() => held(subscribed(1000, {}, 'subscription_only'), 'r1', 101)).toThrow('订阅额度不足');
    expect(subscriptionActive(subscribed(0, {}, 'wallet_only'), WED)).toBe(false);
    expect(subscriptionActive(subscribed(0), WED)).toBe(true);
  });

  it('when a plan is bound to models or a group, then other requests go to the wallet', () => {
    const bound = subscribed(1000, { models: ['claude-3'], group: 'vip' });
    expect(held(bound, 'r1', 10).holds.r1?.s).toBeUndefined();
    expect(held(bound, 'r1', 10, WED, { ...funding, model: 'claude-3', group: 'vip' }).holds.r1?.s).toBe('s1');
  });

  it('when the term has ended, then the subscription pays nothing', () => {
    const s = subscribed(1000, { duration_unit: 'hour', duration_value: 1 });
    expect(held(s, 'r1', 10).holds.r1?.s).toBeUndefined();
    expect(subscriptionActive(s, WED)).toBe(false);
  });
});

describe('ended subscriptions leave the state', () => {
  const HOUR = 3_600_000;
  /** s1 ends at WED (an hour from WED - HOUR), s2 runs a month, s3 is invalidated, s4 starts later. */
  const mixed = (): LedgerState => {
    const base = { ...emptyState(), quota: 1000 };
    const subs = {
      s1: newSubscription({ ...plan, duration_unit: 'hour' }, WED - HOUR, 'order'),
      s2: newSubscription({ ...plan, id: 2 }, WED - DAY, 'order'),
      s3: newSubscription(plan, WED - DAY, 'admin'),
      s4: newSubscription({ ...plan, id: 4 }, WED + DAY, 'admin'),
    };
    return { ...base, subs: invalidateSubscription(subs, 's3', WED - 1) };
  };

  it('when terms ended or an admin invalidated them, then they leave the state, counted per plan; active and future ones stay', () => {
    const s = mixed();
    const { state, ended } = pruneEnded(s, Object.values(s.holds), WED);
    expect(Object.keys(ended).sort()).toEqual(['s1', 's3']);
    expect(Object.keys(state.subs ?? {}).sort()).toEqual(['s2', 's4']);
    expect(state.subs?.s2).toBe(s.subs?.s2);
    expect(state.subs_ended).toEqual({ 1: 2 });
    // Purchase limits still count every subscription of the plan.
    expect(purchasesOf(state, 1)).toBe(purchasesOf(s, 1));
    expect(purchasesOf(state, 1)).toBe(2);
    expect(state.quota).toBe(1000);
    // The state given is unchanged; nothing ended: the same state back.
    expect(Object.keys(s.subs ?? {})).toHaveLength(4);
    const again = pruneEnded(state, [], WED);
    expect(again.state).toBe(state);
    expect(again.ended).toEqual({});
    expect(pruneEnded(state, [], WED + 40 * DAY).state.subs_ended).toEqual({ 1: 2, 2: 1, 4: 1 });
  });

  it('when a request still holds from a subscription whose term ended, then it stays until the settle charges it, then leaves', () => {
    const s = held(mixed(), 'r1', 40, WED - 1);
    expect(s.holds.r1).toMatchObject({ s: 's1', a: 0 });
    const kept = pruneEnded(s, Object.values(s.holds), WED + 1);
    expect(Object.keys(kept.ended)).toEqual(['s3']);
    expect(kept.state.subs?.s1).toBeDefined();
    // The late settle charges the subscription, not the wallet.
    const done = settle(kept.state, { rid: 'r1', actual: 30, tokenId: 0, tokenLimited: false, now: WED + 1 });
    expect({ delta: done.delta, sub: done.subscription, quota: done.state.quota }).toEqual({
      delta: 0,
      sub: 's1',
      quota: 1000,
    });
    const after = pruneEnded(done.state, Object.values(done.state.holds), WED + 2);
    expect(Object.keys(after.ended)).toEqual(['s1']);
    expect(after.ended.s1?.w.daily?.[1]).toBe(30);
    expect(after.state.quota).toBe(1000);
  });

  it('when such a hold is refunded or expires instead, then the wallet is untouched and the subscription leaves', () => {
    const s = held(mixed(), 'r1', 40, WED - 1);
    const back = refund(s, 'r1').state;
    expect(back.quota).toBe(1000);
    expect(Object.keys(pruneEnded(back, Object.values(back.holds), WED).ended).sort()).toEqual(['s1', 's3']);
    const gone = expireHolds(s, WED - 1 + HOLD_TTL_MS + 1).state;
    expect(gone.quota).toBe(1000);
    expect(pruneEnded(gone, Object.values(gone.holds), WED + HOLD_TTL_MS).state.subs?.s1).toBeUndefined();
  });
});
