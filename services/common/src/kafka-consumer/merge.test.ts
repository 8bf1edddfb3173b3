import { describe, expect, it } from 'vitest';
import { mergedCalls } from './merge.ts';

describe('mergedCalls', () => {
  it('merges calls of one turn of the event loop into one call', async () => {
    const calls: number[][] = [];
    const merged = mergedCalls(async (items: number[]) => {
      calls.push(items);
    });
    await Promise.all([merged([1, 2]), merged([3]), merged([4, 5])]);
    expect(calls).toEqual([[1, 2, 3, 4, 5]]);
    await merged([6]);
    expect(calls).toEqual([[1, 2, 3, 4, 5], [6]]);
  });

  it('when the merged call fails, then each caller runs alone and only the poisoned one fails', async () => {
    const calls: number[][] = [];
    const merged = mergedCalls(async (items: number[]) => {
      calls.push(items);
      if (items.includes(13)) throw new Error('poison');
    });
    const results = await Promise.allSettled([merged([1, 2]), merged([13]), merged([4])]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(calls).toEqual([[1, 2, 13, 4], [1, 2], [13], [4]]);
  });

  it('a lone call that fails fails once, without a second run', async () => {
    let n = 0;
    const merged = mergedCalls(async () => {
      n++;
      throw new Error('down');
    });
    await expect(merged([1])).rejects.toThrow('down');
    expect(n).toBe(1);
  });

  it('a call arriving while a merged call runs goes into the next one', async () => {
    const calls: number[][] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const merged = mergedCalls(async (items: number[]) => {
      calls.push(items);
      if (items.includes(1)) await gate;
    });
    const first = merged([1]);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    const second = merged([2]);
    release();
    await Promise.all([first, second]);
    expect(calls).toEqual([[1], [2]]);
  });
});
