/**
 * Suno through new-api's task API: `POST /suno/submit/{music|lyrics}` answers
 * `{code: "success", message, data: task_id}`, `GET /suno/fetch/{id}` and `POST /suno/fetch`
 * (`{ids}`) answer the stored tasks. Per-call prices suno_music and suno_lyrics are reserved at
 * submit, kept when the upstream accepts (logged once), settled on SUCCESS and refunded on
 * FAILURE or timeout (reference-behaviour "Async tasks"). Channel type 36.
 */
import { randomUUID } from 'node:crypto';
import type { AsyncTaskDoc, AsyncTaskRepository } from '../data/async-task-repository.ts';
import { authorize, priceCall, taskChannel } from './authorize.ts';
import { type Charge, giveBack, heldTaskFields, logCharge, reserve } from './charge.ts';
import { MjError } from './mj-error.ts';
import type { Peers, TaskOptions, UpstreamPort, UsagePort } from './ports.ts';
import type { TaskPlatform } from './task-platform.ts';

export const SUNO_CHANNEL_TYPE = 36;

export interface SunoDeps {
  repo: AsyncTaskRepository;
  peers: Peers;
  options: TaskOptions;
  upstream: UpstreamPort;
  usage: UsagePort;
  onError(err: unknown, what: string): void;
}

/** A refusal in the task API's shape: `{code, message, data: null}`. */
export class SunoError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** MjError (shared auth and pricing checks) in the Suno shape. */
function asSuno(err: unknown): unknown {
  if (err instanceof MjError) return new SunoError(err.status, 'invalid_request', err.description);
  return err;
}

const str = (v: unknown) => (typeof v === 'string' ? v : v == null ? '' : String(v));
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export function sunoTaskView(t: AsyncTaskDoc): Record<string, unknown> {
  let data: unknown = null;
  try {
    data = t.data ? JSON.parse(t.data) : null;
  } catch {
    data = null;
  }
  return {
    task_id: t.task_id,
    notify_hook: '',
    action: t.action,
    status: t.status,
    fail_reason: t.fail_reason,
    submit_time: t.submit_time,
    start_time: t.start_time,
    finish_time: t.finish_time,
    progress: t.progress,
    data,
  };
}

export async function submitSuno(
  d: SunoDeps,
  input: { action: 'MUSIC' | 'LYRICS'; body: Record<string, unknown>; key: string | undefined; ip: string },
): Promise<{ status: number; body: unknown }> {
  try {
    const caller = await authorize(d.peers, input.key, input.ip);
    const { action, body } = input;
    if (action === 'LYRICS' && !str(body.prompt).trim()) throw new SunoError(400, 'invalid_request', 'prompt 不能为空');
    if (action === 'MUSIC' && !str(body.prompt).trim() && !str(body.gpt_description_prompt).trim()) {
      throw new SunoError(400, 'invalid_request', 'prompt 或 gpt_description_prompt 不能为空');
    }
    const model = action === 'MUSIC' ? 'suno_music' : 'suno_lyrics';
    const { auth, channel } = await taskChannel(d, caller, model);
    if (!channel || channel.type !== SUNO_CHANNEL_TYPE) {
      throw new SunoError(503, 'no_channel', `当前分组 ${auth.group} 下对于模型 ${model} 无可用渠道`);
    }
    const price = priceCall(auth, model, await d.peers.ratios(), d.options.number('QuotaPerUnit'));
    const charge: Charge = { requestId: `suno:${randomUUID()}`, model, ...price };
    await reserve(d.peers, auth, charge, (m) => new SunoError(403, 'quota_not_enough', m));

    const { notify_hook: _hook, ...upBody } = body;
    let answer: { status: number; body: unknown };
    try {
      answer = await d.upstream.post(channel, `/suno/submit/${action.toLowerCase()}`, upBody);
    } catch (err) {
      await giveBack(d.peers, charge, d.onError);
      d.onError(err, 'suno submit failed');
      throw new SunoError(502, 'upstream_error', '上游服务请求失败');
    }
    const up = (answer.body ?? {}) as Record<string, unknown>;
    const taskId = str(up.data);
    if (answer.status !== 200 || up.code !== 'success' || !taskId) {
      await giveBack(d.peers, charge, d.onError);
      const message = str(up.message) || '上游返回错误';
      return {
        status: answer.status === 200 ? 400 : answer.status,
        body: { code: str(up.code) || 'fail', message, data: null },
      };
    }
    const now = Date.now();
    const task = await d.repo.insert({
      ...heldTaskFields(auth, channel.id, charge, now),
      platform: 'suno',
      action,
      task_id: taskId,
      status: 'SUBMITTED',
      progress: '0%',
      data: '',
      properties: JSON.stringify(upBody),
    });
    await logCharge(
      d.usage,
      auth,
      charge,
      {
        channelId: channel.id,
        content: `Suno ${action}，任务 ${taskId}`,
        other: { task_id: taskId, action },
        ip: input.ip,
      },
      d.onError,
    );
    return { status: 200, body: { code: 'success', message: '', data: task.task_id } };
  } catch (err) {
    throw asSuno(err);
  }
}

export async function fetchSuno(
  d: SunoDeps,
  input: { ids: string[]; one: boolean; key: string | undefined; ip: string },
): Promise<{ status: number; body: unknown }> {
  try {
    const auth = await authorize(d.peers, input.key, input.ip);
    const ids = input.ids.map(String).slice(0, 1000);
    const tasks = (ids.length ? await d.repo.byTaskIds(ids, auth.caller.user.id) : []).filter(
      (t) => t.platform === 'suno',
    );
    if (input.one) {
      const t = tasks[0];
      if (!t) throw new SunoError(404, 'task_not_exist', '任务不存在');
      return { status: 200, body: { code: 'success', message: '', data: sunoTaskView(t) } };
    }
    const seen = new Set<string>();
    const data = tasks.filter((t) => !seen.has(t.task_id) && seen.add(t.task_id)).map(sunoTaskView);
    return { status: 200, body: { code: 'success', message: '', data } };
  } catch (err) {
    throw asSuno(err);
  }
}

/** Suno as a polled platform: POST /suno/fetch with the channel's task ids. */
export function sunoPlatform(deps: { repo: AsyncTaskRepository; upstream: UpstreamPort }): TaskPlatform<AsyncTaskDoc> {
  return {
    name: 'suno',
    ops: deps.repo.forPlatform('suno'),
    upstreamId: (t) => t.task_id,
    async fetch(channel, tasks) {
      const r = await deps.upstream.post(channel, '/suno/fetch', { ids: tasks.map((t) => t.task_id) });
      const body = r.body as { code?: string; data?: unknown } | undefined;
      if (r.status !== 200 || body?.code !== 'success' || !Array.isArray(body.data)) return undefined;
      const out = new Map<string, Partial<AsyncTaskDoc>>();
      for (const up of body.data as Record<string, unknown>[]) {
        if (!up || typeof up !== 'object') continue;
        const p: Partial<AsyncTaskDoc> = {
          status: str(up.status) || 'SUBMITTED',
          progress: str(up.progress) || '0%',
          fail_reason: str(up.fail_reason),
          start_time: num(up.start_time),
          data: up.data === undefined || up.data === null ? '' : JSON.stringify(up.data),
        };
        if (num(up.finish_time)) p.finish_time = num(up.finish_time);
        out.set(str(up.task_id), p);
      }
      return out;
    },
    timedOut: (now) => ({ status: 'FAILURE', fail_reason: '任务超时', finish_time: Math.floor(now / 1000) }),
    finished: (now) => ({ finish_time: Math.floor(now / 1000) }),
    refundText: (t) => `Suno 任务 ${t.task_id} 失败（${t.fail_reason || '未知原因'}），退还 ${t.quota} 额度`,
    logOther: (t) => ({ task_id: t.task_id, action: t.action }),
  };
}
