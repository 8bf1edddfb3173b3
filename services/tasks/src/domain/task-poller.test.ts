import { describe, expect, it } from 'vitest';
import type { LeasedTask } from '../data/leased-tasks.ts';
import { backOff, splitByBackoff } from './task-poller.ts';

describe('channel backoff of the pollers', () => {
  it('when a channel fails again and again, then its backoff doubles up to the maximum', () => {
    const backoff = new Map<number, { until: number; n: number }>();
    const s = { intervalMs: 1_000, backoffMaxMs: 5_000 };
    expect(backOff(backoff, s, 9, 100)).toBe(2_100);
    expect(backOff(backoff, s, 9, 100)).toBe(4_100);
    expect(backOff(backoff, s, 9, 100)).toBe(5_100);
    expect(backoff.get(9)?.n).toBe(3);
  });

  it('when due tasks are on a channel in backoff, then they are held until it ends; the others are polled', () => {
    const task = (id: number, channel: number) => ({ id, _id: id, channel_id: channel }) as LeasedTask;
    const backoff = new Map([
      [2, { until: 500 }],
      [3, { until: 50 }],
      [4, { until: 100 }],
    ]);
    const due = [task(1, 1), task(2, 2), task(3, 2), task(4, 3), task(5, 4)];
    const { wanted, held } = splitByBackoff(due, backoff, 100);
    // A backoff ending now is over.
    expect(wanted.map((t) => t.id)).toEqual([1, 4, 5]);
    expect([...held]).toEqual([[500, [2, 3]]]);
  });
});
