import type { SseEvent } from '../protocols/sse.ts';
import { type Adaptor, baseOf, type RelayMode } from './types.ts';

/**
 * Google PaLM 2 (type 11): `{base}/v1beta2/models/{model}:generateMessage?key=` (the key as a
 * query parameter; protocols/palm.ts). The API has no streaming: a streamed request is sent as a
 * whole one and its body handed to the protocol as one event once it ended.
 */
export const palm: Adaptor = {
  name: 'PaLM',
  protocol: 'palm',
  modes: new Set<RelayMode>(['chat']),
  defaultBaseUrl: 'https://generativelanguage.googleapis.com',
  noStreamOptions: true,
  target: (ch, _mode, model) => ({
    url: `${baseOf(ch, palm)}/v1beta2/models/${encodeURIComponent(model)}:generateMessage?key=${encodeURIComponent(ch.key.trim())}`,
    headers: {},
  }),
  async prepare(call) {
    const { accept: _a, ...headers } = call.headers;
    return { ...call, headers };
  },
  streamParser() {
    const parts: Buffer[] = [];
    return {
      push(c: Uint8Array): SseEvent[] {
        parts.push(Buffer.from(c));
        return [];
      },
      end(): SseEvent[] {
        const data = Buffer.concat(parts).toString('utf8').trim();
        return data ? [{ event: '', data }] : [];
      },
    };
  },
};
