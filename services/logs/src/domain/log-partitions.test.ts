import { describe, expect, it } from 'vitest';
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
});
