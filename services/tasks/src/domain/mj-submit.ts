/**
 * Submitting a drawing task (reference-behaviour "Async tasks"): authenticate, find the action
 * and its price, choose the channel (an action goes to its task's channel), reserve the price,
 * submit upstream; codes 1, 21 and 22 keep the charge and create the task (logged once, type 2),
 * anything else gives the reservation back and answers the upstream's refusal unbilled.
 */
import { randomUUID } from 'node:crypto';
import type { MjTaskRepository, NewMjTask } from '../data/mj-task-repository.ts';
import { type Authorized, authorize, inGroup, priceCall, taskChannel } from './authorize.ts';
import { type Charge, giveBack, logCharge, reserve } from './charge.ts';
import { MJ_CODE_INVALID, MjError } from './mj-error.ts';
import {
  actionOfCustomId,
  modelOfAction,
  parseSimpleChange,
  type SubmitKind,
  submitAccepted,
  upstreamBody,
} from './mj-rules.ts';
import type { ChannelRef, Peers, TaskOptions, UpstreamPort, UsagePort } from './ports.ts';

/** midjourney-proxy channel types: 2 (midjourney-proxy) and 5 (midjourney-proxy-plus). */
export const MJ_CHANNEL_TYPES = new Set([2, 5]);

export interface MjDeps {
  repo: MjTaskRepository;
  peers: Peers;
  options: TaskOptions;
  upstream: UpstreamPort;
  usage: UsagePort;
  onError(err: unknown, what: string): void;
}

export interface SubmitInput {
  kind: SubmitKind;
  /** fast, relax or turbo from the path prefix. */
  mode?: string;
  body: Record<string, unknown>;
  key: string | undefined;
  ip: string;
}

export interface MjAnswer {
  status: number;
  body: unknown;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');
const invalid = (d: string) => new MjError(400, MJ_CODE_INVALID, d);

/** The action of a submit and the upstream task it acts on (if any). */
function actionOf(kind: SubmitKind, body: Record<string, unknown>): { action: string; parentId?: string } {
  switch (kind) {
    case 'imagine':
      if (!str(body.prompt).trim()) throw invalid('prompt 不能为空');
      return { action: 'IMAGINE' };
    case 'blend': {
      const imgs = body.base64Array;
      if (!Array.isArray(imgs) || imgs.length < 2) throw invalid('base64Array 至少需要两张图片');
      return { action: 'BLEND' };
    }
    case 'describe':
      if (!str(body.base64)) throw invalid('base64 不能为空');
      return { action: 'DESCRIBE' };
    case 'shorten':
      if (!str(body.prompt).trim()) throw invalid('prompt 不能为空');
      return { action: 'SHORTEN' };
    case 'upload-discord-images':
      return { action: 'UPLOAD' };
    case 'swap-face':
      if (!str(body.sourceBase64) || !str(body.targetBase64)) throw invalid('sourceBase64 和 targetBase64 不能为空');
      return { action: 'SWAP_FACE' };
    case 'action': {
      const customId = str(body.customId);
      const taskId = str(body.taskId);
      if (!customId || !taskId) throw invalid('customId 和 taskId 不能为空');
      const action = actionOfCustomId(customId);
      if (!action) throw invalid('无效的 customId');
      return { action, parentId: taskId };
    }
    case 'change': {
      const action = str(body.action).toUpperCase();
      const taskId = str(body.taskId);
      if (!taskId) throw invalid('taskId 不能为空');
      if (!['UPSCALE', 'VARIATION', 'REROLL'].includes(action)) throw invalid('无效的 action');
      const index = Number(body.index ?? 0);
      if (action !== 'REROLL' && !(index >= 1 && index <= 4)) throw invalid('index 必须在 1 到 4 之间');
      return { action, parentId: taskId };
    }
    case 'simple-change': {
      const parsed = parseSimpleChange(str(body.content));
      if (!parsed) throw invalid('content 格式错误，应为 "<任务ID> U1-U4|V1-V4|R"');
      return { action: parsed.action, parentId: parsed.taskId };
    }
    case 'modal': {
      const taskId = str(body.taskId);
      if (!taskId) throw invalid('taskId 不能为空');
      return { action: 'MODAL', parentId: taskId };
    }
  }
}

function upstreamPath(kind: SubmitKind, mode: string | undefined): string {
  const prefix = mode ? `/${mode}` : '';
  return kind === 'swap-face' ? `${prefix}/mj/insight-face/swap` : `${prefix}/mj/submit/${kind}`;
}

/**
 * Where a submit runs: an action on a task on that task's channel, in the group it was made in
 * (the task must be the caller's, and successful when MjActionCheckSuccessEnabled); a new task on
 * a channel of the caller's group for the model. Only midjourney-proxy channels draw.
 */
async function submitRoute(
  d: MjDeps,
  caller: Authorized,
  s: { kind: SubmitKind; parentId: string | undefined; model: string },
): Promise<{ auth: Authorized; channel: ChannelRef }> {
  let channel: ChannelRef | undefined;
  let auth = caller;
  if (s.parentId) {
    const parent = await d.repo.byMjId(s.parentId, caller.caller.user.id);
    if (!parent) throw new MjError(404, MJ_CODE_INVALID, '任务不存在');
    const checkSuccess = d.options.bool('MjActionCheckSuccessEnabled');
    if (checkSuccess && s.kind !== 'modal' && parent.status !== 'SUCCESS') {
      throw invalid('任务状态不是成功，无法执行该操作');
    }
    channel = await d.peers.channel(parent.channel_id);
    if (!channel || channel.status !== 1) throw new MjError(503, MJ_CODE_INVALID, '原任务所在的渠道已不可用');
    // An action on a task runs on its channel, in the group the task was made in.
    auth = inGroup(caller, parent.group);
  } else {
    ({ auth, channel } = await taskChannel(d, caller, s.model));
    if (!channel) throw new MjError(503, MJ_CODE_INVALID, `当前分组 ${auth.group} 下对于模型 ${s.model} 无可用渠道`);
  }
  if (!MJ_CHANNEL_TYPES.has(channel.type)) throw new MjError(503, MJ_CODE_INVALID, '渠道类型不支持绘图');
  return { auth, channel };
}

/** The upstream's answer to the submit; a request that fails gives the reservation back (502). */
async function postSubmit(d: MjDeps, channel: ChannelRef, input: SubmitInput, charge: Charge): Promise<MjAnswer> {
  const body = upstreamBody(input.body, {
    accountFilter: d.options.bool('MjAccountFilterEnabled'),
    modeClear: d.options.bool('MjModeClearEnabled'),
  });
  try {
    return await d.upstream.post(channel, upstreamPath(input.kind, input.mode), body);
  } catch (err) {
    await giveBack(d.peers, charge, d.onError);
    d.onError(err, 'midjourney submit failed');
    throw new MjError(502, MJ_CODE_INVALID, '上游服务请求失败');
  }
}

/** The task record of an accepted submit: who, where, the upstream's id and answer, the held charge. */
export function newMjTask(
  input: Pick<SubmitInput, 'kind' | 'body'>,
  t: { auth: Authorized; channelId: number; action: string; charge: Charge; up: Record<string, unknown> },
  opts: { notify: boolean; now: number },
): NewMjTask {
  const { auth, charge, up, now } = { ...t, now: opts.now };
  return {
    user_id: auth.caller.user.id,
    username: auth.caller.user.username,
    token_id: auth.caller.token.id,
    token_name: auth.caller.token.name,
    group: auth.group,
    channel_id: t.channelId,
    action: t.action,
    mj_id: mjIdOf(up),
    code: Number(up.code),
    status: 'SUBMITTED',
    progress: '0%',
    image_url: '',
    prompt: str(input.body.prompt) || (input.kind === 'simple-change' ? str(input.body.content) : ''),
    prompt_en: '',
    description: str(up.description),
    fail_reason: '',
    state: str(input.body.state),
    custom_id: str(input.body.customId),
    submit_time: now,
    submitted_ms: now,
    start_time: 0,
    finish_time: 0,
    created_at: Math.floor(now / 1000),
    quota: charge.quota,
    model: charge.model,
    model_price: charge.modelPrice,
    group_ratio: charge.groupRatio,
    buttons: '',
    properties: up.properties ? JSON.stringify(up.properties) : '',
    notify_hook: opts.notify ? str(input.body.notifyHook) : '',
    request_id: charge.requestId,
    subscription_id: charge.subscriptionId ?? '',
    billing: 'held',
    final: false,
    next_poll_at: now,
  };
}

/** The upstream's task id (`result`, a string or a number). */
const mjIdOf = (up: Record<string, unknown>) =>
  str(up.result) || (typeof up.result === 'number' ? String(up.result) : '');

export async function submitMj(d: MjDeps, input: SubmitInput): Promise<MjAnswer> {
  if (!d.options.bool('DrawingEnabled')) throw new MjError(403, MJ_CODE_INVALID, '绘图功能未启用');
  const caller = await authorize(d.peers, input.key, input.ip);
  const { action, parentId } = actionOf(input.kind, input.body);
  const model = modelOfAction(action);
  const { auth, channel } = await submitRoute(d, caller, { kind: input.kind, parentId, model });

  const price = priceCall(auth, model, await d.peers.ratios(), d.options.number('QuotaPerUnit'));
  const charge: Charge = { requestId: `mj:${randomUUID()}`, model, ...price };
  await reserve(d.peers, auth, charge, (m) => new MjError(403, MJ_CODE_INVALID, m));

  const answer = await postSubmit(d, channel, input, charge);
  const up = (answer.body ?? {}) as Record<string, unknown>;
  const mjId = mjIdOf(up);
  if (answer.status !== 200 || !submitAccepted(Number(up.code)) || !mjId) {
    await giveBack(d.peers, charge, d.onError);
    return {
      status: answer.status === 200 ? 200 : answer.status,
      body: answer.body ?? { code: 4, description: '上游返回错误' },
    };
  }

  const task = await d.repo.insert(
    newMjTask(
      input,
      { auth, channelId: channel.id, action, charge, up },
      { notify: d.options.bool('MjNotifyEnabled'), now: Date.now() },
    ),
  );
  await logCharge(
    d.usage,
    auth,
    charge,
    {
      channelId: channel.id,
      content: `绘图 ${action}，任务 ${mjId}`,
      other: { mj_id: mjId, action, task_id: task.id },
      ip: input.ip,
    },
    d.onError,
  );
  return { status: 200, body: answer.body };
}
