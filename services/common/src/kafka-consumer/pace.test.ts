import { describe, expect, it } from 'vitest';
import { usagePace } from '../kafka.ts';
import { paceDelay } from './pace.ts';

const pace = { ms: 250, minRate: 50 };

describe('paceDelay', () => {
  it("never waits after a partition's first batch", () => {
    expect(paceDelay(pace, undefined, 1_000, 1_010, 5_000)).toBe(0);
  });

  it('does not wait when the partition is quiet', () => {
    // 3 events 100 ms after the previous batch: 30 events/s.
    expect(paceDelay(pace, 900, 1_000, 1_005, 3)).toBe(0);
    // One event a second apart.
    expect(paceDelay(pace, 0, 1_000, 1_002, 1)).toBe(0);
  });

  it('waits until the pace has passed since the batch began when busy', () => {
    // 10 events 60 ms after the previous batch: 167 events/s; handled in 20 ms.
    expect(paceDelay(pace, 940, 1_000, 1_020, 10)).toBe(230);
  });

  it('does not wait when handling took the whole pace already', () => {
    expect(paceDelay(pace, 940, 1_000, 1_400, 10)).toBe(0);
  });

  it('stays busy once paced: the next batch holds a pace of events', () => {
    // 42 events 250 ms after the previous batch (167 events/s).
    expect(paceDelay(pace, 750, 1_000, 1_030, 42)).toBe(220);
  });

  it('is off with a pace of 0', () => {
    expect(paceDelay({ ms: 0, minRate: 50 }, 940, 1_000, 1_020, 10)).toBe(0);
  });
});

describe('usagePace', () => {
  it('gives each usage consumer its own pace, and KAFKA_USAGE_PACE_MS all of them', () => {
    expect(usagePace('billing', {}).pace).toEqual({ ms: 500, minRate: 50 });
    expect(usagePace('logs', {}).pace).toEqual({ ms: 1_000, minRate: 50 });
    expect(usagePace('channels', { KAFKA_USAGE_PACE_MS: '0', KAFKA_USAGE_PACE_RATE: '20' }).pace).toEqual({
      ms: 0,
      minRate: 20,
    });
    expect(() => usagePace('logs', { KAFKA_USAGE_PACE_MS: '-1' })).toThrow();
  });
});
