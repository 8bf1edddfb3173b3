/**
 * The audit trail of admin and root actions through /api: what each action is, in words, for
 * the log entry (type 3 管理) that records who did it, when and from where. Option changes carry
 * the old and the new value; secrets (keys, tokens, passwords) never appear, only whether one was
 * set. Actions recorded by their own route (root reading a channel's full key) are not here.
 */
import { OPTION_CATALOGUE } from '@aigw/common';

/** A request as the trail sees it (after the body parser and the guard). */
export interface AuditedRequest {
  method: string;
  /** Below /api, e.g. `/channel/12`. */
  path: string;
  body: Record<string, unknown>;
  query: Record<string, unknown>;
}

/** How long an option value may be in the trail (a price table is tens of kilobytes). */
export const MAX_VALUE = 2_000;
export const HIDDEN = '******';

/** Write-only options: the catalogue's secrets, and what the users service treats as one. */
export function isSecretOption(key: string): boolean {
  const spec = (OPTION_CATALOGUE as Record<string, { secret?: boolean }>)[key];
  return spec?.secret === true || /(Token|Secret|Key|Password)$/.test(key);
}

/** An option value as the trail shows it: secrets hidden, long values cut. */
export function shownValue(key: string, value: string): string {
  if (isSecretOption(key)) return value ? HIDDEN : '（空）';
  if (value === '') return '（空）';
  return value.length > MAX_VALUE ? `${value.slice(0, MAX_VALUE)}…（共 ${value.length} 字符）` : value;
}

/** `修改系统设置 <key>：「old」→「new」`. */
export function optionChange(key: string, before: string, after: string): string {
  return `修改系统设置 ${key}：「${shownValue(key, before)}」→「${shownValue(key, after)}」`;
}

const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
/** Field names of a body, without the id and with secrets named but not shown. */
const fields = (b: Record<string, unknown>) =>
  Object.keys(b)
    .filter((k) => k !== 'id')
    .join('、');

const MANAGE: Record<string, string> = {
  promote: '提升为管理员',
  demote: '降为普通用户',
  disable: '封禁',
  enable: '解封',
  delete: '注销',
};

const ROLE_NAME: Record<string, string> = { '1': '普通用户', '10': '管理员', '100': '超级管理员' };

type Describe = (r: AuditedRequest, m: RegExpMatchArray) => string;

/** Method and path below /api -> the action's words. Order matters (first match). */
const ACTIONS: [string, RegExp, Describe][] = [
  ['POST', /^\/option\/rest_model_ratio\/?$/, () => '重置模型倍率为默认值'],
  ['POST', /^\/channel\/?$/, (r) => channelCreate(r.body)],
  ['PUT', /^\/channel\/?$/, (r) => `编辑渠道 #${text(r.body.id)}（${text(r.body.name)}），字段：${fields(r.body)}`],
  ['DELETE', /^\/channel\/disabled\/?$/, () => '删除所有已禁用的渠道'],
  ['DELETE', /^\/channel\/(\d+)\/?$/, (_r, m) => `删除渠道 #${m[1]}`],
  ['POST', /^\/channel\/batch\/?$/, (r) => `批量删除渠道 ${JSON.stringify(r.body.ids ?? [])}`],
  ['POST', /^\/channel\/fix\/?$/, () => '修复渠道能力表'],
  [
    'POST',
    /^\/channel\/multi_key\/manage\/?$/,
    (r) => `管理渠道 #${text(r.body.channel_id)} 的多密钥：${text(r.body.action)}${keyIndex(r.body)}`,
  ],
  ['GET', /^\/channel\/test\/?$/, () => '测试所有渠道'],
  [
    'GET',
    /^\/channel\/test\/(\d+)\/?$/,
    (r, m) => `测试渠道 #${m[1]}${r.query.model ? `（模型 ${text(r.query.model)}）` : ''}`,
  ],
  ['GET', /^\/channel\/update_balance\/?$/, () => '更新所有渠道余额'],
  ['GET', /^\/channel\/update_balance\/(\d+)\/?$/, (_r, m) => `更新渠道 #${m[1]} 余额`],
  [
    'POST',
    /^\/user\/?$/,
    (r) => `创建用户「${text(r.body.username)}」（${ROLE_NAME[text(r.body.role) || '1'] ?? text(r.body.role)}）`,
  ],
  ['PUT', /^\/user\/?$/, (r) => userUpdate(r.body)],
  [
    'POST',
    /^\/user\/manage\/?$/,
    (r) => `用户 #${text(r.body.id)}：${MANAGE[text(r.body.action)] ?? text(r.body.action)}`,
  ],
  ['DELETE', /^\/user\/(\d+)\/2fa\/?$/, (_r, m) => `关闭用户 #${m[1]} 的两步验证`],
  ['DELETE', /^\/user\/(\d+)\/?$/, (_r, m) => `删除用户 #${m[1]}`],
  ['POST', /^\/user\/topup\/complete\/?$/, (r) => `补单：充值订单 ${text(r.body.trade_no)} 设为成功`],
  [
    'POST',
    /^\/redemption\/?$/,
    (r) => `创建兑换码「${text(r.body.name)}」${text(r.body.count) || '1'} 个，额度 ${text(r.body.quota) || '0'}`,
  ],
  ['PUT', /^\/redemption\/?$/, (r) => redemptionUpdate(r)],
  ['DELETE', /^\/redemption\/invalid\/?$/, () => '删除所有失效的兑换码'],
  ['DELETE', /^\/redemption\/(\d+)\/?$/, (_r, m) => `删除兑换码 #${m[1]}`],
  ['DELETE', /^\/log\/?$/, (r) => `清理 ${text(r.query.target_timestamp)} 之前的日志`],
];

function channelCreate(b: Record<string, unknown>): string {
  const c = (b.channel && typeof b.channel === 'object' ? b.channel : b) as Record<string, unknown>;
  const mode = text(b.mode);
  return `创建渠道「${text(c.name)}」（类型 ${text(c.type) || '1'}${mode ? `，${mode}` : ''}）`;
}

function keyIndex(b: Record<string, unknown>): string {
  return b.key_index === undefined ? '' : `（密钥 #${text(b.key_index)}）`;
}

function userUpdate(b: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(b)) {
    if (k === 'id' || v === undefined || v === null || v === '') continue;
    if (k === 'password') parts.push('重设密码');
    else if (k === 'role') parts.push(`角色设为${ROLE_NAME[text(v)] ?? text(v)}`);
    else if (k === 'quota') parts.push(`额度设为 ${text(v)}`);
    else parts.push(`${k} 设为「${text(v)}」`);
  }
  return `编辑用户 #${text(b.id)}：${parts.join('，') || '无改动'}`;
}

function redemptionUpdate(r: AuditedRequest): string {
  const b = r.body;
  if (r.query.status_only) return `兑换码 #${text(b.id)} 状态设为 ${text(b.status)}`;
  return `编辑兑换码 #${text(b.id)}，字段：${fields(b)}`;
}

/** The words of an admin action, or undefined when the request is not one the trail records. */
export function describeAction(r: AuditedRequest): string | undefined {
  for (const [method, re, describe] of ACTIONS) {
    if (method !== r.method) continue;
    const m = re.exec(r.path);
    if (m) return describe(r, m);
  }
  return undefined;
}

/**
 * Words for an admin or root change the table above does not name (a route added later): the
 * route, its path parameters and the names of the fields sent (never their values).
 */
export function genericAction(
  method: string,
  route: string,
  params: Record<string, unknown>,
  body: Record<string, unknown>,
): string {
  const ps = Object.entries(params)
    .map(([k, v]) => `${k}=${text(v)}`)
    .join('，');
  const fs = fields(body);
  return `管理操作 ${method} /api${route}${ps ? `（${ps}）` : ''}${fs ? `，字段：${fs}` : ''}`;
}
