/**
 * Video generation in the OpenAI videos API (`POST /v1/videos`, `GET /v1/videos/{id}`,
 * `GET /v1/videos/{id}/content`) on OpenAI channels (type 1) and Sora channels (55, new-api's number). Priced per second:
 * ModelPrice[model] x seconds x QuotaPerUnit x group ratio, reserved at submit, settled on
 * completion, refunded on failure or timeout, like the other task platforms. Tasks are stored as
 * async tasks (platform "sora", action "VIDEO").
 */
import { randomUUID } from 'node:crypto';
import type { AsyncTaskDoc } from '../data/async-task-repository.ts';
import { authorize, priceCall } from './authorize.ts';
import { type Charge, giveBack, heldTaskFields, logCharge, reserve } from './charge.ts';
import { MjError } from './mj-error.ts';
import type { ChannelRef } from './ports.ts';
import type { SunoDeps } from './suno.ts';
import { everyLimit, FETCH_CONCURRENCY, type TaskPlatform } from './task-platform.ts';

/** OpenAI (1) and Sora (55, new-api's number; the channels service does not list it yet). */
export const VIDEO_CHANNEL_TYPES = new Set([1, 55]);

/** A refusal in OpenAI's error shape. */
export class VideoError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
  body() {
    return { error: { message: this.message, type: 'invalid_request_error', code: this.code } };
  }
}

const asVideo = (err: unknown) =>
  err instanceof MjError ? new VideoError(err.status, 'invalid_request', err.description) : err;
const str = (v: unknown) => (typeof v === 'string' ? v : v == null ? '' : String(v));
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

const STATUS: Record<string, string> = {
  queued: 'QUEUED',
  in_progress: 'IN_PROGRESS',
  completed: 'SUCCESS',
  failed: 'FAILURE',
};

/** The stored fields of an upstream video object. */
export function videoProgress(up: Record<string, unknown>): Partial<AsyncTaskDoc> {
  const p: Partial<AsyncTaskDoc> = {
    status: STATUS[str(up.status)] ?? 'UNKNOWN',
    progress: `${Math.round(num(up.progress))}%`,
    data: JSON.stringify(up),
  };
  const err = up.error as { message?: string } | undefined;
  if (err?.message) p.fail_reason = err.message;
  if (num(up.completed_at)) p.finish_time = num(up.completed_at);
  return p;
}

/** The video object a client sees: the upstream's last answer, kept current by the poller. */
function view(t: AsyncTaskDoc): Record<string, unknown> {
  try {
    return JSON.parse(t.data) as Record<string, unknown>;
  } catch {
    return { id: t.task_id, object: 'video', status: 'queued', progress: 0, created_at: t.submit_time };
  }
}

export async function createVideo(
  d: SunoDeps,
  input: { body: Record<string, unknown>; key: string | undefined; ip: string },
): Promise<{ status: number; body: unknown }> {
  try {
    const auth = await authorize(d.peers, input.key, input.ip);
    const model = str(input.body.model) || 'sora-2';
    if (!str(input.body.prompt).trim()) throw new VideoError(400, 'invalid_prompt', 'prompt 不能为空');
    const seconds = Number(input.body.seconds ?? 4);
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > 60) {
      throw new VideoError(400, 'invalid_seconds', 'seconds 必须是 1 到 60 之间的整数');
    }
    const channel = await d.peers.selectChannel(auth.group, model);
    if (!channel || !VIDEO_CHANNEL_TYPES.has(channel.type)) {
      throw new VideoError(503, 'no_channel', `当前分组 ${auth.group} 下对于模型 ${model} 无可用渠道`);
    }
    const unit = priceCall(auth, model, await d.peers.ratios(), d.options.number('QuotaPerUnit', 500_000));
    const charge: Charge = { requestId: `video:${randomUUID()}`, model, ...unit, quota: unit.quota * seconds };
    await reserve(d.peers, auth, charge, (m) => new VideoError(403, 'insufficient_quota', m));
    let answer: { status: number; body: unknown };
    try {
      answer = await d.upstream.post(channel, '/v1/videos', { ...input.body, model, seconds: String(seconds) });
    } catch (err) {
      await giveBack(d.peers, charge, d.onError);
      d.onError(err, 'video submit failed');
      throw new VideoError(502, 'upstream_error', '上游服务请求失败');
    }
    const up = (answer.body ?? {}) as Record<string, unknown>;
    const id = str(up.id);
    if (answer.status !== 200 || !id) {
      await giveBack(d.peers, charge, d.onError);
      return { status: answer.status === 200 ? 502 : answer.status, body: answer.body ?? {} };
    }
    const now = Date.now();
    const first = videoProgress(up);
    await d.repo.insert({
      ...heldTaskFields(auth, channel.id, charge, now),
      status: first.status ?? 'QUEUED',
      progress: first.progress ?? '0%',
      data: first.data ?? '',
      platform: 'sora',
      action: 'VIDEO',
      task_id: id,
      properties: JSON.stringify({ model, seconds, size: input.body.size ?? '' }),
    });
    await logCharge(
      d.usage,
      auth,
      charge,
      {
        channelId: channel.id,
        content: `视频 ${model} ${seconds} 秒，任务 ${id}`,
        other: { task_id: id, seconds },
        ip: input.ip,
      },
      d.onError,
    );
    return { status: 200, body: up };
  } catch (err) {
    throw asVideo(err);
  }
}

async function ownTask(d: SunoDeps, key: string | undefined, ip: string, id: string): Promise<AsyncTaskDoc> {
  const auth = await authorize(d.peers, key, ip);
  const [t] = await d.repo.byTaskIds([id], auth.caller.user.id);
  if (!t || t.platform !== 'sora') throw new VideoError(404, 'not_found', '视频不存在');
  return t;
}

export async function retrieveVideo(d: SunoDeps, key: string | undefined, ip: string, id: string) {
  try {
    return { status: 200, body: view(await ownTask(d, key, ip, id)) };
  } catch (err) {
    throw asVideo(err);
  }
}

/** The finished video's bytes from its channel; the caller streams the response on. */
export async function videoContent(
  d: SunoDeps,
  key: string | undefined,
  ip: string,
  id: string,
  variant: string,
): Promise<Response> {
  try {
    const t = await ownTask(d, key, ip, id);
    if (t.status !== 'SUCCESS') throw new VideoError(400, 'video_not_ready', '视频尚未生成完成');
    const channel: ChannelRef | undefined = await d.peers.channel(t.channel_id);
    if (!channel) throw new VideoError(503, 'no_channel', '原任务所在的渠道已不可用');
    const q = variant ? `?variant=${encodeURIComponent(variant)}` : '';
    return await d.upstream.raw(channel, `/v1/videos/${encodeURIComponent(id)}/content${q}`);
  } catch (err) {
    throw asVideo(err);
  }
}

/** Videos as a polled platform: one GET per task (the API has no batch fetch). */
export function videoPlatform(deps: Pick<SunoDeps, 'repo' | 'upstream'>): TaskPlatform<AsyncTaskDoc> {
  return {
    name: 'video',
    ops: deps.repo.forPlatform('sora'),
    upstreamId: (t) => t.task_id,
    async fetch(channel, tasks) {
      const out = new Map<string, Partial<AsyncTaskDoc>>();
      const ok = await everyLimit(tasks, FETCH_CONCURRENCY, async (t) => {
        const r = await deps.upstream.get(channel, `/v1/videos/${encodeURIComponent(t.task_id)}`);
        if (r.status >= 500 || r.status === 401 || r.status === 429) return false;
        if (r.status === 200 && r.body && typeof r.body === 'object') {
          out.set(t.task_id, videoProgress(r.body as Record<string, unknown>));
        }
        return true;
      });
      if (!ok) return undefined;
      return out;
    },
    timedOut: (now) => ({ status: 'FAILURE', fail_reason: '任务超时', finish_time: Math.floor(now / 1000) }),
    finished: (now) => ({ finish_time: Math.floor(now / 1000) }),
    refundText: (t) => `视频任务 ${t.task_id} 失败（${t.fail_reason || '未知原因'}），退还 ${t.quota} 额度`,
    logOther: (t) => ({ task_id: t.task_id, action: t.action }),
  };
}
