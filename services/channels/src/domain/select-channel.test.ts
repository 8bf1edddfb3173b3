import { describe, expect, it } from 'vitest';
import { selectChannel } from './select-channel.ts';

const c = (channelId: number, priority: number, weight: number) => ({ channelId, priority, weight });

describe('selectChannel', () => {
  const pool = [c(1, 10, 1), c(2, 10, 3), c(3, 0, 1), c(4, -5, 0)];

  it('when the first attempt picks, then only the highest tier is used, weighted', () => {
    const counts = new Map<number, number>();
    let seed = 0;
    const random = () => {
      seed = (seed * 9301 + 49297) % 233280;
      return seed / 233280;
    };
    for (let i = 0; i < 4000; i++) {
      const id = selectChannel(pool, { random })?.channelId ?? 0;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual([1, 2]);
    expect((counts.get(2) ?? 0) / (counts.get(1) ?? 1)).toBeGreaterThan(2.3);
  });

  it('when retrying, then attempt N uses tier N, or the lowest tier when fewer', () => {
    expect(selectChannel(pool, { retry: 1 })?.channelId).toBe(3);
    expect(selectChannel(pool, { retry: 2 })?.channelId).toBe(4);
    expect(selectChannel(pool, { retry: 9 })?.channelId).toBe(4);
  });

  it('when channels were tried, then they are excluded before tiers form', () => {
    expect(selectChannel(pool, { exclude: [1, 2] })?.channelId).toBe(3);
    expect(selectChannel(pool, { exclude: [1, 2, 3, 4] })).toBeUndefined();
  });

  it('when every weight in a tier is 0, then each channel is equally likely', () => {
    const zero = [c(7, 1, 0), c(8, 1, 0)];
    expect(selectChannel(zero, { random: () => 0.1 })?.channelId).toBe(7);
    expect(selectChannel(zero, { random: () => 0.9 })?.channelId).toBe(8);
  });
});
