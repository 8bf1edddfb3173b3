import type { ServiceImpl } from '@aigw/common';
import type { LogFilter, LogsService } from '@aigw/proto/logs/v1/logs';
import type { LogQuery } from '../../data/log-filter.ts';
import type { LogDoc } from '../../domain/log-record.ts';
import type { LogsUseCases } from '../../domain/logs-service.ts';

function toQuery(f: LogFilter | undefined): LogQuery {
  if (!f) return {};
  return {
    type: f.type,
    user_id: f.userId,
    username: f.username,
    token_name: f.tokenName,
    model_name: f.modelName,
    start: f.startTimestamp,
    end: f.endTimestamp,
    channel: f.channel,
    group: f.group,
  };
}

/** A stored log as the Log message. */
function logMessage(l: LogDoc) {
  return {
    id: l.id,
    createdAt: l.created_at,
    type: l.type,
    channel: l.channel,
    userId: l.user_id,
    username: l.username,
    tokenName: l.token_name,
    modelName: l.model_name,
    useTime: l.use_time,
    isStream: l.is_stream,
    promptTokens: l.prompt_tokens,
    completionTokens: l.completion_tokens,
    quota: l.quota,
    content: l.content,
    other: l.other,
    tokenId: l.token_id,
    group: l.group,
    ip: l.ip,
    requestId: l.request_id,
  };
}

/** LogsService over the use cases (thin: field mapping only). */
export function logsHandlers(uc: LogsUseCases): ServiceImpl<typeof LogsService> {
  return {
    async queryLogs(req) {
      const r = await uc.query(toQuery(req.filter), req.page?.page ?? 1, req.page?.pageSize ?? 10);
      return {
        items: r.items.map(logMessage),
        page: { page: r.page, pageSize: r.pageSize, total: r.total },
      };
    },
    getLogStat: (req) => uc.stat(toQuery(req.filter)),
    async *exportLogs(req) {
      for await (const chunk of uc.exportRows(toQuery(req.filter))) yield { items: chunk.map(logMessage) };
    },
    async deleteLogsBefore(req) {
      return { count: await uc.deleteBefore(req.targetTimestamp) };
    },
    async getDashboardData(req) {
      const rows = await uc.dashboard({
        userId: req.userId,
        username: req.username,
        start: req.startTimestamp,
        end: req.endTimestamp,
        self: req.userId > 0 && !req.username,
      });
      return {
        items: rows.map((b) => ({
          createdAt: b.created_at,
          modelName: b.model_name,
          userId: b.user_id,
          username: b.username,
          tokenUsed: b.token_used,
          count: b.count,
          quota: b.quota,
        })),
      };
    },
  };
}
