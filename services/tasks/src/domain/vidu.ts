/**
 * Vidu (channel type 52, new-api's number) video generation, reached from new-api's unified video
 * API (video-generations.ts). Submit `POST /ent/v2/text2video`, or `/ent/v2/img2video` when an
 * image is given, with `{model, images, prompt, duration, seed, resolution, movement_amplitude,
 * bgm, aspect_ratio}` and `Authorization: Token {key}` (data/upstream-http.ts), answered `{task_id,
 * state: created, ...}`; follow `GET /ent/v2/tasks/{id}/creations`, answered `{id, state:
 * created|queueing|processing|success|failed, err_code, credits, creations: [{id, url,
 * cover_url}]}`; refusals are HTTP errors with `{code, reason, message}`. Priced per second of
 * video like Kling: ModelPrice[model] x duration x QuotaPerUnit x group ratio, reserved at submit,
 * settled on `success`, refunded on `failed` or timeout. Tasks are async tasks (platform "vidu",
 * action "VIDEO"); `data` keeps the video as `[{id, video_url, duration}]`.
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

export const VIDU_CHANNEL_TYPE = 52;

const STATUS: Record<string, string> = {
  created: 'SUBMITTED',
  queueing: 'SUBMITTED',
  processing: 'IN_PROGRESS',
  success: 'SUCCESS',
  failed: 'FAILURE',
};

/** The stored fields of a Vidu task's creations answer. */
export function viduProgress(up: Record<string, unknown>, seconds: number): Partial<AsyncTaskDoc> {
  const status = STATUS[str(up.state)] ?? 'IN_PROGRESS';
  const p: Partial<AsyncTaskDoc> = { status, progress: TASK_PROGRESS[status] ?? '0%' };
  const first = (Array.isArray(up.creations) ? up.creations[0] : undefined) as Record<string, unknown> | undefined;
  if (first && str(first.url)) {
    p.data = JSON.stringify([{ id: str(first.id), video_url: str(first.url), duration: String(seconds) }]);
  }
  if (status === 'FAILURE') p.fail_reason = str(up.err_code) || '生成失败';
  return p;
}

/**
 * One Vidu task on a chosen Vidu channel; the unified request's fields: model, prompt, image,
 * duration (1-16 s, default 5), ratio, seed and the metadata's own Vidu fields (resolution,
 * movement_amplitude, bgm...). Answers the upstream's `{task_id}` or its refusal.
 */
export async function submitVidu(
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
  if (!image && !prompt.trim()) throw new VideoError(400, 'invalid_prompt', 'prompt 不能为空');
  const seconds = input.duration ?? 5;
  if (seconds > 16) throw new VideoError(400, 'invalid_duration', 'duration 不能超过 16 秒');
  if (channel.type !== VIDU_CHANNEL_TYPE) {
    throw new VideoError(503, 'no_channel', `当前分组 ${auth.group} 下对于模型 ${model} 无可用渠道`);
  }
  const unit = priceCall(auth, model, await d.peers.ratios(), d.options.number('QuotaPerUnit'));
  const charge: Charge = { requestId: `vidu:${randomUUID()}`, model, ...unit, quota: unit.quota * seconds };
  await reserve(d.peers, auth, charge, (m) => new VideoError(403, 'insufficient_quota', m));
  // callback_url stays here: the poller follows the task (the upstream must not call clients).
  const { callback_url: _hook, model: _model, ...meta } = input.meta;
  const kind = image ? 'img2video' : 'text2video';
  const body: Record<string, unknown> = {
    model,
    ...(image ? { images: [image] } : {}),
    ...(prompt ? { prompt } : {}),
    duration: seconds,
    ...(input.seed !== undefined ? { seed: input.seed } : {}),
    resolution: '1080p',
    movement_amplitude: 'auto',
    bgm: false,
    ...(input.ratio && !image ? { aspect_ratio: input.ratio } : {}),
    ...meta,
  };
  let answer: UpstreamAnswer;
  try {
    answer = await d.upstream.post(channel, `/ent/v2/${kind}`, body);
  } catch (err) {
    await giveBack(d.peers, charge, d.onError);
    d.onError(err, 'vidu submit failed');
    throw new VideoError(502, 'upstream_error', '上游服务请求失败');
  }
  const up = (answer.body ?? {}) as { task_id?: unknown; state?: unknown };
  const id = str(up.task_id);
  if (answer.status !== 200 || !id || up.state === 'failed') {
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
    platform: 'vidu',
    action: 'VIDEO',
    task_id: id,
    properties: JSON.stringify({ model, seconds, prompt, kind }),
  });
  await logCharge(
    d.usage,
    auth,
    charge,
    {
      channelId: channel.id,
      content: `Vidu 视频 ${model} ${seconds} 秒，任务 ${id}`,
      other: { task_id: id, seconds, kind },
      ip: input.ip,
    },
    d.onError,
  );
  return { status: 200, body: { task_id: id } };
}

/** Vidu as a polled platform: one GET of a task's creations per task. */
export function viduPlatform(deps: Pick<SunoDeps, 'repo' | 'upstream'>): TaskPlatform<AsyncTaskDoc> {
  return perTaskPlatform(deps, {
    name: 'vidu',
    label: 'Vidu 视频',
    path: (t) => `/ent/v2/tasks/${encodeURIComponent(t.task_id)}/creations`,
    read: (raw, t) => {
      const body = raw as Record<string, unknown> | undefined;
      return body?.state ? viduProgress(body, pricedSeconds(t)) : undefined;
    },
  });
}
