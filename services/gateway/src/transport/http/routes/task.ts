import { createClient, OPTION_CATALOGUE, ok } from '@aigw/common';
import { TasksService } from '@aigw/proto/tasks/v1/tasks';
import type { Request, Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from '../deps.ts';
import { int, optional, optText, pageOf, pageShape, timestamp } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { caller, pageAnswer } from './wire.ts';

const channel = { channel_id: optional(int(0, undefined, '无效的渠道 ID')), ...pageShape };
/** Drawing tasks' times are in milliseconds (spec 02 section 3), async tasks' in seconds. */
const msTimestamp = int(0, 253_402_300_799_999, '时间戳无效');
const MjQuery = validate({
  query: z.object({
    ...channel,
    mj_id: optText,
    start_timestamp: optional(msTimestamp),
    end_timestamp: optional(msTimestamp),
  }),
});
const TaskQuery = validate({
  query: z.object({
    ...channel,
    task_id: optText,
    platform: optText,
    status: optText,
    start_timestamp: optional(timestamp),
    end_timestamp: optional(timestamp),
  }),
});

/**
 * /api/mj and /api/task: drawing and async tasks (spec 02 section 7), from the tasks service.
 * The channel filter and column are for admins; the /self variants show the caller's own tasks.
 */
export function taskRoutes(api: Router, { config, guard, options }: RouteDeps): void {
  // Created at the first call: the route table is also built without peers (the OpenAPI document).
  let client: ReturnType<typeof createClient<typeof TasksService>> | undefined;
  const tasks = {
    listMjTasks: (...a: Parameters<ReturnType<typeof createClient<typeof TasksService>>['listMjTasks']>) => {
      client ??= createClient(TasksService, config.TASKS_ADDR);
      return client.listMjTasks(...a);
    },
    listTasks: (...a: Parameters<ReturnType<typeof createClient<typeof TasksService>>['listTasks']>) => {
      client ??= createClient(TasksService, config.TASKS_ADDR);
      return client.listTasks(...a);
    },
  };

  /** MjForwardUrlEnabled: images are shown through the server's /mj/image/{id}, as the relay answers them. */
  const imageOf = (item: Record<string, unknown>) => {
    if (!item.image_url || !options.bool('MjForwardUrlEnabled')) return item.image_url;
    // An address the admin cleared reads as unset, so a forwarded image URL is never relative.
    const base = (options.text('ServerAddress') || OPTION_CATALOGUE.ServerAddress.default).replace(/\/+$/, '');
    return `${base}/mj/image/${String(item.mj_id)}`;
  };

  const listMj = async (req: Request, admin: boolean) => {
    const q = input(req, MjQuery).query;
    const r = await tasks.listMjTasks({
      userId: admin ? 0 : caller(req).id,
      channelId: admin ? (q.channel_id ?? 0) : 0,
      mjId: q.mj_id?.trim() ?? '',
      startTimestamp: q.start_timestamp ?? 0,
      endTimestamp: q.end_timestamp ?? 0,
      page: pageOf(q),
    });
    const page = pageAnswer(r.items, r.page);
    const items = page.items.map((it) => {
      const { buttons: _b, properties: _p, quota: _q, ...rest } = it;
      const out: Record<string, unknown> = { ...rest, image_url: imageOf(it) };
      if (!admin) delete out.channel_id;
      return out;
    });
    return { ...page, items };
  };

  const listTasks = async (req: Request, admin: boolean) => {
    const q = input(req, TaskQuery).query;
    const r = await tasks.listTasks({
      userId: admin ? 0 : caller(req).id,
      channelId: admin ? (q.channel_id ?? 0) : 0,
      taskId: q.task_id?.trim() ?? '',
      startTimestamp: q.start_timestamp ?? 0,
      endTimestamp: q.end_timestamp ?? 0,
      platform: q.platform?.trim() ?? '',
      status: q.status?.trim() ?? '',
      page: pageOf(q),
    });
    const page = pageAnswer(r.items, r.page);
    if (admin) return page;
    return { ...page, items: page.items.map(({ channel_id: _c, ...rest }) => rest) };
  };

  api.get('/mj/', guard.admin, MjQuery, async (req, res) => ok(res, await listMj(req, true)));
  api.get('/mj/self', guard.user, MjQuery, async (req, res) => ok(res, await listMj(req, false)));
  api.get('/task/', guard.admin, TaskQuery, async (req, res) => ok(res, await listTasks(req, true)));
  api.get('/task/self', guard.user, TaskQuery, async (req, res) => ok(res, await listTasks(req, false)));
}
