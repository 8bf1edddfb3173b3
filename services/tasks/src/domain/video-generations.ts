/**
 * new-api's unified video API, for clients written against it: `POST /v1/video/generations` with
 * `{model, prompt, image, duration, width, height, fps, seed, metadata}` answers `{task_id, status}`;
 * `GET /v1/video/generations/{task_id}` answers `{task_id, status, url, format, metadata, error}`
 * with status queued | in_progress | completed | failed. Errors in OpenAI's shape.
 *
 * The model's channel decides the platform: Kling (50), Jimeng (51), Vidu (52), Doubao video (54), OpenAI or Sora (1,
 * 55). The
 * request becomes that platform's own submit on that channel, so pricing, the hold, the charge log,
 * the poller, refunds and the /task page are the platform's; a task made here can also be read
 * through the platform's own query.
 */
import type { AsyncTaskDoc } from '../data/async-task-repository.ts';
import { authorize, taskChannel } from './authorize.ts';
import { DOUBAO_VIDEO_CHANNEL_TYPE, submitDoubaoVideo } from './doubao-video.ts';
import { type JimengDeps, JimengError, submitJimeng } from './jimeng.ts';
import { KLING_CHANNEL_TYPE, KlingError, submitKling } from './kling.ts';
import { MjError } from './mj-error.ts';
import { createVideo, VIDEO_CHANNEL_TYPES, VideoError } from './video.ts';
import { submitVidu, VIDU_CHANNEL_TYPE } from './vidu.ts';

const JIMENG_CHANNEL_TYPE = 51;
const PLATFORMS = new Set(['kling', 'jimeng', 'sora', 'doubao', 'vidu']);

const str = (v: unknown) => (typeof v === 'string' ? v : v == null ? '' : String(v));
const record = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** A positive integer field, or undefined when absent; anything else is refused with its name. */
function positiveInt(body: Record<string, unknown>, name: string): number | undefined {
  const v = body[name];
  if (v === undefined || v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new VideoError(400, `invalid_${name}`, `${name} 必须是正整数`);
  return n;
}

/** width x height as the platforms' aspect ratio ("1280x720" -> "16:9"). */
function aspectOf(width: number | undefined, height: number | undefined): string | undefined {
  if (!width || !height) return undefined;
  const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);
  const g = gcd(width, height);
  return `${width / g}:${height / g}`;
}

/** An image given as a URL goes by reference; anything else is base64 (a data: prefix dropped). */
function jimengImages(image: string): Record<string, string[]> {
  if (!image) return {};
  if (/^https?:\/\//i.test(image)) return { image_urls: [image] };
  return { binary_data_base64: [image.replace(/^data:[^,]*,/, '')] };
}

/** A platform's refusal (thrown) in OpenAI's shape. */
function asVideo(err: unknown): unknown {
  if (err instanceof VideoError) return err;
  if (err instanceof KlingError) return new VideoError(err.status, 'upstream_error', err.message);
  if (err instanceof JimengError) return new VideoError(err.status, 'upstream_error', err.message);
  if (err instanceof MjError) return new VideoError(err.status, 'invalid_request', err.description);
  return err;
}

/** A platform's answered refusal (its own body and status) in OpenAI's shape. */
function refusal(answer: { status: number; body: unknown }): { status: number; body: unknown } {
  const b = record(answer.body);
  const message =
    str(record(b.error).message) ||
    str(record(record(b.ResponseMetadata).Error).Message) ||
    str(b.message) ||
    '上游服务请求失败';
  return { status: answer.status, body: new VideoError(answer.status, 'upstream_error', message).body() };
}

export async function submitGeneration(
  d: JimengDeps,
  input: { body: Record<string, unknown>; key: string | undefined; ip: string },
): Promise<{ status: number; body: unknown }> {
  try {
    const caller = await authorize(d.peers, input.key, input.ip);
    const body = input.body;
    const model = str(body.model).trim();
    if (!model) throw new VideoError(400, 'invalid_model', 'model 不能为空');
    const prompt = str(body.prompt);
    const image = str(body.image).trim();
    const duration = positiveInt(body, 'duration');
    const width = positiveInt(body, 'width');
    const height = positiveInt(body, 'height');
    const seed = body.seed === undefined || body.seed === null ? undefined : Number(body.seed);
    if (seed !== undefined && !Number.isInteger(seed)) throw new VideoError(400, 'invalid_seed', 'seed 必须是整数');
    // metadata carries each platform's own fields (negative_prompt, cfg_scale, mode...).
    const meta = record(body.metadata);
    const aspect = str(meta.aspect_ratio) || aspectOf(width, height);
    const { auth, channel } = await taskChannel(d, caller, model);
    if (!channel) throw new VideoError(503, 'no_channel', `当前分组 ${auth.group} 下对于模型 ${model} 无可用渠道`);
    // The platform's submit runs on this channel, in the group it was found in (an `auto` token's).
    const common = { key: input.key, ip: input.ip, channel, group: auth.group };

    let answer: { status: number; body: unknown };
    let taskId: (b: Record<string, unknown>) => string;
    if (channel.type === KLING_CHANNEL_TYPE) {
      answer = await submitKling(d, {
        ...common,
        kind: image ? 'image2video' : 'text2video',
        body: {
          ...meta,
          model_name: model,
          prompt,
          ...(image ? { image } : {}),
          duration: String(duration ?? 5),
          ...(aspect ? { aspect_ratio: aspect } : {}),
        },
      });
      taskId = (b) => str(record(b.data).task_id);
    } else if (channel.type === JIMENG_CHANNEL_TYPE) {
      const frames = duration === undefined ? undefined : duration === 5 ? 121 : duration === 10 ? 241 : 0;
      if (frames === 0) throw new VideoError(400, 'invalid_duration', 'duration 只能是 5 或 10');
      answer = await submitJimeng(d, {
        ...common,
        body: {
          ...meta,
          req_key: model,
          prompt,
          ...jimengImages(image),
          ...(frames ? { frames } : {}),
          ...(seed !== undefined ? { seed } : {}),
          ...(aspect ? { aspect_ratio: aspect } : {}),
        },
      });
      taskId = (b) => str(record(b.data).task_id);
    } else if (channel.type === VIDU_CHANNEL_TYPE) {
      answer = await submitVidu(d, { ...common, model, prompt, image, duration, ratio: aspect, seed, meta });
      taskId = (b) => str(b.task_id);
    } else if (channel.type === DOUBAO_VIDEO_CHANNEL_TYPE) {
      answer = await submitDoubaoVideo(d, {
        ...common,
        model,
        prompt,
        image,
        duration,
        ratio: aspect,
        seed,
        meta,
      });
      taskId = (b) => str(b.id);
    } else if (VIDEO_CHANNEL_TYPES.has(channel.type)) {
      if (image) {
        throw new VideoError(400, 'unsupported_image', '此模型的参考图请以 /v1/videos 的 input_reference 提交');
      }
      answer = await createVideo(d, {
        ...common,
        body: {
          ...meta,
          model,
          prompt,
          ...(duration !== undefined ? { seconds: duration } : {}),
          ...(width && height ? { size: `${width}x${height}` } : {}),
        },
      });
      taskId = (b) => str(b.id);
    } else {
      throw new VideoError(400, 'unsupported_model', `模型 ${model} 不是视频模型`);
    }
    if (answer.status !== 200) return refusal(answer);
    return { status: 200, body: { task_id: taskId(record(answer.body)), status: 'queued' } };
  } catch (err) {
    throw asVideo(err);
  }
}

const STATUS: Record<string, string> = {
  NOT_START: 'queued',
  SUBMITTED: 'queued',
  QUEUED: 'queued',
  IN_PROGRESS: 'in_progress',
  SUCCESS: 'completed',
  FAILURE: 'failed',
};

function parsed(text: string): unknown {
  try {
    return JSON.parse(text || 'null');
  } catch {
    return null;
  }
}

/** A stored task of any video platform in the unified answer. */
export function generationView(t: AsyncTaskDoc, serverAddress: string): Record<string, unknown> {
  const props = record(parsed(t.properties));
  const status = STATUS[t.status] ?? 'in_progress';
  let url = '';
  let seconds = Number(props.seconds ?? props.duration ?? 0) || undefined;
  const metadata: Record<string, unknown> = {};
  if (t.platform === 'sora') {
    // OpenAI keeps the file behind its content endpoint: this gateway's, with the caller's key.
    if (status === 'completed')
      url = `${serverAddress.replace(/\/+$/, '')}/v1/videos/${encodeURIComponent(t.task_id)}/content`;
    const [w, h] = str(props.size).split('x').map(Number);
    if (w && h) Object.assign(metadata, { width: w, height: h });
  } else {
    const first = record((parsed(t.data) as unknown[] | null)?.[0]);
    url = str(first.video_url);
    seconds = Number(first.duration) || seconds;
  }
  if (seconds) metadata.duration = seconds;
  const code = Number(props.code) || 0;
  return {
    task_id: t.task_id,
    status,
    url,
    format: 'mp4',
    metadata,
    error: status === 'failed' ? { code, message: t.fail_reason || '生成失败' } : null,
  };
}

export async function getGeneration(
  d: JimengDeps,
  input: { id: string; key: string | undefined; ip: string },
): Promise<{ status: number; body: unknown }> {
  try {
    const auth = await authorize(d.peers, input.key, input.ip);
    const [t] = await d.repo.byTaskIds([input.id], auth.caller.user.id);
    if (!t || !PLATFORMS.has(t.platform) || t.deleted) throw new VideoError(404, 'task_not_found', '任务不存在');
    return { status: 200, body: generationView(t, d.options.text('ServerAddress')) };
  } catch (err) {
    throw asVideo(err);
  }
}
