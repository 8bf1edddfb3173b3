/**
 * Where a log is stored: one collection per log class and UTC day (`logs_<class>_<yyyymmdd>`),
 * and the day's part of the list read model in `log_index_<yyyymmdd>`. Writes touch only the
 * days of the batch (today's, in practice); retention and cleanup drop whole collections.
 *
 * Days, not weeks: at 1,000 requests/s a day already holds 86 million rows, retention is counted
 * in days, and the read model's directories are per day, so a day's collections go together.
 * Classes: retention is set per class (consumption, errors, everything else), and a class's day
 * is dropped without touching the rows of the others.
 */
import { LogType } from '@aigw/proto/common/v1/common';

export const DAY = 86_400;
export type LogClass = 'consume' | 'error' | 'system';
export const LOG_CLASSES: readonly LogClass[] = ['consume', 'error', 'system'];

/** Consumption (2) and error (5) logs have their own class; top-up, admin, system and refund share one. */
export const classOf = (type: number): LogClass =>
  type === LogType.CONSUME ? 'consume' : type === LogType.ERROR ? 'error' : 'system';

export const dayOf = (sec: number) => Math.floor(sec / DAY);

/** `20261127` for the UTC day number of 27 Nov 2026. */
export const ymd = (day: number) => new Date(day * DAY * 1000).toISOString().slice(0, 10).replaceAll('-', '');

function dayOfYmd(s: string): number {
  const t = Date.UTC(Number(s.slice(0, 4)), Number(s.slice(4, 6)) - 1, Number(s.slice(6, 8)));
  return Math.floor(t / 1000 / DAY);
}

export const rowsCollection = (cls: LogClass, day: number) => `logs_${cls}_${ymd(day)}`;
export const indexCollection = (day: number) => `log_index_${ymd(day)}`;

export interface RowsPartition {
  name: string;
  cls: LogClass;
  day: number;
}

const ROWS = /^logs_(consume|error|system)_(\d{8})$/;
const INDEX = /^log_index_(\d{8})$/;

/** The row partitions among a database's collection names. */
export function rowPartitions(names: string[]): RowsPartition[] {
  const out: RowsPartition[] = [];
  for (const name of names) {
    const m = ROWS.exec(name);
    if (m) out.push({ name, cls: m[1] as LogClass, day: dayOfYmd(m[2] as string) });
  }
  return out.sort((a, b) => b.day - a.day);
}

/** The days that have a part of the read model among a database's collection names. */
export function indexDays(names: string[]): number[] {
  const out: number[] = [];
  for (const name of names) {
    const m = INDEX.exec(name);
    if (m) out.push(dayOfYmd(m[1] as string));
  }
  return out.sort((a, b) => b - a);
}

/** Days to keep per class; 0 keeps forever (the default). */
export type Retention = Record<LogClass, number>;

/**
 * The first day each class keeps: the last `days` whole days before today and today. Logs of a
 * class older than that are dropped with their day; null keeps everything.
 */
export function keptFrom(retention: Retention, now: number): Record<LogClass, number | null> {
  const today = dayOf(now);
  const from = (days: number) => (days > 0 ? today - days : null);
  return { consume: from(retention.consume), error: from(retention.error), system: from(retention.system) };
}

/**
 * What a cleanup pass does to the row partitions: those before the history cut's day or a class's
 * retention go; of the days they leave behind, a day with no rows left loses its read model, and
 * one with rows of another class left gets its read model rebuilt from them.
 */
export function cleanupPlan(
  parts: RowsPartition[],
  cut: number,
  kept: Record<LogClass, number | null>,
): { drop: RowsPartition[]; dropIndexDays: number[]; rebuildDays: number[] } {
  const cutDay = dayOf(cut);
  const goes = (p: RowsPartition) => p.day < cutDay || (kept[p.cls] !== null && p.day < (kept[p.cls] as number));
  const drop = parts.filter(goes);
  const left = new Set(parts.filter((p) => !goes(p)).map((p) => p.day));
  const days = [...new Set(drop.map((p) => p.day))];
  return {
    drop,
    dropIndexDays: days.filter((d) => !left.has(d)),
    rebuildDays: days.filter((d) => left.has(d)),
  };
}
