/**
 * Baidu ERNIE (type 15): key `APIKey|SecretKey` (spec 01 section 5), traded for an access token
 * at `/oauth/2.0/token` (client_credentials; cached until a day before its 30-day expiry, one
 * exchange per key at a time), then the wenxinworkshop chat endpoint of the model with
 * `?access_token=`.
 */
import { UpstreamFailure } from '../exchange/failure.ts';
import type { UpstreamClient } from '../exchange/ports.ts';
import { type Adaptor, baseOf, type RelayMode } from './types.ts';

/** Model -> wenxinworkshop endpoint name (other names are used as the endpoint itself). */
const ENDPOINTS: Record<string, string> = {
  'ERNIE-4.0-8K': 'completions_pro',
  'ERNIE-3.5-8K': 'completions',
  'ERNIE-Speed-8K': 'ernie_speed',
  'ERNIE-Speed-128K': 'ernie-speed-128k',
  'ERNIE-Lite-8K': 'ernie-lite-8k',
  'ERNIE-Tiny-8K': 'ernie-tiny-8k',
  'ERNIE-Bot': 'completions',
  'ERNIE-Bot-4': 'completions_pro',
  'ERNIE-Bot-turbo': 'eb-instant',
};

export const baiduEndpoint = (model: string): string => ENDPOINTS[model] ?? model.toLowerCase();

const MARGIN_S = 24 * 3600;

interface Cached {
  token: string;
  until: number;
}
const tokens = new Map<string, Cached>();
const inflight = new Map<string, Promise<string>>();

async function exchange(http: UpstreamClient, base: string, ak: string, sk: string): Promise<string> {
  const q = new URLSearchParams({ grant_type: 'client_credentials', client_id: ak, client_secret: sk });
  let res: Awaited<ReturnType<UpstreamClient['send']>>;
  try {
    res = await http.send({
      url: `${base}/oauth/2.0/token?${q}`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '',
    });
  } catch (err) {
    throw new UpstreamFailure(0, `百度获取 access_token 失败: ${(err as Error).message}`, 'connection');
  }
  const text = (await res.bytes()).toString('utf8');
  let o: { access_token?: string; expires_in?: number; error?: string; error_description?: string } = {};
  try {
    o = JSON.parse(text);
  } catch {
    // handled below
  }
  if (!o.access_token) {
    const why = o.error_description ?? o.error ?? text.slice(0, 200);
    // A refused client id or secret is an unusable key.
    throw new UpstreamFailure(
      o.error ? 401 : res.status >= 400 ? res.status : 502,
      `百度获取 access_token 失败: ${why}`,
    );
  }
  tokens.set(`${base}\n${ak}\n${sk}`, {
    token: o.access_token,
    until: Date.now() / 1000 + Math.max(60, Number(o.expires_in ?? 2592000) - MARGIN_S),
  });
  return o.access_token;
}

/** The cached access token of a key (exchanged when missing or near expiry). */
export function baiduToken(http: UpstreamClient, base: string, ak: string, sk: string): Promise<string> {
  // The secret is part of the name: a channel with the right API Key and a wrong secret must not
  // borrow another channel's token.
  const id = `${base}\n${ak}\n${sk}`;
  const hit = tokens.get(id);
  if (hit && hit.until > Date.now() / 1000) return Promise.resolve(hit.token);
  let p = inflight.get(id);
  if (!p) {
    p = exchange(http, base, ak, sk).finally(() => inflight.delete(id));
    inflight.set(id, p);
  }
  return p;
}

/** Drops a key's token (the API said it is invalid or expired). */
export function forgetBaiduToken(base: string, ak: string, sk: string): void {
  tokens.delete(`${base}\n${ak}\n${sk}`);
}

export const baidu: Adaptor = {
  name: 'Baidu ERNIE',
  protocol: 'baidu',
  modes: new Set<RelayMode>(['chat']),
  defaultBaseUrl: 'https://aip.baidubce.com',
  target: (ch, _mode, model) => ({
    url: `${baseOf(ch, baidu)}/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/${encodeURIComponent(baiduEndpoint(model))}`,
    headers: {},
  }),
  async prepare(call, ctx) {
    const [ak = '', sk = ''] = ctx.channel.key.split('|').map((p) => p.trim());
    if (!ak || !sk) throw new UpstreamFailure(401, '百度渠道密钥格式应为 APIKey|SecretKey');
    const base = baseOf(ctx.channel, baidu);
    const token = await baiduToken(ctx.http, base, ak, sk);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (call.headers.accept) headers.accept = call.headers.accept;
    return { url: `${call.url}?access_token=${encodeURIComponent(token)}`, headers, body: call.body };
  },
  onFailure(failure, ctx) {
    if (!/^11[01]: /.test(failure.message)) return;
    const [ak = '', sk = ''] = ctx.channel.key.split('|').map((p) => p.trim());
    forgetBaiduToken(baseOf(ctx.channel, baidu), ak, sk);
  },
};
