import { describe, expect, it } from 'vitest';
import { cubeable, cubeDoc, cubeOf, mergeCubes, tally, validRows } from './log-cubes.ts';
import { type Entry, entryOf } from './log-index.ts';

const entry = (id: number, user: number, model: string, type = 2, quota = 10): Entry =>
  entryOf({
    id,
    event_id: `e${id}`,
    created_at: 1_000 + id,
    type,
    quota,
    tokens: 1,
    user_id: user,
    username: `user${user}`,
    token_name: id % 2 ? 'ci' : 'default',
    model_name: model,
    channel: 1 + (id % 3),
    group: 'default',
  });

describe('log cubes', () => {
  const entries = Array.from({ length: 60 }, (_, i) => entry(i, 1 + (i % 4), i % 5 ? 'gpt-4o' : 'o1', i % 7 ? 2 : 5));

  it('when a cube sums entries, then every filter counts what the entries that match hold', () => {
    const rows = cubeOf(entries, false);
    expect(rows.length).toBeLessThan(entries.length);
    for (const f of [{ model_name: 'o1' }, { token_name: 'ci', type: 5 }, { channel: 2, model_name: 'gpt-4o' }, {}]) {
      const m = entries.filter(
        (e) =>
          (!f.model_name || e[8] === f.model_name) &&
          (!('token_name' in f) || e[7] === f.token_name) &&
          (!('type' in f) || e[3] === f.type) &&
          (!('channel' in f) || e[9] === f.channel),
      );
      expect(tally(rows, f)).toEqual({ n: m.length, quota: m.reduce((s, e) => s + e[4], 0) });
    }
  });

  it("when the scope is not a user's, then its cube holds no user and cannot answer a user filter", () => {
    expect(tally(cubeOf(entries, false), { username: 'user2' }).n).toBe(0);
    expect(cubeable('mgpt-4o', { username: 'user2' })).toBe(false);
    expect(cubeable('u2', { username: 'user2', model_name: 'o1' })).toBe(true);
    expect(cubeable('u2t5', { token_name: 'ci' })).toBe(true);
    const mine = entries.filter((e) => e[11] === 2);
    expect(tally(cubeOf(mine, true), { user_id: 2, username: 'user2' }).n).toBe(mine.length);
  });

  it("when a day's cube is merged from its hours', then it counts what one cube of all the entries counts", () => {
    const merged = mergeCubes([cubeOf(entries.slice(0, 25), true), cubeOf(entries.slice(25), true)]);
    const whole = cubeOf(entries, true);
    expect(merged.length).toBe(whole.length);
    for (const f of [{ model_name: 'o1' }, { user_id: 3, type: 5 }, {}])
      expect(tally(merged, f)).toEqual(tally(whole, f));
  });

  it("when the directory's counts changed since the cube was computed, then the cube is not used", () => {
    const doc = cubeDoc('u1|d20000|q', [[480_000, 12]], cubeOf(entries, true));
    expect(validRows(doc, [[480_000, 12]])).toEqual(cubeOf(entries, true));
    expect(validRows(doc, [[480_000, 13]])).toBeUndefined();
    expect(
      validRows(doc, [
        [480_000, 12],
        [480_001, 1],
      ]),
    ).toBeUndefined();
    expect(validRows(undefined, [[480_000, 12]])).toBeUndefined();
  });
});
