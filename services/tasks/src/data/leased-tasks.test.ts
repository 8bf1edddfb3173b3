import { describe, expect, it } from 'vitest';
import { mayWrite, pollUpdate } from './lease-writes.ts';
import { type LeasedTask, sortClaimed } from './leased-tasks.ts';

const task = (id: number, f: Partial<LeasedTask> = {}) =>
  ({ _id: id, id, final: false, next_poll_at: 0, lease_until: 0, ...f }) as LeasedTask;

describe('lease rounds', () => {
  it('when claimed members are read back, then ready, gone (missing or final) and later ones are told apart', () => {
    const docs = [
      task(1),
      task(2, { final: true }),
      task(3, { next_poll_at: 500 }),
      task(4, { lease_until: 500 }),
      task(6, { next_poll_at: 100, lease_until: 100 }),
    ];
    const { ready, gone, later } = sortClaimed([1, 2, 3, 4, 5, 6], docs, 100);
    // Due and free at `now` itself counts as ready.
    expect(ready.map((t) => t.id)).toEqual([1, 6]);
    expect(gone).toEqual([5, 2]);
    expect([...later]).toEqual([[500, [3, 4]]]);
  });

  it('when a changed poll is written, then it is filtered on final false, and under a Mongo lease on its token', () => {
    const w = { task: task(7), fields: { status: 'RUNNING' }, nextPollAt: 900 };
    const redis = pollUpdate(w, { redis: true, until: 1000 }, 'r1', 50);
    expect(redis.filter).toEqual({ _id: 7, final: false });
    expect(redis.update).toEqual({
      $set: { status: 'RUNNING', updated_at: 50, next_poll_at: 900 },
      $inc: { polls: 1 },
      $addToSet: { pollers: 'r1' },
    });
    const mongo = pollUpdate(w, { redis: false, token: 't1' }, 'r1', 50);
    expect(mongo.filter).toEqual({ _id: 7, final: false, lease_owner: 't1' });
    expect(mongo.update.$set).toMatchObject({ lease_until: 0, lease_owner: '' });
  });

  it('when a Redis claim has less than half its time left, then the round no longer writes', () => {
    const now = Date.now();
    expect(mayWrite({ redis: true, until: now + 20_000 }, 30_000)).toBe(true);
    expect(mayWrite({ redis: true, until: now + 10_000 }, 30_000)).toBe(false);
    expect(mayWrite({ redis: false, token: 't' }, 30_000)).toBe(true);
  });
});
