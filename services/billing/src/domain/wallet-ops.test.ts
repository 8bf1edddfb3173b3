import { describe, expect, it } from 'vitest';
import { sliceGrant } from './wallet-ops.ts';

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
