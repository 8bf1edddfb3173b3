import { createClient, ok } from '@aigw/common';
import { TasksService } from '@aigw/proto/tasks/v1/tasks';
import type { Request, Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { caller, num, pageAnswer, pageQuery, str } from './wire.ts';

const n = (v: unknown) => {
  const x = num(v);
  return x !== undefined && Number.isFinite(x) ? x : 0;
};

/**
 * /api/mj and /api/task: drawing and async tasks (spec 02 section 7), from the tasks service.
 * The channel filter and column are for admins; the /self variants show the caller's own tasks.
 */
export function taskRoutes(api: Router, { config, guard, options }: RouteDeps): void {
  const tasks = createClient(TasksService, config.TASKS_ADDR);

  /** MjForwardUrlEnabled: images are shown through the server's /mj/image/{id}, as the relay answers them. */
  const imageOf = (item: Record<string, unknown>) => {
    if (!item.image_url || options.get('MjForwardUrlEnabled') === 'false') return item.image_url;
    const base = (options.get('ServerAddress') || 'http://localhost:3000').replace(/\/+$/, '');
    return `${base}/mj/image/${String(item.mj_id)}`;
  };

  const listMj = async (req: Request, admin: boolean) => {
    const q = req.query;
    const r = await tasks.listMjTasks({
      userId: admin ? 0 : caller(req).id,
      channelId: admin ? n(q.channel_id) : 0,
      mjId: str(q.mj_id)?.trim() ?? '',
      startTimestamp: n(q.start_timestamp),
      endTimestamp: n(q.end_timestamp),
      page: pageQuery(req),
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
    const q = req.query;
    const r = await tasks.listTasks({
      userId: admin ? 0 : caller(req).id,
      channelId: admin ? n(q.channel_id) : 0,
      taskId: str(q.task_id)?.trim() ?? '',
      startTimestamp: n(q.start_timestamp),
      endTimestamp: n(q.end_timestamp),
      platform: str(q.platform)?.trim() ?? '',
      status: str(q.status)?.trim() ?? '',
      page: pageQuery(req),
    });
    const page = pageAnswer(r.items, r.page);
    if (admin) return page;
    return { ...page, items: page.items.map(({ channel_id: _c, ...rest }) => rest) };
  };

  api.get('/mj/', guard.admin, async (req, res) => ok(res, await listMj(req, true)));
  api.get('/mj/self', guard.user, async (req, res) => ok(res, await listMj(req, false)));
  api.get('/task/', guard.admin, async (req, res) => ok(res, await listTasks(req, true)));
  api.get('/task/self', guard.user, async (req, res) => ok(res, await listTasks(req, false)));
}
