// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { isFestiveDay } from './festive.ts';

describe('isFestiveDay', () => {
  it('is true on 1 January and from 9 to 24 February only', () => {
    expect(isFestiveDay(new Date(2025, 0, 1))).toBe(true);
    expect(isFestiveDay(new Date(2025, 0, 2))).toBe(false);
    expect(isFestiveDay(new Date(2025, 1, 8))).toBe(false);
    expect(isFestiveDay(new Date(2025, 1, 9))).toBe(true);
    expect(isFestiveDay(new Date(2025, 1, 24))).toBe(true);
    expect(isFestiveDay(new Date(2025, 1, 25))).toBe(false);
    expect(isFestiveDay(new Date(2025, 6, 1))).toBe(false);
  });
});
