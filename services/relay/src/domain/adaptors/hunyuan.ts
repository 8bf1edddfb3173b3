import { UpstreamFailure } from '../exchange/failure.ts';
import { signTc3 } from './tencent-tc3.ts';
import { type Adaptor, baseOf, type RelayMode } from './types.ts';

/**
 * Tencent Hunyuan (type 23): key `AppId|SecretId|SecretKey` (spec 01 section 5), the
 * ChatCompletions action signed with TC3-HMAC-SHA256; `other` may name a region.
 */
export const hunyuan: Adaptor = {
  name: 'Hunyuan',
  protocol: 'hunyuan',
  modes: new Set<RelayMode>(['chat']),
  defaultBaseUrl: 'https://hunyuan.tencentcloudapi.com',
  target: (ch) => ({ url: `${baseOf(ch, hunyuan)}/`, headers: {} }),
  async prepare(call, ctx) {
    const [, secretId = '', secretKey = ''] = ctx.channel.key.split('|').map((p) => p.trim());
    if (!secretId || !secretKey) throw new UpstreamFailure(401, '腾讯混元渠道密钥格式应为 AppId|SecretId|SecretKey');
    const body = String(call.body);
    const headers = signTc3({
      host: new URL(call.url).host,
      service: 'hunyuan',
      action: 'ChatCompletions',
      version: '2023-09-01',
      region: ctx.channel.other.trim() || undefined,
      body,
      secretId,
      secretKey,
    });
    if (call.headers.accept) headers.accept = call.headers.accept;
    return { url: call.url, headers, body };
  },
};
