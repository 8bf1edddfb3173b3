import { describe, expect, it } from 'vitest';
import { bucketDocOf, bucketsOfDay, dayIncrement, incDifference, modelField, sumsAbove } from './day-buckets.ts';
import { parseEntry, storedEntry } from './log-index.ts';
import {
  classOf,
  cleanupPlan,
  indexCollection,
  indexDays,
  keptFrom,
  rowPartitions,
  rowsCollection,
  ymd,
} from './log-partitions.ts';
import { bounded, DEFAULT_LOG_WINDOW_SECONDS } from './logs-service.ts';

const DAY = 86_400;
const d27 = Date.UTC(2026, 10, 27) / 1000 / DAY;

describe('log partitions', () => {
  it('when a log is stored, then its class and UTC day name its collection', () => {
    expect([1, 2, 3, 4, 5, 6].map(classOf)).toEqual(['system', 'consume', 'system', 'system', 'error', 'system']);
    expect(ymd(d27)).toBe('20261127');
    expect(rowsCollection('consume', d27)).toBe('logs_consume_20261127');
    expect(indexCollection(d27)).toBe('log_index_20261127');
    expect(rowPartitions(['logs', 'logs_error_20261126', 'logs_consume_20261127', 'quota_data'])).toEqual([
      { name: 'logs_consume_20261127', cls: 'consume', day: d27 },
      { name: 'logs_error_20261126', cls: 'error', day: d27 - 1 },
    ]);
    expect(indexDays(['log_index', 'log_index_20261127'])).toEqual([d27]);
  });

  it('when retention is 0, then nothing is kept from a day; else that many whole days before today', () => {
    const now = d27 * DAY + 3_600;
    expect(keptFrom({ consume: 0, error: 7, system: 0 }, now)).toEqual({ consume: null, error: d27 - 7, system: null });
  });

  it('when the cut and a class retention pass days, then those partitions go, emptied days lose their lists and the others are rebuilt', () => {
    const parts = rowPartitions(
      [24, 25, 26, 27].flatMap((d) => ['consume', 'error', 'system'].map((c) => `logs_${c}_202611${d}`)),
    );
    // Cut on the 25th at noon; errors kept from the 26th.
    const plan = cleanupPlan(parts, (d27 - 2) * DAY + 43_200, { consume: null, error: d27 - 1, system: null });
    expect(plan.drop.map((p) => p.name).sort()).toEqual([
      'logs_consume_20261124',
      'logs_error_20261124',
      'logs_error_20261125',
      'logs_system_20261124',
    ]);
    expect(plan.dropIndexDays).toEqual([d27 - 3]);
    expect(plan.rebuildDays).toEqual([d27 - 2]);
    expect(cleanupPlan(parts, 0, { consume: null, error: null, system: null }).drop).toEqual([]);
  });

  it('when a query names no start, then it covers the 30 days before its end (or now)', () => {
    const now = d27 * DAY;
    expect(bounded({ user_id: 3 }, now)).toEqual({ user_id: 3, start: now - DEFAULT_LOG_WINDOW_SECONDS });
    expect(bounded({ end: now - DAY }, now)).toEqual({ end: now - DAY, start: now - DAY - DEFAULT_LOG_WINDOW_SECONDS });
    expect(bounded({ start: 5, end: 9 }, now)).toEqual({ start: 5, end: 9 });
  });

  it('when consumption logs are summed, then one document per user and hour holds it per model, and a replay above the offset adds nothing', () => {
    const at = d27 * DAY + 5 * 3_600 + 10;
    const log = (offset: number, model: string, quota: number, created_at = at) => ({
      offset,
      log: { user_id: 7, username: 'u7', model_name: model, created_at, prompt_tokens: 3, completion_tokens: 2, quota },
    });
    const rows = [log(10, 'gpt-4.1', 100), log(11, 'gpt-4.1', 50), log(12, '$x', 5, at + 3_600)];
    expect(new Set(rows.map((r) => bucketDocOf(r.log)))).toEqual(new Set([`b|7|${d27}|5`, `b|7|${d27}|6`]));
    expect(modelField('gpt-4.1')).toBe('gpt-4%2E1');
    const inc = dayIncrement(rows.map((r) => r.log));
    expect(inc).toEqual({
      'h.5.gpt-4%2E1.t': 10,
      'h.5.gpt-4%2E1.c': 2,
      'h.5.gpt-4%2E1.q': 150,
      'h.6.%24x.t': 5,
      'h.6.%24x.c': 1,
      'h.6.%24x.q': 5,
    });
    // The document absorbed offset 11 already: only 12 is added; a stale guess (10) is corrected.
    expect(sumsAbove(rows, 11).map((r) => r.offset)).toEqual([12]);
    const fix = incDifference(dayIncrement(sumsAbove(rows, 11).map((r) => r.log)), inc);
    expect(fix).toEqual({ 'h.5.gpt-4%2E1.t': -10, 'h.5.gpt-4%2E1.c': -2, 'h.5.gpt-4%2E1.q': -150 });
    const doc = {
      _id: `b|7|${d27}`,
      username: 'u7',
      h: { 5: { 'gpt-4%2E1': { t: 10, c: 2, q: 150 } }, 6: { '%24x': { t: 5, c: 1, q: 5 } } },
    };
    expect(bucketsOfDay(doc, d27 * DAY + 6 * 3_600 + 30, d27 * DAY + DAY)).toEqual([
      {
        key: `7:$x:${d27 * DAY + 6 * 3_600}`,
        user_id: 7,
        username: 'u7',
        model_name: '$x',
        created_at: d27 * DAY + 6 * 3_600,
        token_used: 5,
        count: 1,
        quota: 5,
      },
    ]);
  });

  it('when an entry is stored in its block, then it is one JSON text, and older arrays read the same', () => {
    const l = {
      id: 5,
      event_id: 'e5',
      created_at: 9,
      type: 2,
      quota: 3,
      tokens: 4,
      user_id: 7,
      username: 'u7',
      token_name: 'k',
      model_name: 'm',
      channel: 2,
      group: 'g',
    };
    const text = storedEntry(l);
    expect(typeof text).toBe('string');
    expect(parseEntry(text)).toEqual([5, 'e5', 9, 2, 3, 4, 'u7', 'k', 'm', 2, 'g', 7]);
    expect(parseEntry([5, 'e5', 9, 2, 3, 4, 'u7', 'k', 'm', 2, 'g', 7])).toEqual(parseEntry(text));
    expect(parseEntry(7)).toBeUndefined();
  });
});
