import { describe, expect, it } from 'vitest';
import { ttlCache } from './ttl-cache.ts';

function clockedCache(values: Map<string, number>) {
  let t = 1_000;
  let loads = 0;
  let release: (() => void) | undefined;
  let hold = false;
  const cache = ttlCache<string, number>({
    ttlMs: 1_000,
    now: () => t,
    load: async (k) => {
      loads++;
      if (hold)
        await new Promise<void>((r) => {
          release = r;
        });
      return values.get(k);
    },
  });
  return {
    cache,
    advance: (ms: number) => {
      t += ms;
    },
    loads: () => loads,
    hold: (on: boolean) => {
      hold = on;
    },
    release: () => release?.(),
  };
}

describe('ttlCache', () => {
  it('when many callers miss the same key at once, then one load serves them all', async () => {
    const c = clockedCache(new Map([['a', 1]]));
    const got = await Promise.all([c.cache.get('a'), c.cache.get('a'), c.cache.get('a')]);
    expect(got).toEqual([1, 1, 1]);
    expect(c.loads()).toBe(1);
    expect(c.cache.peek('a')).toBe(1);
  });

  it('when an entry is in the last fifth of its life, then readers get it at once and one reload runs behind', async () => {
    const values = new Map([['a', 1]]);
    const c = clockedCache(values);
    await c.cache.get('a');
    values.set('a', 2);
    c.advance(850);
    c.hold(true);
    // Served from the cache while the reload waits.
    expect(c.cache.peek('a')).toBe(1);
    expect(await c.cache.get('a')).toBe(1);
    expect(c.loads()).toBe(2);
    c.release();
    await new Promise((r) => setTimeout(r, 0));
    expect(c.cache.peek('a')).toBe(2);
    expect(c.loads()).toBe(2);
  });

  it('when an entry has expired, then peek gives nothing and get waits for a load', async () => {
    const values = new Map([['a', 1]]);
    const c = clockedCache(values);
    await c.cache.get('a');
    values.set('a', 3);
    c.advance(1_001);
    expect(c.cache.peek('a')).toBeUndefined();
    expect(await c.cache.get('a')).toBe(3);
  });

  it('when a key does not exist, then the miss is cached briefly and deleted entries load again', async () => {
    const values = new Map<string, number>();
    const c = clockedCache(values);
    expect(await c.cache.get('x')).toBeUndefined();
    expect(await c.cache.get('x')).toBeUndefined();
    expect(c.loads()).toBe(1);
    values.set('x', 5);
    c.cache.delete('x');
    expect(await c.cache.get('x')).toBe(5);
  });
});
