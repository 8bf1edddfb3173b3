import { UpstreamFailure } from '../exchange/failure.ts';
import type { Json } from '../protocols/openai.ts';
import { type Adaptor, baseOf, type ChannelTarget, OPENAI_PATHS, type RelayMode } from './types.ts';

/** The key `token` or `token|appid` (Qianfan's application id, sent as the `appid` header). */
function headers(ch: ChannelTarget): Record<string, string> {
  const [token = '', appid = ''] = ch.key.split('|');
  const h: Record<string, string> = { authorization: `Bearer ${token.trim()}` };
  if (appid.trim()) h.appid = appid.trim();
  return h;
}

/**
 * Baidu Qianfan v2 (type 46, new-api's BaiduV2): OpenAI's format under `{base}/v2` with a bearer
 * token. A model named `<model>-search` goes upstream as `<model>` with Qianfan's `web_search`
 * switched on (unless the request sets its own), as new-api does.
 */
export const baiduV2: Adaptor = {
  name: 'BaiduV2',
  protocol: 'openai',
  modes: new Set<RelayMode>(['chat', 'embeddings', 'images', 'image_edits', 'rerank']),
  defaultBaseUrl: 'https://qianfan.baidubce.com',
  target: (ch, mode) => ({ url: `${baseOf(ch, baiduV2)}/v2${OPENAI_PATHS[mode]}`, headers: headers(ch) }),
  async prepare(call, ctx) {
    if (!ctx.channel.key.split('|')[0]?.trim())
      throw new UpstreamFailure(401, 'invalid API key: authorization token is required');
    if (ctx.mode !== 'chat' || !ctx.model.endsWith('-search') || typeof call.body !== 'string') return call;
    const body = JSON.parse(call.body) as Json;
    body.model = ctx.model.slice(0, -'-search'.length);
    body.web_search ??= { enable: true, enable_citation: true, enable_trace: true, enable_status: false };
    return { ...call, body: JSON.stringify(body) };
  },
};
