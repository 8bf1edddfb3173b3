import { describe, expect, it } from 'vitest';
import {
  BLOCK,
  blockDocIds,
  blockId,
  blockPartId,
  dayOfDoc,
  type HourSlot,
  hourBounds,
  hourIncrement,
  type Indexable,
  wholeIn,
} from './log-index.ts';

const H = 493_000; // an hour number
const log = (at: number, type: number, model: string, quota = 0): Indexable => ({
  id: at,
  event_id: `e${at}`,
  created_at: at,
  type,
  quota,
  tokens: 1,
  user_id: 1,
  username: 'u',
  token_name: 't',
  model_name: model,
  channel: 1,
  group: 'g',
});

/** The slot an hour's $inc, $min and $max leave in a new directory. */
function slotOf(logs: Indexable[]): HourSlot {
  const doc: Record<string, unknown> = {};
  const b = hourBounds(H, logs);
  for (const [path, v] of Object.entries({ ...hourIncrement(H, logs), ...b.min, ...b.max })) {
    const keys = path.split('.').slice(2);
    let o = doc;
    for (const k of keys.slice(0, -1)) {
      if (!o[k]) o[k] = {};
      o = o[k] as Record<string, unknown>;
    }
    o[keys[keys.length - 1] as string] = v;
  }
  return doc as unknown as HourSlot;
}

describe('log index hours', () => {
  const t0 = H * 3600;
  const logs = [log(t0 + 100, 2, 'gpt-4o', 7), log(t0 + 200, 5, 'gpt-4o'), log(t0 + 300, 2, 'o1.mini', 5)];

  it('when an hour is listed, then its counts and the bounds of the logs they cover are kept', () => {
    expect(slotOf(logs)).toEqual({ n: 3, w: 3, a: t0 + 100, z: t0 + 300, q: 12, k: 2, t2: 2, t5: 1 });
  });

  it('when a range cuts an hour, then it counts whole only if all its logs are known to lie inside', () => {
    const s = slotOf(logs);
    expect(wholeIn(H, s, t0, t0 + 3599)).toBe(true);
    expect(wholeIn(H, s, t0 + 100, t0 + 300)).toBe(true);
    expect(wholeIn(H, s, t0 + 101, t0 + 3599)).toBe(false);
    expect(wholeIn(H, s, t0, t0 + 299)).toBe(false);
    // Logs listed before the bounds existed (w < n): their times are unknown.
    expect(wholeIn(H, { ...s, n: 4 }, t0 + 100, t0 + 300)).toBe(false);
  });
});

describe('block documents', () => {
  it('when a block is read, then its whole document and a part for every position it may start at below the count are asked', () => {
    expect(blockDocIds('u7', H, 0, 3)).toEqual([
      blockId('u7', H, 0),
      'u7|493000|0|0',
      'u7|493000|0|1',
      'u7|493000|0|2',
    ]);
    // Block 1 of an hour of 450 logs: positions 200 to 399.
    const ids = blockDocIds('a', H, 1, 450);
    expect(ids).toHaveLength(1 + BLOCK);
    expect(ids[1]).toBe(blockPartId('a', H, 1, 200));
    expect(ids.at(-1)).toBe(blockPartId('a', H, 1, 399));
    // A part lives in its hour's day collection, as its block.
    expect(dayOfDoc(blockPartId('a', H, 1, 200))).toBe(dayOfDoc(blockId('a', H, 1)));
  });
});
