/**
 * Doubao video (豆包视频, channel type 54, new-api's DoubaoVideo): Seedance models through
 * VolcEngine Ark's content generation tasks, reached from new-api's unified video API
 * (video-generations.ts). Submit `POST /api/v3/contents/generations/tasks` with `{model, content:
 * [{type: text, text}, {type: image_url, image_url: {url}}...], duration, ratio, resolution, seed}`
 * and the bearer key, answered `{id}`; follow `GET /api/v3/contents/generations/tasks/{id}`,
 * answered `{id, model, status: queued|running|succeeded|failed|cancelled|expired, content:
 * {video_url}, duration, error: {code, message}}`; Ark's refusals are HTTP errors with `{error:
 * {code, message}}`. Priced per second of video like Kling and Jimeng: ModelPrice[model] x
 * duration x QuotaPerUnit x group ratio, reserved at submit, settled on `succeeded`, refunded on
 * failure, cancellation or timeout. Tasks are async tasks (platform "doubao", action "VIDEO");
 * `data` keeps the video as `[{id, video_url, duration}]`.
 */
import { randomUUID } from 'node:crypto';
import type { AsyncTaskDoc } from '../data/async-task-repository.ts';
import { authorize, inGroup, priceCall } from './authorize.ts';
import { type Charge, giveBack, heldTaskFields, logCharge, reserve } from './charge.ts';
import { perTaskPlatform, pricedSeconds, str, TASK_PROGRESS } from './per-task-platform.ts';
import type { ChannelRef, UpstreamAnswer } from './ports.ts';
import type { SunoDeps } from './suno.ts';
import type { TaskPlatform } from './task-platform.ts';
import { VideoError } from './video.ts';

export const DOUBAO_VIDEO_CHANNEL_TYPE = 54;
const TASKS = '/api/v3/contents/generations/tasks';

const STATUS: Record<string, string> = {
  queued: 'SUBMITTED',
  running: 'IN_PROGRESS',
  succeeded: 'SUCCESS',
  failed: 'FAILURE',
  cancelled: 'FAILURE',
  expired: 'FAILURE',
};

/** The stored fields of an Ark task. */
export function doubaoProgress(up: Record<string, unknown>, seconds: number): Partial<AsyncTaskDoc> {
  const status = STATUS[str(up.status)] ?? 'IN_PROGRESS';
  const p: Partial<AsyncTaskDoc> = { status, progress: TASK_PROGRESS[status] ?? '0%' };
  const url = str((up.content as { video_url?: unknown } | undefined)?.video_url);
  if (url) p.data = JSON.stringify([{ id: str(up.id), video_url: url, duration: str(up.duration ?? seconds) }]);
  if (status === 'FAILURE') {
    const err = (up.error ?? {}) as { message?: unknown };
    p.fail_reason =
      str(err.message) ||
      (up.status === 'cancelled' ? '任务已取消' : up.status === 'expired' ? '任务超时' : '生成失败');
  }
  return p;
}

/** The images of the unified API's `image` (one URL or data URL) as Ark content items. */
function imageItems(image: string): Record<string, unknown>[] {
  return image ? [{ type: 'image_url', image_url: { url: image }, role: 'first_frame' }] : [];
}

/**
 * One Seedance task on a chosen Doubao video channel; `body` is the unified request's fields:
 * model, prompt, image, duration (seconds, 2-12, default 5), ratio, seed and the metadata's own
 * Ark fields (resolution, camera_fixed, watermark...). Answers the upstream's `{id}` or its refusal.
 */
export async function submitDoubaoVideo(
  d: SunoDeps,
  input: {
    model: string;
    prompt: string;
    image: string;
    duration: number | undefined;
    ratio: string | undefined;
    seed: number | undefined;
    meta: Record<string, unknown>;
    key: string | undefined;
    ip: string;
    channel: ChannelRef;
    /** The group the channel was chosen in (an `auto` token's). */
    group: string;
  },
): Promise<{ status: number; body: unknown }> {
  const auth = inGroup(await authorize(d.peers, input.key, input.ip), input.group);
  const { model, prompt, image, channel } = input;
  if (!prompt.trim() && !image) throw new VideoError(400, 'invalid_prompt', 'prompt 和 image 不能都为空');
  const seconds = input.duration ?? 5;
  if (seconds < 2 || seconds > 12) throw new VideoError(400, 'invalid_duration', 'duration 只能是 2 到 12 秒');
  if (channel.type !== DOUBAO_VIDEO_CHANNEL_TYPE) {
    throw new VideoError(503, 'no_channel', `当前分组 ${auth.group} 下对于模型 ${model} 无可用渠道`);
  }
  const unit = priceCall(auth, model, await d.peers.ratios(), d.options.number('QuotaPerUnit'));
  const charge: Charge = { requestId: `doubao:${randomUUID()}`, model, ...unit, quota: unit.quota * seconds };
  await reserve(d.peers, auth, charge, (m) => new VideoError(403, 'insufficient_quota', m));
  // callback_url stays here: the poller follows the task (the upstream must not call clients).
  const { callback_url: _hook, content: _content, model: _model, ...meta } = input.meta;
  const body: Record<string, unknown> = {
    ...meta,
    model,
    content: [...(prompt.trim() ? [{ type: 'text', text: prompt }] : []), ...imageItems(image)],
    duration: seconds,
    ...(input.ratio ? { ratio: input.ratio } : {}),
    ...(input.seed !== undefined ? { seed: input.seed } : {}),
  };
  let answer: UpstreamAnswer;
  try {
    answer = await d.upstream.post(channel, TASKS, body);
  } catch (err) {
    await giveBack(d.peers, charge, d.onError);
    d.onError(err, 'doubao video submit failed');
    throw new VideoError(502, 'upstream_error', '上游服务请求失败');
  }
  const id = str((answer.body as { id?: unknown } | undefined)?.id);
  if (answer.status !== 200 || !id) {
    await giveBack(d.peers, charge, d.onError);
    // A refused channel key is the gateway's problem, not the client's (502, not 401).
    const status = answer.status === 200 || answer.status === 401 || answer.status === 403 ? 502 : answer.status;
    return { status, body: answer.body ?? new VideoError(502, 'upstream_error', '上游无应答').body() };
  }
  const now = Date.now();
  await d.repo.insert({
    ...heldTaskFields(auth, channel.id, charge, now),
    status: 'SUBMITTED',
    progress: '10%',
    data: '',
    platform: 'doubao',
    action: 'VIDEO',
    task_id: id,
    properties: JSON.stringify({ model, seconds, prompt, ...(input.ratio ? { ratio: input.ratio } : {}) }),
  });
  await logCharge(
    d.usage,
    auth,
    charge,
    {
      channelId: channel.id,
      content: `豆包视频 ${model} ${seconds} 秒，任务 ${id}`,
      other: { task_id: id, seconds },
      ip: input.ip,
    },
    d.onError,
  );
  return { status: 200, body: { id } };
}

/** Doubao video as a polled platform: one GET per task (Ark's list pages, it does not take ids). */
export function doubaoVideoPlatform(deps: Pick<SunoDeps, 'repo' | 'upstream'>): TaskPlatform<AsyncTaskDoc> {
  return perTaskPlatform(deps, {
    name: 'doubao',
    label: '豆包视频',
    path: (t) => `${TASKS}/${encodeURIComponent(t.task_id)}`,
    read: (raw, t) => {
      const body = raw as Record<string, unknown> | undefined;
      return body?.id ? doubaoProgress(body, pricedSeconds(t)) : undefined;
    },
  });
}
