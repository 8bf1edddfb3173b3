import { describe, expect, it } from 'vitest';
import { aggregate } from './aggregate.ts';

describe('dashboard aggregation', () => {
  it('when hourly buckets of two models are grouped, then each slot sums per model and the totals add up', () => {
    const h = 1_700_000_000 - (1_700_000_000 % 3600);
    const s = aggregate(
      [
        { created_at: h, model_name: 'a', user_id: 1, username: 'u', token_used: 10, count: 1, quota: 5 },
        { created_at: h, model_name: 'b', user_id: 1, username: 'u', token_used: 20, count: 2, quota: 7 },
        { created_at: h + 3600, model_name: 'a', user_id: 2, username: 'v', token_used: 1, count: 1, quota: 1 },
      ],
      'hour',
    );
    expect(s.slots).toEqual([h, h + 3600]);
    expect(s.models).toEqual(['a', 'b']);
    expect(s.values.quota.a).toEqual([5, 1]);
    expect(s.values.count.b).toEqual([2, 0]);
    expect(s.totals).toEqual({ quota: 13, token_used: 31, count: 4 });
  });
});
