/**
 * Kling (可灵) video generation in Kling's own API, as new-api's users call it:
 * `POST /kling/v1/videos/{text2video|image2video}` and `GET /kling/v1/videos/{kind}/{task_id}`,
 * answered in Kling's `{code: 0, message, request_id, data: {task_id, task_status, ...}}` shape.
 * Channel type 50 (new-api's number), key `AccessKey|SecretKey`: the upstream gets an HS256 JWT
 * signed with the secret key (data/upstream-http.ts). Priced per second of video:
 * ModelPrice[model_name] x duration x QuotaPerUnit x group ratio, reserved at submit, settled on
 * `succeed`, refunded on `failed` or timeout. Tasks are async tasks (platform "kling", action
 * "VIDEO"); `data` keeps the finished videos as `[{id, video_url, duration}]`.
 */
import { randomUUID } from 'node:crypto';
import type { AsyncTaskDoc } from '../data/async-task-repository.ts';
import { authorize, priceCall, taskChannel } from './authorize.ts';
import { type Charge, giveBack, heldTaskFields, logCharge, reserve } from './charge.ts';
import { MjError } from './mj-error.ts';
import { perTaskPlatform, str, TASK_PROGRESS } from './per-task-platform.ts';
import type { ChannelRef } from './ports.ts';
import type { SunoDeps } from './suno.ts';
import type { TaskPlatform } from './task-platform.ts';

export const KLING_CHANNEL_TYPE = 50;
export const KLING_KINDS = ['text2video', 'image2video'] as const;
export type KlingKind = (typeof KLING_KINDS)[number];

/** Kling's error codes for the refusals of this service (Kling's own table: 1000 auth, 1100 account, 1200 request, 5000 server). */
const CODE_OF_STATUS: Record<number, number> = {
  400: 1201,
  401: 1000,
  403: 1102,
  404: 1201,
  429: 1302,
  502: 5000,
  503: 5001,
};

/** A refusal in Kling's shape: `{code, message, request_id}`. */
export class KlingError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code = CODE_OF_STATUS[status] ?? 5000,
  ) {
    super(message);
  }
  body() {
    return { code: this.code, message: this.message, request_id: randomUUID() };
  }
}

const asKling = (err: unknown) => (err instanceof MjError ? new KlingError(err.status, err.description) : err);

const STATUS: Record<string, string> = {
  submitted: 'SUBMITTED',
  processing: 'IN_PROGRESS',
  succeed: 'SUCCESS',
  failed: 'FAILURE',
};
const KLING_STATUS: Record<string, string> = Object.fromEntries(Object.entries(STATUS).map(([k, v]) => [v, k]));

/** The stored fields of Kling's task `data`. */
export function klingProgress(up: Record<string, unknown>): Partial<AsyncTaskDoc> {
  const status = STATUS[str(up.task_status)] ?? 'UNKNOWN';
  const p: Partial<AsyncTaskDoc> = { status, progress: TASK_PROGRESS[status] ?? '0%' };
  const videos = (up.task_result as { videos?: unknown[] } | undefined)?.videos;
  if (Array.isArray(videos) && videos.length > 0) {
    p.data = JSON.stringify(
      videos.map((v) => {
        const o = (v ?? {}) as Record<string, unknown>;
        return { id: str(o.id), video_url: str(o.url), duration: str(o.duration) };
      }),
    );
  }
  if (status === 'FAILURE') p.fail_reason = str(up.task_status_msg) || '生成失败';
  return p;
}

function kindOf(t: AsyncTaskDoc): KlingKind {
  try {
    const k = (JSON.parse(t.properties) as { kind?: string }).kind;
    return k === 'image2video' ? 'image2video' : 'text2video';
  } catch {
    return 'text2video';
  }
}

/** A stored task in Kling's query answer shape. */
function view(t: AsyncTaskDoc): Record<string, unknown> {
  let videos: { id: string; video_url: string; duration: string }[] = [];
  try {
    const v = JSON.parse(t.data || '[]') as unknown;
    if (Array.isArray(v)) videos = v as typeof videos;
  } catch {
    videos = [];
  }
  return {
    task_id: t.task_id,
    task_status: KLING_STATUS[t.status] ?? 'processing',
    task_status_msg: t.fail_reason,
    created_at: t.submit_time * 1000,
    updated_at: (t.finish_time || t.submit_time) * 1000,
    ...(videos.length > 0
      ? { task_result: { videos: videos.map((v) => ({ id: v.id, url: v.video_url, duration: v.duration })) } }
      : {}),
  };
}

const ok = (data: unknown) => ({ status: 200, body: { code: 0, message: 'SUCCEED', request_id: randomUUID(), data } });

export async function submitKling(
  d: SunoDeps,
  input: {
    kind: KlingKind;
    body: Record<string, unknown>;
    key: string | undefined;
    ip: string;
    /** A channel the caller already chose (the unified video API), and the group it chose it in. */
    channel?: ChannelRef;
    group?: string;
  },
): Promise<{ status: number; body: unknown }> {
  try {
    const caller = await authorize(d.peers, input.key, input.ip);
    const model = str(input.body.model_name || input.body.model) || 'kling-v1';
    const prompt = str(input.body.prompt);
    if (input.kind === 'text2video' && !prompt.trim()) throw new KlingError(400, 'prompt 不能为空');
    if (input.kind === 'image2video' && !str(input.body.image).trim()) throw new KlingError(400, 'image 不能为空');
    if (prompt.length > 2500) throw new KlingError(400, 'prompt 不能超过 2500 个字符');
    const duration = str(input.body.duration ?? '5');
    if (duration !== '5' && duration !== '10') throw new KlingError(400, 'duration 只能是 5 或 10');
    const { auth, channel } = await taskChannel(d, caller, model, input);
    if (!channel || channel.type !== KLING_CHANNEL_TYPE) {
      throw new KlingError(503, `当前分组 ${auth.group} 下对于模型 ${model} 无可用渠道`);
    }
    const unit = priceCall(auth, model, await d.peers.ratios(), d.options.number('QuotaPerUnit'));
    const seconds = Number(duration);
    const charge: Charge = { requestId: `kling:${randomUUID()}`, model, ...unit, quota: unit.quota * seconds };
    await reserve(d.peers, auth, charge, (m) => new KlingError(403, m));
    // callback_url stays here: the poller follows the task (the upstream must not call clients).
    const { callback_url: _hook, model: _model, ...rest } = input.body;
    let answer: { status: number; body: unknown };
    try {
      answer = await d.upstream.post(channel, `/v1/videos/${input.kind}`, { ...rest, model_name: model, duration });
    } catch (err) {
      await giveBack(d.peers, charge, d.onError);
      d.onError(err, 'kling submit failed');
      throw new KlingError(502, '上游服务请求失败');
    }
    const up = (answer.body ?? {}) as { code?: unknown; message?: unknown; data?: Record<string, unknown> };
    const id = str(up.data?.task_id);
    if (answer.status !== 200 || up.code !== 0 || !id) {
      await giveBack(d.peers, charge, d.onError);
      // Kling's refusal as it came (its code and message); a refused channel key is the
      // gateway's problem, not the client's (502, not 401).
      const status = answer.status === 200 || answer.status === 401 || answer.status === 403 ? 502 : answer.status;
      return { status, body: answer.body ?? new KlingError(502, '上游无应答').body() };
    }
    const now = Date.now();
    const first = klingProgress(up.data ?? {});
    const task = await d.repo.insert({
      ...heldTaskFields(auth, channel.id, charge, now),
      status: first.status ?? 'SUBMITTED',
      progress: first.progress ?? '10%',
      data: first.data ?? '',
      platform: 'kling',
      action: 'VIDEO',
      task_id: id,
      properties: JSON.stringify({ kind: input.kind, model, duration, mode: str(rest.mode), prompt }),
    });
    await logCharge(
      d.usage,
      auth,
      charge,
      {
        channelId: channel.id,
        content: `可灵视频 ${model} ${seconds} 秒，任务 ${id}`,
        other: { task_id: id, seconds, kind: input.kind },
        ip: input.ip,
      },
      d.onError,
    );
    return ok(view(task));
  } catch (err) {
    throw asKling(err);
  }
}

export async function queryKling(
  d: SunoDeps,
  input: { kind: KlingKind; id: string; key: string | undefined; ip: string },
): Promise<{ status: number; body: unknown }> {
  try {
    const auth = await authorize(d.peers, input.key, input.ip);
    const [t] = await d.repo.byTaskIds([input.id], auth.caller.user.id);
    if (!t || t.platform !== 'kling' || kindOf(t) !== input.kind) throw new KlingError(404, '任务不存在');
    return ok(view(t));
  } catch (err) {
    throw asKling(err);
  }
}

/** Kling as a polled platform: one GET per task (Kling's list endpoint pages, it does not take ids). */
export function klingPlatform(deps: Pick<SunoDeps, 'repo' | 'upstream'>): TaskPlatform<AsyncTaskDoc> {
  return perTaskPlatform(deps, {
    name: 'kling',
    label: '可灵视频',
    path: (t) => `/v1/videos/${kindOf(t)}/${encodeURIComponent(t.task_id)}`,
    read: (raw) => {
      const body = raw as { code?: unknown; data?: Record<string, unknown> } | undefined;
      return body?.code === 0 && body.data ? klingProgress(body.data) : undefined;
    },
  });
}
