import { UpstreamFailure } from '../exchange/failure.ts';
import { type Adaptor, baseOf, type RelayMode } from './types.ts';

/**
 * 知识库：AI Proxy (type 21): `/api/library/ask` with the key in `Api-Key` and the library id in
 * the channel's `other` (protocols/aiproxy.ts).
 */
export const aiproxy: Adaptor = {
  name: 'AI Proxy Library',
  protocol: 'aiproxy',
  modes: new Set<RelayMode>(['chat']),
  defaultBaseUrl: 'https://api.aiproxy.io',
  target: (ch) => ({ url: `${baseOf(ch, aiproxy)}/api/library/ask`, headers: { 'api-key': ch.key.trim() } }),
  async prepare(call, ctx) {
    const libraryId = ctx.channel.other.trim();
    if (!libraryId) throw new UpstreamFailure(500, 'AI Proxy 知识库渠道未填写知识库 ID');
    const body = JSON.parse(String(call.body)) as Record<string, unknown>;
    body.libraryId = libraryId;
    return { ...call, body: JSON.stringify(body) };
  },
};
