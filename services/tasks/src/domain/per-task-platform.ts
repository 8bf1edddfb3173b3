import type { AsyncTaskDoc } from '../data/async-task-repository.ts';
import type { SunoDeps } from './suno.ts';
import { everyLimit, FETCH_CONCURRENCY, type TaskPlatform } from './task-platform.ts';

/**
 * A video platform polled with one GET per task (its list endpoints page and take no ids: Kling,
 * Vidu, Doubao). `path` is the task's URL on the channel; `read` turns a 200 answer into the task's
 * change, or undefined when the answer says nothing yet. A 5xx, 401 or 429 stops the round (the
 * channel is down or out of quota: retried at the next poll); `label` names the platform in the
 * refund log.
 */
/** An upstream field as text ('' when absent): the per-task platforms read loosely typed JSON. */
export const str = (v: unknown): string => (typeof v === 'string' ? v : v == null ? '' : String(v));

/** The progress shown for each stored status of a per-task video platform (Kling, Vidu, Doubao). */
export const TASK_PROGRESS: Record<string, string> = {
  SUBMITTED: '10%',
  IN_PROGRESS: '50%',
  SUCCESS: '100%',
  FAILURE: '100%',
};

export function perTaskPlatform(
  deps: Pick<SunoDeps, 'repo' | 'upstream'>,
  spec: {
    name: string;
    label: string;
    path(t: AsyncTaskDoc): string;
    read(body: unknown, t: AsyncTaskDoc): Partial<AsyncTaskDoc> | undefined;
  },
): TaskPlatform<AsyncTaskDoc> {
  return {
    name: spec.name,
    ops: deps.repo.forPlatform(spec.name),
    upstreamId: (t) => t.task_id,
    async fetch(channel, tasks) {
      const out = new Map<string, Partial<AsyncTaskDoc>>();
      const ok = await everyLimit(tasks, FETCH_CONCURRENCY, async (t) => {
        const r = await deps.upstream.get(channel, spec.path(t));
        if (r.status >= 500 || r.status === 401 || r.status === 429) return false;
        const change = r.status === 200 ? spec.read(r.body, t) : undefined;
        if (change) out.set(t.task_id, change);
        return true;
      });
      return ok ? out : undefined;
    },
    timedOut: (now) => ({ status: 'FAILURE', fail_reason: '任务超时', finish_time: Math.floor(now / 1000) }),
    finished: (now) => ({ finish_time: Math.floor(now / 1000) }),
    refundText: (t) => `${spec.label}任务 ${t.task_id} 失败（${t.fail_reason || '未知原因'}），退还 ${t.quota} 额度`,
    logOther: (t) => ({ task_id: t.task_id, action: t.action }),
  };
}

/** The seconds a video task was priced for (its properties), 5 when they say none. */
export function pricedSeconds(t: AsyncTaskDoc): number {
  try {
    return Number((JSON.parse(t.properties) as { seconds?: unknown }).seconds) || 5;
  } catch {
    return 5;
  }
}
