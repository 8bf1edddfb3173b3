/** The logs use cases behind LogsService: queries, stats, cleanup and dashboard data. */
import { invalid } from '@aigw/common/errors';
import type { LogQuery, LogRepository } from '../data/log-repository.ts';
import type { Bucket, LogDoc } from './log-record.ts';

export const MAX_SELF_RANGE_SECONDS = 30 * 24 * 3600;

export function logsService(repo: LogRepository) {
  return {
    async query(
      q: LogQuery,
      page: number,
      pageSize: number,
    ): Promise<{ items: LogDoc[]; total: number; page: number; pageSize: number }> {
      const p = Math.max(1, Math.floor(page) || 1);
      const size = Math.min(100, Math.max(1, Math.floor(pageSize) || 10));
      const { items, total } = await repo.find(q, p, size);
      return { items, total, page: p, pageSize: size };
    },
    stat: (q: LogQuery) => repo.stat(q),
    async deleteBefore(ts: number): Promise<number> {
      if (!ts || ts <= 0) throw invalid('请选择日志记录时间');
      return repo.deleteBefore(ts);
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
