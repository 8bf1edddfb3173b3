import { type AppError, precondition } from '@aigw/common/errors';
import { describe, expect, it } from 'vitest';
import { emptyState, hold } from './ledger-state.ts';
import { revocableRefusal, SLICE_REVOKE_RETRY_MS, sliceGrant } from './wallet-ops.ts';

describe('wallet slice grant', () => {
  it('when the balance is ample, then the slice is what was asked; when short, at most half of it, never below one bound, all of it when the rest could not cover a bound', () => {
    expect(sliceGrant(100_000, 800, 100)).toBe(800);
    expect(sliceGrant(1_000, 800, 100)).toBe(500);
    expect(sliceGrant(150, 800, 100)).toBe(150);
    expect(sliceGrant(120, 800, 100)).toBe(120);
    expect(sliceGrant(150, 120, 100)).toBe(120);
    // Below one bound: the whole want, which the hold refuses (用户额度不足).
    expect(sliceGrant(99, 800, 100)).toBe(800);
  });
});

describe('a refusal while wallet slices hold the balance', () => {
  const now = 1_000;
  // 1,000 in the wallet: a slice of 600 and a request's own hold of 300 taken, 100 left.
  const withSlice = hold(
    hold(
      { ...emptyState(), quota: 1_000 },
      { rid: 'p1-s1', amount: 600, tokenId: 0, tokenLimited: false, now, slice: true },
    ),
    {
      rid: 'p2-r1',
      amount: 300,
      tokenId: 0,
      tokenLimited: false,
      now,
    },
  );

  it('when the balance plus the slices covers the hold, then the refusal is the same, marked retryable; otherwise, or for other refusals, unchanged', () => {
    const short = precondition('用户额度不足');
    const marked = revocableRefusal(short, withSlice, 500) as AppError;
    expect([marked.code, marked.message, marked.retryAfterMs]).toEqual([
      'FAILED_PRECONDITION',
      '用户额度不足',
      SLICE_REVOKE_RETRY_MS,
    ]);
    // 100 + 600 < 701: giving the slice back would not let it pass.
    expect(revocableRefusal(short, withSlice, 701)).toBe(short);
    // The request's own hold is not a slice.
    const noSlice = hold(
      { ...emptyState(), quota: 1_000 },
      { rid: 'p2-r1', amount: 900, tokenId: 0, tokenLimited: false, now },
    );
    expect(revocableRefusal(short, noSlice, 500)).toBe(short);
    const token = precondition('令牌额度不足');
    expect(revocableRefusal(token, withSlice, 500)).toBe(token);
  });
});
