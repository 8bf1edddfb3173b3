import type { QuotaData } from '../../api/log.ts';

export type Granularity = 'hour' | 'day' | 'week';

export interface Series {
  /** Slot start times (unix seconds), ascending. */
  slots: number[];
  models: string[];
  /** metric -> model -> value per slot. */
  values: Record<'quota' | 'token_used' | 'count', Record<string, number[]>>;
  totals: { quota: number; token_used: number; count: number };
}

/** The slot a bucket falls in (local day and week boundaries). */
export function slotOf(seconds: number, g: Granularity): number {
  if (g === 'hour') return Math.floor(seconds / 3600) * 3600;
  const d = new Date(seconds * 1000);
  d.setHours(0, 0, 0, 0);
  if (g === 'week') d.setDate(d.getDate() - ((d.getDay() + 6) % 7));
  return Math.floor(d.getTime() / 1000);
}

/** Groups hourly buckets into slots per model (the charts' input). */
export function aggregate(rows: QuotaData[], g: Granularity): Series {
  const slots = [...new Set(rows.map((r) => slotOf(r.created_at, g)))].sort((a, b) => a - b);
  const index = new Map(slots.map((s, i) => [s, i]));
  const models = [...new Set(rows.map((r) => r.model_name))].sort();
  const values: Series['values'] = { quota: {}, token_used: {}, count: {} };
  for (const metric of ['quota', 'token_used', 'count'] as const) {
    for (const m of models) values[metric][m] = slots.map(() => 0);
  }
  const totals = { quota: 0, token_used: 0, count: 0 };
  for (const r of rows) {
    const i = index.get(slotOf(r.created_at, g)) ?? 0;
    for (const metric of ['quota', 'token_used', 'count'] as const) {
      const arr = values[metric][r.model_name];
      if (arr) arr[i] = (arr[i] ?? 0) + r[metric];
      totals[metric] += r[metric];
    }
  }
  return { slots, models, values, totals };
}
