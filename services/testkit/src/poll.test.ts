import { describe, expect, it } from 'vitest';
import { eventually, preview } from './poll.ts';

describe('eventually', () => {
  it('when the check passes on a later attempt, then that value is returned', async () => {
    let n = 0;
    const v = await eventually(
      () => ++n,
      (x) => x >= 3,
      { intervalMs: 1 },
    );
    expect(v).toBe(3);
  });

  it('when the check never passes, then it throws naming what was awaited and the last value', async () => {
    await expect(
      eventually(
        async () => ({ quota: 7 }),
        (x) => x.quota === 8,
        { timeoutMs: 50, intervalMs: 5, what: 'the wallet refunded' },
      ),
    ).rejects.toThrow(/the wallet refunded did not hold within 50 ms .*last value: \{"quota":7\}/);
  });

  it('when given a number, then it is the timeout', async () => {
    const started = Date.now();
    await expect(eventually(() => false, Boolean, 30)).rejects.toThrow(/within 30 ms/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('when fn throws, then the error ends the wait', async () => {
    await expect(
      eventually(
        () => {
          throw new Error('boom');
        },
        () => true,
      ),
    ).rejects.toThrow('boom');
  });

  it('previews long values truncated, and Maps, Sets and BigInts readably', () => {
    expect(preview({ m: new Map([['a', 1]]), s: new Set([2]), b: 3n })).toBe('{"m":{"a":1},"s":[2],"b":"3n"}');
    expect(preview('x'.repeat(600), 10)).toBe(`"xxxxxxxxx… (602 chars)`);
  });
});
