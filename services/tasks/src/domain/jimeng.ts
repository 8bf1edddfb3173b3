/**
 * Jimeng (即梦) video generation in VolcEngine's visual API, as new-api's users call it:
 * `POST /jimeng/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31` with `{req_key, prompt,
 * image_urls | binary_data_base64, seed, aspect_ratio, frames}` and `POST
 * /jimeng/?Action=CVSync2AsyncGetResult&Version=2022-08-31` with `{req_key, task_id}`, answered in
 * Jimeng's `{code: 10000, message, request_id, status, time_elapsed, data}` shape. Channel type 51
 * (new-api's number), key `AccessKey|SecretKey`: the upstream call is signed with VolcEngine's
 * HMAC-SHA256 signature (data/volc-upstream.ts). The model is the req_key. Priced per second of
 * video like Kling: ModelPrice[req_key] x seconds (frames 121 = 5 s, 241 = 10 s) x QuotaPerUnit x
 * group ratio, reserved at submit, settled on `done`, refunded on failure or timeout. Tasks are
 * async tasks (platform "jimeng", action "VIDEO"); `data` keeps the video as `[{id, video_url, duration}]`.
 */
import { randomUUID } from 'node:crypto';
import type { AsyncTaskDoc } from '../data/async-task-repository.ts';
import { authorize, priceCall, taskChannel } from './authorize.ts';
import { type Charge, giveBack, heldTaskFields, logCharge, reserve } from './charge.ts';
import { MjError } from './mj-error.ts';
import type { ChannelRef, UpstreamAnswer } from './ports.ts';
import type { SunoDeps } from './suno.ts';
import { everyLimit, FETCH_CONCURRENCY, type TaskPlatform } from './task-platform.ts';

export const JIMENG_CHANNEL_TYPE = 51;
export const JIMENG_VERSION = '2022-08-31';
export const JIMENG_SUBMIT = 'CVSync2AsyncSubmitTask';
export const JIMENG_RESULT = 'CVSync2AsyncGetResult';
/** Jimeng's success code (in `code` and `status`). */
const OK = 10000;

/** The signed upstream (data/volc-upstream.ts). */
export interface JimengUpstream {
  call(channel: ChannelRef, action: string, body: unknown): Promise<UpstreamAnswer>;
}

export interface JimengDeps extends SunoDeps {
  volc: JimengUpstream;
}

/**
 * VolcEngine's gateway errors (key, permission, unknown action) come as
 * `{ResponseMetadata: {..., Error: {CodeN, Code, Message}}}`; the service's own as
 * `{code, message, data: null}` with its business codes (50215 invalid input, 50500 internal).
 */
const GATEWAY_CODES: Record<number, [number, string]> = {
  401: [100009, 'InvalidAccessKey'],
  403: [100013, 'AccessDenied'],
  404: [100008, 'InvalidActionOrVersion'],
};
const BUSINESS_CODES: Record<number, number> = { 400: 50215, 413: 50215, 429: 50429, 502: 50501, 503: 50500 };

export class JimengError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly action = '',
  ) {
    super(message);
  }
  body(): Record<string, unknown> {
    const requestId = randomUUID().replace(/-/g, '').toUpperCase();
    const gw = GATEWAY_CODES[this.status];
    if (gw) {
      return {
        ResponseMetadata: {
          RequestId: requestId,
          Action: this.action,
          Version: JIMENG_VERSION,
          Service: 'cv',
          Region: 'cn-north-1',
          Error: { CodeN: gw[0], Code: gw[1], Message: this.message },
        },
      };
    }
    const code = BUSINESS_CODES[this.status] ?? 50500;
    return { code, message: this.message, request_id: requestId, status: code, time_elapsed: '0ms', data: null };
  }
}

const asJimeng = (err: unknown, action: string) =>
  err instanceof MjError ? new JimengError(err.status, err.description, action) : err;
const str = (v: unknown) => (typeof v === 'string' ? v : v == null ? '' : String(v));
const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && !!x) : []);

const STATUS: Record<string, string> = {
  processing: 'QUEUED',
  in_queue: 'QUEUED',
  generating: 'IN_PROGRESS',
  done: 'SUCCESS',
};
const PROGRESS: Record<string, string> = { QUEUED: '10%', IN_PROGRESS: '50%', SUCCESS: '100%', FAILURE: '100%' };

interface Props {
  req_key: string;
  kind: 't2v' | 'i2v';
  frames: number;
  seconds: number;
  prompt: string;
  /** The failure's business code (the query answer repeats it). */
  code?: number;
}

function propsOf(t: AsyncTaskDoc): Props {
  try {
    return JSON.parse(t.properties) as Props;
  } catch {
    return { req_key: t.model, kind: 't2v', frames: 121, seconds: 5, prompt: '' };
  }
}

/**
 * The stored fields of a GetResult answer (HTTP status and body); undefined when it says nothing
 * (the upstream is unwell: the poller backs off and asks again).
 */
export function jimengProgress(a: UpstreamAnswer, t: Pick<AsyncTaskDoc, 'task_id'>, seconds: number) {
  const body = (a.body ?? {}) as { code?: unknown; message?: unknown; data?: Record<string, unknown> | null };
  if (a.status >= 500 || a.status === 401 || a.status === 403 || a.status === 429 || typeof body.code !== 'number') {
    return undefined;
  }
  if (body.code !== OK) {
    // A business failure of the task (risk control of the output, invalid input...).
    return {
      status: 'FAILURE',
      progress: '100%',
      fail_reason: str(body.message) || '生成失败',
      code: body.code,
    } satisfies Partial<AsyncTaskDoc> & { code: number };
  }
  const st = str(body.data?.status);
  if (st === 'not_found' || st === 'expired') {
    return {
      status: 'FAILURE',
      progress: '100%',
      fail_reason: st === 'expired' ? '任务已过期' : '上游未找到任务',
    } satisfies Partial<AsyncTaskDoc>;
  }
  const status = STATUS[st] ?? 'UNKNOWN';
  const p: Partial<AsyncTaskDoc> = { status, progress: PROGRESS[status] ?? '0%' };
  const url = str(body.data?.video_url);
  if (status === 'SUCCESS') {
    if (!url) return { status: 'FAILURE', progress: '100%', fail_reason: '上游未返回视频地址' };
    p.data = JSON.stringify([{ id: t.task_id, video_url: url, duration: String(seconds) }]);
  }
  return p;
}

const envelope = (data: unknown, started: number, code = OK, message = 'Success') => ({
  code,
  data,
  message,
  request_id: randomUUID().replace(/-/g, '').toUpperCase(),
  status: code,
  time_elapsed: `${Date.now() - started}ms`,
});

/** A stored task in the GetResult answer shape. */
function view(t: AsyncTaskDoc, started: number): Record<string, unknown> {
  if (t.status === 'FAILURE') {
    const code = propsOf(t).code ?? 50500;
    return envelope(null, started, code, t.fail_reason || 'Internal Error');
  }
  let url = '';
  try {
    const v = JSON.parse(t.data || '[]') as { video_url?: string }[];
    url = str(v[0]?.video_url);
  } catch {
    url = '';
  }
  const status = t.status === 'SUCCESS' ? 'done' : t.status === 'IN_PROGRESS' ? 'generating' : 'in_queue';
  return envelope({ status, video_url: url, resp_data: '' }, started);
}

/** frames -> seconds of video (the API's two lengths; 121 when absent). */
function secondsOf(frames: unknown): { frames: number; seconds: number } {
  if (frames === undefined || frames === null || frames === '') return { frames: 121, seconds: 5 };
  const n = Number(frames);
  if (n === 121) return { frames: 121, seconds: 5 };
  if (n === 241) return { frames: 241, seconds: 10 };
  throw new JimengError(400, 'frames 只能是 121（5 秒）或 241（10 秒）', JIMENG_SUBMIT);
}

export async function submitJimeng(
  d: JimengDeps,
  input: {
    body: Record<string, unknown>;
    key: string | undefined;
    ip: string;
    /** A channel the caller already chose (the unified video API), and the group it chose it in. */
    channel?: ChannelRef;
    group?: string;
  },
): Promise<{ status: number; body: unknown }> {
  const started = Date.now();
  try {
    const caller = await authorize(d.peers, input.key, input.ip);
    const model = str(input.body.req_key).trim();
    if (!model) throw new JimengError(400, 'req_key 不能为空', JIMENG_SUBMIT);
    const prompt = str(input.body.prompt);
    const images = [...strings(input.body.image_urls), ...strings(input.body.binary_data_base64)];
    const kind = images.length > 0 ? 'i2v' : 't2v';
    if (model.includes('i2v') && images.length === 0) {
      throw new JimengError(400, '图生视频需要 image_urls 或 binary_data_base64', JIMENG_SUBMIT);
    }
    if (kind === 't2v' && !prompt.trim()) throw new JimengError(400, 'prompt 不能为空', JIMENG_SUBMIT);
    if (prompt.length > 800) throw new JimengError(400, 'prompt 不能超过 800 个字符', JIMENG_SUBMIT);
    const { frames, seconds } = secondsOf(input.body.frames);
    const { auth, channel } = await taskChannel(d, caller, model, input);
    if (!channel || channel.type !== JIMENG_CHANNEL_TYPE) {
      throw new JimengError(503, `当前分组 ${auth.group} 下对于模型 ${model} 无可用渠道`, JIMENG_SUBMIT);
    }
    const unit = priceCall(auth, model, await d.peers.ratios(), d.options.number('QuotaPerUnit'));
    const charge: Charge = { requestId: `jimeng:${randomUUID()}`, model, ...unit, quota: unit.quota * seconds };
    await reserve(d.peers, auth, charge, (m) => new JimengError(403, m, JIMENG_SUBMIT));
    const body: Record<string, unknown> = { ...input.body, req_key: model };
    if (input.body.frames !== undefined) body.frames = frames;
    let answer: UpstreamAnswer;
    try {
      answer = await d.volc.call(channel, JIMENG_SUBMIT, body);
    } catch (err) {
      await giveBack(d.peers, charge, d.onError);
      d.onError(err, 'jimeng submit failed');
      throw new JimengError(502, '上游服务请求失败', JIMENG_SUBMIT);
    }
    const up = (answer.body ?? {}) as { code?: unknown; data?: { task_id?: unknown } | null };
    const id = str(up.data?.task_id);
    if (answer.status !== 200 || up.code !== OK || !id) {
      await giveBack(d.peers, charge, d.onError);
      // Jimeng's refusal as it came (its code and message); a refused channel key is the
      // gateway's problem, not the client's (502, not 401).
      const status = answer.status === 200 || answer.status === 401 || answer.status === 403 ? 502 : answer.status;
      return { status, body: answer.body ?? new JimengError(502, '上游无应答', JIMENG_SUBMIT).body() };
    }
    const now = Date.now();
    const props: Props = { req_key: model, kind, frames, seconds, prompt };
    await d.repo.insert({
      ...heldTaskFields(auth, channel.id, charge, now),
      status: 'SUBMITTED',
      progress: '0%',
      data: '',
      platform: 'jimeng',
      action: 'VIDEO',
      task_id: id,
      properties: JSON.stringify(props),
    });
    await logCharge(
      d.usage,
      auth,
      charge,
      {
        channelId: channel.id,
        content: `即梦视频 ${model} ${seconds} 秒，任务 ${id}`,
        other: { task_id: id, seconds, kind },
        ip: input.ip,
      },
      d.onError,
    );
    return { status: 200, body: envelope({ task_id: id }, started) };
  } catch (err) {
    throw asJimeng(err, JIMENG_SUBMIT);
  }
}

export async function resultJimeng(
  d: JimengDeps,
  input: { body: Record<string, unknown>; key: string | undefined; ip: string },
): Promise<{ status: number; body: unknown }> {
  const started = Date.now();
  try {
    const auth = await authorize(d.peers, input.key, input.ip);
    const id = str(input.body.task_id).trim();
    if (!id) throw new JimengError(400, 'task_id 不能为空', JIMENG_RESULT);
    const [t] = await d.repo.byTaskIds([id], auth.caller.user.id);
    const reqKey = str(input.body.req_key).trim();
    // Jimeng answers an unknown task (or one of another req_key) with status not_found.
    if (!t || t.platform !== 'jimeng' || (reqKey && reqKey !== propsOf(t).req_key)) {
      return { status: 200, body: envelope({ status: 'not_found', video_url: '', resp_data: '' }, started) };
    }
    return { status: 200, body: view(t, started) };
  } catch (err) {
    throw asJimeng(err, JIMENG_RESULT);
  }
}

/** Jimeng as a polled platform: one signed GetResult per task (the API takes one id per call). */
export function jimengPlatform(deps: Pick<JimengDeps, 'repo' | 'volc'>): TaskPlatform<AsyncTaskDoc> {
  return {
    name: 'jimeng',
    ops: deps.repo.forPlatform('jimeng'),
    upstreamId: (t) => t.task_id,
    async fetch(channel, tasks) {
      const out = new Map<string, Partial<AsyncTaskDoc>>();
      const ok = await everyLimit(tasks, FETCH_CONCURRENCY, async (t) => {
        const props = propsOf(t);
        const r = await deps.volc.call(channel, JIMENG_RESULT, { req_key: props.req_key, task_id: t.task_id });
        const p = jimengProgress(r, t, props.seconds);
        if (!p) return false;
        if ('code' in p) {
          const { code, ...fields } = p;
          out.set(t.task_id, { ...fields, properties: JSON.stringify({ ...props, code }) });
        } else out.set(t.task_id, p);
        return true;
      });
      if (!ok) return undefined;
      return out;
    },
    timedOut: (now) => ({ status: 'FAILURE', fail_reason: '任务超时', finish_time: Math.floor(now / 1000) }),
    finished: (now) => ({ finish_time: Math.floor(now / 1000) }),
    refundText: (t) => `即梦视频任务 ${t.task_id} 失败（${t.fail_reason || '未知原因'}），退还 ${t.quota} 额度`,
    logOther: (t) => ({ task_id: t.task_id, action: t.action }),
  };
}
