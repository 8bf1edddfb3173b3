/** Midjourney as a polled platform: list-by-condition per channel, notifyHook on changes. */
import type { MjTaskDoc, MjTaskRepository } from '../data/mj-task-repository.ts';
import { mjTaskView } from './mj-view.ts';
import type { TaskOptions, UpstreamPort } from './ports.ts';
import type { TaskPlatform } from './task-platform.ts';

const str = (v: unknown) => (typeof v === 'string' ? v : v == null ? '' : String(v));
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The fields of an upstream (midjourney-proxy) task this service keeps. */
export function progressOf(up: Record<string, unknown>): Partial<MjTaskDoc> {
  const p: Partial<MjTaskDoc> = {
    status: str(up.status) || 'SUBMITTED',
    progress: str(up.progress) || '0%',
    image_url: str(up.imageUrl),
    prompt_en: str(up.promptEn),
    description: str(up.description),
    fail_reason: str(up.failReason),
    start_time: num(up.startTime),
    finish_time: num(up.finishTime),
    buttons: Array.isArray(up.buttons) ? JSON.stringify(up.buttons) : '',
    properties: up.properties && typeof up.properties === 'object' ? JSON.stringify(up.properties) : '',
  };
  // The upstream keeps the prompt; an empty one in an answer is no reason to lose ours.
  if (str(up.prompt)) p.prompt = str(up.prompt);
  if (!p.finish_time) delete p.finish_time;
  return p;
}

export function mjPlatform(deps: {
  repo: MjTaskRepository;
  upstream: UpstreamPort;
  options: TaskOptions;
  notify(url: string, body: unknown): void;
  forwardBase(): string | undefined;
}): TaskPlatform<MjTaskDoc> {
  return {
    name: 'midjourney',
    ops: deps.repo,
    upstreamId: (t) => t.mj_id,
    async fetch(channel, tasks) {
      const r = await deps.upstream.post(channel, '/mj/task/list-by-condition', { ids: tasks.map((t) => t.mj_id) });
      if (r.status !== 200 || !Array.isArray(r.body)) return undefined;
      const out = new Map<string, Partial<MjTaskDoc>>();
      for (const up of r.body as unknown[]) {
        if (up && typeof up === 'object')
          out.set(str((up as Record<string, unknown>).id), progressOf(up as Record<string, unknown>));
      }
      return out;
    },
    timedOut: (now) => ({ status: 'FAILURE', fail_reason: '任务超时', finish_time: now }),
    finished: (now) => ({ finish_time: now }),
    refundText: (t) => `绘图任务 ${t.mj_id} 失败（${t.fail_reason || '未知原因'}），退还 ${t.quota} 额度`,
    logOther: (t) => ({ mj_id: t.mj_id, action: t.action, task_id: t.id }),
    changed(t) {
      if (t.notify_hook && deps.options.bool('MjNotifyEnabled')) {
        deps.notify(t.notify_hook, mjTaskView(t, deps.forwardBase()));
      }
    },
  };
}
