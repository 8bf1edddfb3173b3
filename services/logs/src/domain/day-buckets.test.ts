import { describe, expect, it } from 'vitest';
import { bucketsOfDay, dayBucketId, dayIncrement, modelField } from './day-buckets.ts';

describe('day buckets', () => {
  const at = 20_000 * 86_400 + 3 * 3_600 + 5;
  const log = (model_name: string) => ({
    user_id: 7,
    username: 'u',
    model_name,
    created_at: at,
    prompt_tokens: 3,
    completion_tokens: 4,
    quota: 30,
  });

  it('when a log has no model, then its sums go under a field that is not empty and read back as the empty model', () => {
    const inc = dayIncrement([log(''), log('gpt-4.1')]);
    expect(Object.keys(inc).every((k) => k.split('.').every((part) => part.length > 0))).toBe(true);
    expect(inc['h.3.@.c']).toBe(1);
    const h: Record<string, Record<string, { t: number; c: number; q: number }>> = {};
    for (const [path, v] of Object.entries(inc)) {
      const [, hour, field, key] = path.split('.') as [string, string, string, 't' | 'c' | 'q'];
      h[hour] ??= {};
      h[hour][field] ??= { t: 0, c: 0, q: 0 };
      h[hour][field][key] += v;
    }
    const buckets = bucketsOfDay({ _id: dayBucketId(7, 20_000), h }, 0, Number.MAX_SAFE_INTEGER);
    expect(buckets.map((b) => [b.model_name, b.count, b.quota, b.token_used]).sort()).toEqual([
      ['', 1, 30, 7],
      ['gpt-4.1', 1, 30, 7],
    ]);
  });

  it('keeps model names that look like the empty field apart', () => {
    expect(modelField('@')).not.toBe(modelField(''));
    expect(modelField('a.b')).toBe('a%2Eb');
  });
});
