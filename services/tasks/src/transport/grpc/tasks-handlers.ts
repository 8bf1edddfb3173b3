import type { ServiceImpl } from '@aigw/common';
import type { TasksService } from '@aigw/proto/tasks/v1/tasks';
import type { AsyncTaskRepository } from '../../data/async-task-repository.ts';
import type { MjTaskRepository } from '../../data/mj-task-repository.ts';

const page = (p?: { page: number; pageSize: number }) => ({
  page: p?.page && p.page > 0 ? p.page : 1,
  pageSize: p?.pageSize && p.pageSize > 0 ? Math.min(p.pageSize, 100) : 10,
});

/** TasksService: the console's task lists (newest first). */
export function tasksHandlers(deps: {
  mj: MjTaskRepository;
  tasks: AsyncTaskRepository;
}): ServiceImpl<typeof TasksService> {
  return {
    async listMjTasks(req) {
      const p = page(req.page);
      const r = await deps.mj.list(
        {
          userId: req.userId,
          channelId: req.channelId,
          mjId: req.mjId.trim(),
          start: req.startTimestamp,
          end: req.endTimestamp,
        },
        p.page,
        p.pageSize,
      );
      return {
        items: r.items.map((t) => ({
          id: t.id,
          userId: t.user_id,
          createdAt: t.created_at,
          submitTime: t.submit_time,
          startTime: t.start_time,
          finishTime: t.finish_time,
          channelId: t.channel_id,
          action: t.action,
          mjId: t.mj_id,
          code: t.code,
          status: t.status,
          progress: t.progress,
          imageUrl: t.image_url,
          prompt: t.prompt,
          promptEn: t.prompt_en,
          failReason: t.fail_reason,
          description: t.description,
          quota: t.quota,
          buttons: t.buttons,
          properties: t.properties,
        })),
        page: { page: p.page, pageSize: p.pageSize, total: r.total },
      };
    },
    async listTasks(req) {
      const p = page(req.page);
      const r = await deps.tasks.list(
        {
          userId: req.userId,
          channelId: req.channelId,
          taskId: req.taskId.trim(),
          platform: req.platform,
          status: req.status,
          start: req.startTimestamp,
          end: req.endTimestamp,
        },
        p.page,
        p.pageSize,
      );
      return {
        items: r.items.map((t) => ({
          id: t.id,
          userId: t.user_id,
          createdAt: t.created_at,
          updatedAt: Math.floor(t.updated_at / 1000),
          submitTime: t.submit_time,
          startTime: t.start_time,
          finishTime: t.finish_time,
          progress: t.progress,
          channelId: t.channel_id,
          platform: t.platform,
          action: t.action,
          taskId: t.task_id,
          status: t.status,
          failReason: t.fail_reason,
          quota: t.quota,
          data: t.data,
        })),
        page: { page: p.page, pageSize: p.pageSize, total: r.total },
      };
    },
  };
}
