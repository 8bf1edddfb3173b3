/**
 * Video generation in the OpenAI videos API (`POST /v1/videos`, `GET /v1/videos/{id}`,
 * `GET /v1/videos/{id}/content`; create as JSON or, as OpenAI's SDKs send it, multipart with an
 * optional `input_reference` image passed on as multipart) on OpenAI channels (type 1) and Sora channels (55, new-api's number). Priced per second:
 * ModelPrice[model] x seconds x QuotaPerUnit x group ratio, reserved at submit, settled on
 * completion, refunded on failure or timeout, like the other task platforms. Tasks are stored as
 * async tasks (platform "sora", action "VIDEO").
 */
import { randomUUID } from 'node:crypto';
import type { AsyncTaskDoc } from '../data/async-task-repository.ts';
import { type Authorized, authorize, inGroup, priceCall, taskChannel } from './authorize.ts';
import { type Charge, giveBack, heldTaskFields, logCharge, reserve } from './charge.ts';
import { MjError } from './mj-error.ts';
import type { ChannelRef, UpstreamAnswer } from './ports.ts';
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

/** The reference image types OpenAI takes. */
const REFERENCE_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp']);

/** The create request as multipart: text fields as they came, the reference file as input_reference. */
function formOf(fields: Record<string, unknown>, reference: File): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') form.append(k, String(v));
  }
  form.append('input_reference', reference, reference.name || 'reference');
  return form;
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

/**
 * Reserves the price of `seconds` of `model`, makes the upstream call and, when the upstream
 * accepts, stores the task and logs the charge (else gives the reservation back).
 */
async function startVideo(
  d: SunoDeps,
  v: {
    auth: Authorized;
    channel: ChannelRef;
    model: string;
    seconds: number;
    size: unknown;
    ip: string;
    call(): Promise<UpstreamAnswer>;
    content(id: string): string;
    other?: Record<string, unknown>;
  },
): Promise<{ status: number; body: unknown }> {
  const unit = priceCall(v.auth, v.model, await d.peers.ratios(), d.options.number('QuotaPerUnit'));
  const charge: Charge = { requestId: `video:${randomUUID()}`, model: v.model, ...unit, quota: unit.quota * v.seconds };
  await reserve(d.peers, v.auth, charge, (m) => new VideoError(403, 'insufficient_quota', m));
  let answer: UpstreamAnswer;
  try {
    answer = await v.call();
  } catch (err) {
    await giveBack(d.peers, charge, d.onError);
    d.onError(err, 'video submit failed');
    throw new VideoError(502, 'upstream_error', '上游服务请求失败');
  }
  const up = (answer.body ?? {}) as Record<string, unknown>;
  const id = str(up.id);
  if (answer.status !== 200 || !id) {
    await giveBack(d.peers, charge, d.onError);
    // The upstream's refusal as it came; a refused channel key is the gateway's problem, not the
    // client's (502, not 401).
    const status = answer.status === 200 || answer.status === 401 || answer.status === 403 ? 502 : answer.status;
    return { status, body: answer.body ?? new VideoError(502, 'upstream_error', '上游无应答').body() };
  }
  const now = Date.now();
  const first = videoProgress(up);
  await d.repo.insert({
    ...heldTaskFields(v.auth, v.channel.id, charge, now),
    status: first.status ?? 'QUEUED',
    progress: first.progress ?? '0%',
    data: first.data ?? '',
    platform: 'sora',
    action: 'VIDEO',
    task_id: id,
    properties: JSON.stringify({ model: v.model, seconds: v.seconds, size: v.size ?? '' }),
  });
  await logCharge(
    d.usage,
    v.auth,
    charge,
    {
      channelId: v.channel.id,
      content: v.content(id),
      other: { task_id: id, seconds: v.seconds, ...v.other },
      ip: v.ip,
    },
    d.onError,
  );
  return { status: 200, body: up };
}

export async function createVideo(
  d: SunoDeps,
  input: {
    body: Record<string, unknown>;
    /** The multipart `input_reference` (an image the video starts from). */
    reference?: File;
    key: string | undefined;
    ip: string;
    /** A channel the caller already chose (the unified video API), and the group it chose it in. */
    channel?: ChannelRef;
    group?: string;
  },
): Promise<{ status: number; body: unknown }> {
  try {
    const caller = await authorize(d.peers, input.key, input.ip);
    const model = str(input.body.model) || 'sora-2';
    if (input.reference && !REFERENCE_TYPES.has(input.reference.type)) {
      throw new VideoError(400, 'invalid_input_reference', 'input_reference 必须是 JPEG、PNG 或 WebP 图片');
    }
    if (!str(input.body.prompt).trim()) throw new VideoError(400, 'invalid_prompt', 'prompt 不能为空');
    const seconds = Number(input.body.seconds ?? 4);
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > 60) {
      throw new VideoError(400, 'invalid_seconds', 'seconds 必须是 1 到 60 之间的整数');
    }
    const { auth, channel } = await taskChannel(d, caller, model, input);
    if (!channel || !VIDEO_CHANNEL_TYPES.has(channel.type)) {
      throw new VideoError(503, 'no_channel', `当前分组 ${auth.group} 下对于模型 ${model} 无可用渠道`);
    }
    const fields = { ...input.body, model, seconds: String(seconds) };
    return await startVideo(d, {
      auth,
      channel,
      model,
      seconds,
      size: input.body.size,
      ip: input.ip,
      call: () =>
        input.reference
          ? d.upstream.postForm(channel, '/v1/videos', formOf(fields, input.reference))
          : d.upstream.post(channel, '/v1/videos', fields),
      content: (id) => `视频 ${model} ${seconds} 秒，任务 ${id}`,
    });
  } catch (err) {
    throw asVideo(err);
  }
}

/** The caller's own video (not deleted), with the caller's authorization. */
async function ownVideo(
  d: SunoDeps,
  key: string | undefined,
  ip: string,
  id: string,
): Promise<{ auth: Authorized; t: AsyncTaskDoc }> {
  const auth = await authorize(d.peers, key, ip);
  const [t] = await d.repo.byTaskIds([id], auth.caller.user.id);
  if (!t || t.platform !== 'sora' || t.deleted) throw new VideoError(404, 'not_found', '视频不存在');
  return { auth, t };
}

async function ownTask(d: SunoDeps, key: string | undefined, ip: string, id: string): Promise<AsyncTaskDoc> {
  return (await ownVideo(d, key, ip, id)).t;
}

/** A remix of a finished video with a new prompt: the same model, length and size, priced like a new video. */
export async function remixVideo(
  d: SunoDeps,
  input: { id: string; body: Record<string, unknown>; key: string | undefined; ip: string },
): Promise<{ status: number; body: unknown }> {
  try {
    const { auth, t } = await ownVideo(d, input.key, input.ip, input.id);
    const prompt = str(input.body.prompt);
    if (!prompt.trim()) throw new VideoError(400, 'invalid_prompt', 'prompt 不能为空');
    if (t.status !== 'SUCCESS') throw new VideoError(400, 'video_not_ready', '只能改编已生成完成的视频');
    const channel = await d.peers.channel(t.channel_id);
    if (!channel) throw new VideoError(503, 'no_channel', '原任务所在的渠道已不可用');
    const props = (() => {
      try {
        return JSON.parse(t.properties) as { model?: string; seconds?: number; size?: string };
      } catch {
        return {};
      }
    })();
    const model = props.model || t.model;
    const seconds = Number(props.seconds) || 4;
    return await startVideo(d, {
      // The remix runs on the video's channel, in the group the video was made in.
      auth: inGroup(auth, t.group),
      channel,
      model,
      seconds,
      size: props.size,
      ip: input.ip,
      call: () => d.upstream.post(channel, `/v1/videos/${encodeURIComponent(t.task_id)}/remix`, { prompt }),
      content: (id) => `视频改编 ${model} ${seconds} 秒（原视频 ${t.task_id}），任务 ${id}`,
      other: { remixed_from: t.task_id },
    });
  } catch (err) {
    throw asVideo(err);
  }
}

/** The caller's videos, newest first unless `order=asc`, `limit` (1-100, 20) after the video `after`. */
export async function listVideos(
  d: SunoDeps,
  input: { key: string | undefined; ip: string; limit: string | null; after: string | null; order: string | null },
): Promise<{ status: number; body: unknown }> {
  try {
    const auth = await authorize(d.peers, input.key, input.ip);
    const limit = input.limit === null || input.limit === '' ? 20 : Number(input.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      throw new VideoError(400, 'invalid_limit', 'limit 必须是 1 到 100 之间的整数');
    }
    const order = input.order || 'desc';
    if (order !== 'asc' && order !== 'desc') throw new VideoError(400, 'invalid_order', 'order 只能是 asc 或 desc');
    let afterId: number | undefined;
    if (input.after) {
      const [a] = await d.repo.byTaskIds([input.after], auth.caller.user.id);
      if (!a || a.platform !== 'sora')
        throw new VideoError(400, 'invalid_after', `after 指定的视频 ${input.after} 不存在`);
      afterId = a._id;
    }
    const page = await d.repo.cursorPage({
      userId: auth.caller.user.id,
      platform: 'sora',
      asc: order === 'asc',
      limit,
      ...(afterId !== undefined ? { afterId } : {}),
    });
    const data = page.items.map(view);
    return {
      status: 200,
      body: {
        object: 'list',
        data,
        first_id: page.items[0]?.task_id ?? null,
        last_id: page.items.at(-1)?.task_id ?? null,
        has_more: page.more,
      },
    };
  } catch (err) {
    throw asVideo(err);
  }
}

/** Deletes a finished video upstream (its files) and from the caller's list; its charge stays. */
export async function deleteVideo(
  d: SunoDeps,
  input: { id: string; key: string | undefined; ip: string },
): Promise<{ status: number; body: unknown }> {
  try {
    const { auth, t } = await ownVideo(d, input.key, input.ip, input.id);
    if (t.status !== 'SUCCESS' && t.status !== 'FAILURE') {
      throw new VideoError(400, 'video_not_finished', '视频尚未生成完成，不能删除');
    }
    const channel = await d.peers.channel(t.channel_id);
    if (channel) {
      let answer: UpstreamAnswer;
      try {
        answer = await d.upstream.del(channel, `/v1/videos/${encodeURIComponent(t.task_id)}`);
      } catch (err) {
        d.onError(err, 'video delete failed');
        throw new VideoError(502, 'upstream_error', '上游服务请求失败');
      }
      // Gone upstream already (expired) is deleted too.
      if (answer.status !== 200 && answer.status !== 404) {
        throw new VideoError(502, 'upstream_error', `上游删除失败（HTTP ${answer.status}）`);
      }
    }
    await d.repo.markDeleted(auth.caller.user.id, t.task_id, 'sora');
    return { status: 200, body: { id: t.task_id, object: 'video.deleted', deleted: true } };
  } catch (err) {
    throw asVideo(err);
  }
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
