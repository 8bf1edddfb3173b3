/**
 * Key and token checks for task submits, the same rules as the relay's (reference-behaviour
 * steps 1-2): key forms, token status, expiry, quota, IP allow-list, user status, model limits
 * and group. The data comes from billing and users (data/peers.ts).
 */
import { GroupRefused, groupRatioFor, groupSettings, ipAllowed, parseAllowIps, resolveGroup } from '@aigw/common';
import { MjError } from './mj-error.ts';
import type { Caller, CallerUser, ChannelRef, Peers, Ratios, TaskOptions } from './ports.ts';

/** `Authorization: Bearer sk-...` (or `mj-api-secret`, which midjourney-proxy clients send). */
export function keyOf(authorization: string | undefined, secretHeader: string | undefined): string | undefined {
  const raw = (authorization || secretHeader || '')
    .trim()
    .replace(/^bearer\s+/i, '')
    .trim();
  const k = raw.startsWith('sk-') ? raw.slice(3) : raw;
  // sk-KEY-CHANNELID: channel pinning is a relay feature; tasks route by the key alone.
  const dash = k.indexOf('-');
  const key = dash > 0 ? k.slice(0, dash) : k;
  return key || undefined;
}

export interface Authorized {
  caller: Caller & { user: CallerUser };
  group: string;
}

/** Authenticates a key; throws MjError with the status the client gets. */
export async function authorize(peers: Peers, key: string | undefined, ip: string): Promise<Authorized> {
  if (!key) throw new MjError(401, 4, '未提供令牌');
  const c = await peers.caller(key);
  if (!c) throw new MjError(401, 4, '无效的令牌');
  const t = c.token;
  const now = Math.floor(Date.now() / 1000);
  if (t.status === 3 || (t.expiredTime > 0 && t.expiredTime < now)) throw new MjError(401, 4, '该令牌已过期');
  if (t.status === 4 || (!t.unlimitedQuota && t.remainQuota <= 0)) throw new MjError(401, 4, '该令牌额度已用尽');
  if (t.status !== 1) throw new MjError(401, 4, '该令牌状态不可用');
  if (!ipAllowed(parseAllowIps(t.allowIps), ip)) throw new MjError(403, 4, '您的 IP 不在令牌允许访问的列表中');
  const u = c.user;
  if (!u || u.deleted) throw new MjError(401, 4, '用户不存在或已注销');
  if (u.status !== 1) throw new MjError(403, 4, '用户已被封禁');
  return { caller: { token: t, user: u }, group: t.group || u.group || 'default' };
}

/**
 * Model limits of the token and the quota a call costs: price x QuotaPerUnit x group ratio (the
 * user group's GroupGroupRatio entry for the group used, else GroupRatio's).
 */
export function priceCall(
  a: Authorized,
  model: string,
  ratios: Ratios,
  quotaPerUnit: number,
): { quota: number; modelPrice: number; groupRatio: number } {
  const t = a.caller.token;
  if (t.modelLimitsEnabled) {
    const allowed = new Set(
      t.modelLimits
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
    if (!allowed.has(model)) throw new MjError(403, 4, `该令牌无权访问模型 ${model}`);
  }
  if (!Object.hasOwn(ratios.groupRatio, a.group)) throw new MjError(403, 4, `分组 ${a.group} 已被弃用`);
  // What the user's group pays in the group used (GroupGroupRatio, else GroupRatio).
  const groupRatio = groupRatioFor(a.caller.user.group, a.group, ratios.groupRatio, ratios.groupGroupRatio);
  const modelPrice = ratios.modelPrice[model];
  if (modelPrice === undefined || modelPrice < 0) {
    throw new MjError(403, 4, `模型 ${model} 倍率或价格未配置，请联系管理员设置`);
  }
  return { quota: Math.round(modelPrice * quotaPerUnit * groupRatio), modelPrice, groupRatio };
}

/**
 * The caller running in `group` (a follow-up on a task runs in the group recorded on it); an
 * empty group leaves the caller's own.
 */
export const inGroup = (a: Authorized, group: string): Authorized =>
  !group || group === a.group ? a : { ...a, group };

/**
 * The channel a new task runs on and the caller in the group it runs in, by the relay's group
 * rules (@aigw/common resolveGroup): the token's group must be one the user may use, and an
 * `auto` token walks its auto groups in order and takes the first with a channel for the model
 * (priced and logged in that group). A caller that already chose the channel (the unified video
 * API, a follow-up on an existing task) passes it as `pinned` with the group it was chosen in.
 */
export async function taskChannel(
  d: { peers: Pick<Peers, 'selectChannel' | 'ratios'>; options: TaskOptions },
  a: Authorized,
  model: string,
  pinned?: { channel?: ChannelRef | undefined; group?: string | undefined },
): Promise<{ auth: Authorized; channel: ChannelRef | undefined }> {
  if (pinned?.channel) return { auth: inGroup(a, pinned.group ?? ''), channel: pinned.channel };
  let resolved: { group: string; autoGroups?: string[] };
  try {
    resolved = resolveGroup(a.group, a.caller.user, groupSettings(d.options, (await d.peers.ratios()).groupRatio));
  } catch (err) {
    if (err instanceof GroupRefused) throw new MjError(403, 4, err.message);
    throw err;
  }
  for (const group of resolved.autoGroups ?? []) {
    const channel = await d.peers.selectChannel(group, model);
    if (channel) return { auth: inGroup(a, group), channel };
  }
  return { auth: inGroup(a, resolved.group), channel: await d.peers.selectChannel(resolved.group, model) };
}
