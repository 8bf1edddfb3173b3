/** Reading drawing tasks through the midjourney-proxy API: fetch, list-by-condition, image-seed. */
import { OPTION_CATALOGUE } from '@aigw/common/option-catalogue';
import { authorize } from './authorize.ts';
import { MJ_CODE_INVALID, MjError } from './mj-error.ts';
import type { MjAnswer, MjDeps } from './mj-submit.ts';
import { mjTaskView } from './mj-view.ts';

/** Where forwarded image URLs point (MjForwardUrlEnabled, ServerAddress); undefined: upstream URLs. */
export function forwardBase(d: MjDeps): string | undefined {
  if (!d.options.bool('MjForwardUrlEnabled')) return undefined;
  // An address the admin cleared reads as unset, so a forwarded image URL is never relative.
  return (d.options.text('ServerAddress') || OPTION_CATALOGUE.ServerAddress.default).replace(/\/+$/, '');
}

export async function fetchMj(d: MjDeps, key: string | undefined, ip: string, id: string): Promise<MjAnswer> {
  const a = await authorize(d.peers, key, ip);
  const t = await d.repo.byMjId(id, a.caller.user.id);
  if (!t) throw new MjError(404, MJ_CODE_INVALID, '任务不存在');
  return { status: 200, body: mjTaskView(t, forwardBase(d)) };
}

export async function listMjByCondition(
  d: MjDeps,
  key: string | undefined,
  ip: string,
  body: Record<string, unknown>,
): Promise<MjAnswer> {
  const a = await authorize(d.peers, key, ip);
  const ids = Array.isArray(body.ids) ? body.ids.map(String).slice(0, 1000) : [];
  if (ids.length === 0) return { status: 200, body: [] };
  const tasks = await d.repo.byMjIds(ids, a.caller.user.id);
  const seen = new Set<string>();
  const base = forwardBase(d);
  const out = [];
  for (const t of tasks) {
    if (seen.has(t.mj_id)) continue;
    seen.add(t.mj_id);
    out.push(mjTaskView(t, base));
  }
  return { status: 200, body: out };
}

export async function imageSeedMj(d: MjDeps, key: string | undefined, ip: string, id: string): Promise<MjAnswer> {
  const a = await authorize(d.peers, key, ip);
  const t = await d.repo.byMjId(id, a.caller.user.id);
  if (!t) throw new MjError(404, MJ_CODE_INVALID, '任务不存在');
  const channel = await d.peers.channel(t.channel_id);
  if (!channel) throw new MjError(503, MJ_CODE_INVALID, '原任务所在的渠道已不可用');
  const r = await d.upstream.get(channel, `/mj/task/${encodeURIComponent(id)}/image-seed`).catch(() => {
    throw new MjError(502, MJ_CODE_INVALID, '上游服务请求失败');
  });
  return { status: r.status, body: r.body };
}
