/** The logs use cases behind LogsService: queries, stats, cleanup and dashboard data. */
import { invalid } from '@aigw/common/errors';
import type { LogQuery } from '../data/log-filter.ts';
import type { Bucket, LogDoc } from './log-record.ts';
import type { LogStore } from './log-store.ts';

export const MAX_SELF_RANGE_SECONDS = 30 * 24 * 3600;
/**
 * The window of a log query or stat that names no start: the 30 days before its end (or now).
 * Every read is bounded by time; the console always sends its range.
 */
export const DEFAULT_LOG_WINDOW_SECONDS = 30 * 24 * 3600;

/** A query with its time range filled in (the default window when it names no start). */
export function bounded(q: LogQuery, now = Math.floor(Date.now() / 1000)): LogQuery {
  if (q.start) return q;
  return { ...q, start: Math.max(1, (q.end || now) - DEFAULT_LOG_WINDOW_SECONDS) };
}

/** `afterCut`: starts the background deletion of the logs before a cut (log-cleanup.ts). */
export function logsService(repo: LogStore, opts: { afterCut?: () => void } = {}) {
  return {
    async query(
      q: LogQuery,
      page: number,
      pageSize: number,
    ): Promise<{ items: LogDoc[]; total: number; page: number; pageSize: number }> {
      const p = Math.max(1, Math.floor(page) || 1);
      const size = Math.min(100, Math.max(1, Math.floor(pageSize) || 10));
      const { items, total } = await repo.find(bounded(q), p, size);
      return { items, total, page: p, pageSize: size };
    },
    stat: (q: LogQuery) => repo.stat(bounded(q)),
    /** Every log of a query's window, in chunks (the CSV export; see data/log-export.ts). */
    exportRows: (q: LogQuery) => repo.exportRows(bounded(q)),
    async deleteBefore(ts: number): Promise<number> {
      if (!ts || ts <= 0) throw invalid('请选择日志记录时间');
      const n = await repo.deleteBefore(ts);
      opts.afterCut?.();
      return n;
    },
    async dashboard(q: {
      userId: number;
      username: string;
      start: number;
      end: number;
      self: boolean;
    }): Promise<Bucket[]> {
      const now = Math.floor(Date.now() / 1000);
      const end = q.end || now;
      const start = q.start || end - 24 * 3600;
      if (start > end) throw invalid('开始时间不能晚于结束时间');
      if (q.self && end - start > MAX_SELF_RANGE_SECONDS) throw invalid('时间跨度不能超过 1 个月');
      return repo.dashboard({
        ...(q.userId ? { user_id: q.userId } : {}),
        ...(q.username ? { username: q.username } : {}),
        start,
        end,
      });
    },
  };
}

export type LogsUseCases = ReturnType<typeof logsService>;
