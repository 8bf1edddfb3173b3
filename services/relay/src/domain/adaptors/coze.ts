/**
 * Coze (type 49): a bot's chat API v3 at `{base}/v3/chat` with a personal access token as the
 * bearer key; the bot is the channel's `other` (new-api's bot_id), else the model name.
 * Coze answers a non-streamed chat with only the chat's id (`in_progress`), its messages to be
 * polled for; the relay instead asks Coze for the stream and collects it into Coze's message
 * list (protocols/coze.ts reads both), so a whole answer costs one call and no polling. Coze
 * refuses a request with HTTP 200 and a JSON `{code, msg}`: answered as a 4xx here.
 */
import { Readable } from 'node:stream';
import { type Dispatcher, ProxyAgent, request } from 'undici';
import type { UpstreamRequest, UpstreamResponse } from '../exchange/ports.ts';
import { cozeError } from '../protocols/coze.ts';
import type { Json } from '../protocols/openai.ts';
import { createSseParser, type SseEvent } from '../protocols/sse.ts';
import { type Adaptor, baseOf, type RelayMode } from './types.ts';

const proxies = new Map<string, ProxyAgent>();
const dispatcherOf = (proxy: string | undefined): Dispatcher | undefined => {
  if (!proxy) return undefined;
  let p = proxies.get(proxy);
  if (!p) {
    p = new ProxyAgent(proxy);
    proxies.set(proxy, p);
  }
  return p;
};

const JSON_TYPE = { 'content-type': 'application/json' };

function answer(status: number, headers: UpstreamResponse['headers'], bytes: Buffer): UpstreamResponse {
  return {
    status,
    headers,
    body: Readable.from([bytes]),
    bytes: async () => bytes,
  };
}

/** Coze's `{code, msg}` refusal as an HTTP error in OpenAI's shape (401 for a bad token). */
function refusal(body: Json): UpstreamResponse {
  const code = Number(body.code);
  const status = code === 4100 || code === 4101 ? 401 : 400;
  const message = `coze error ${code}: ${String(body.msg ?? '')}`;
  return answer(status, JSON_TYPE, Buffer.from(JSON.stringify({ error: { message, type: 'coze_error', code } })));
}

/** A finished Coze stream as Coze's message list of the chat, with the chat under `chat`. */
async function collect(body: AsyncIterable<Uint8Array>): Promise<UpstreamResponse> {
  const parser = createSseParser();
  let content = '';
  let reasoning = '';
  let chat: Json | undefined;
  let failure: string | undefined;
  const take = (events: SseEvent[]) => {
    for (const ev of events) {
      if (!ev.data || ev.event === 'done') continue;
      const d = JSON.parse(ev.data) as Json;
      if (ev.event === 'conversation.message.delta' && (d.type === undefined || d.type === 'answer')) {
        if (typeof d.content === 'string') content += d.content;
        if (typeof d.reasoning_content === 'string') reasoning += d.reasoning_content;
      } else if (ev.event === 'conversation.chat.completed') chat = d;
      else if (ev.event === 'conversation.chat.failed' || ev.event === 'error') failure = cozeError(d);
    }
  };
  for await (const part of body) take(parser.push(part));
  take(parser.end());
  if (failure || !chat) {
    const message = failure ?? 'coze stream ended before the chat completed';
    return answer(502, JSON_TYPE, Buffer.from(JSON.stringify({ error: { message, type: 'coze_error' } })));
  }
  const message: Json = { role: 'assistant', type: 'answer', content, content_type: 'text' };
  if (reasoning) message.reasoning_content = reasoning;
  return answer(200, JSON_TYPE, Buffer.from(JSON.stringify({ code: 0, msg: '', data: [message], chat })));
}

async function send(req: UpstreamRequest): Promise<UpstreamResponse> {
  const body = JSON.parse(String(req.body)) as Json;
  const whole = body.stream !== true;
  const ac = new AbortController();
  // Kept for a passed-on stream (the client may go away while it is read).
  const off = req.cancel?.onAbort(() => ac.abort());
  let streaming = false;
  try {
    const res = await request(req.url, {
      method: 'POST',
      headers: req.headers,
      body: whole ? JSON.stringify({ ...body, stream: true }) : String(req.body),
      signal: ac.signal,
      dispatcher: dispatcherOf(req.proxy),
    });
    const type = String(res.headers['content-type'] ?? '');
    if (res.statusCode >= 200 && res.statusCode < 300 && type.includes('json')) {
      const json = (await res.body.json()) as Json;
      if (Number(json.code ?? 0) !== 0) return refusal(json);
      return answer(502, JSON_TYPE, Buffer.from(JSON.stringify({ error: { message: 'coze answered no stream' } })));
    }
    if (res.statusCode < 200 || res.statusCode >= 300 || !whole) {
      streaming = true;
      return {
        status: res.statusCode,
        headers: res.headers,
        body: res.body,
        bytes: async () => Buffer.from(await res.body.arrayBuffer()),
      };
    }
    return await collect(res.body);
  } finally {
    if (!streaming) off?.();
  }
}

export const coze: Adaptor = {
  name: 'Coze',
  protocol: 'coze',
  modes: new Set<RelayMode>(['chat']),
  defaultBaseUrl: 'https://api.coze.cn',
  target: (ch) => ({
    url: `${baseOf(ch, coze)}/v3/chat`,
    headers: { authorization: `Bearer ${ch.key}` },
  }),
  async prepare(call, ctx) {
    const body = JSON.parse(String(call.body)) as Json;
    body.bot_id = ctx.channel.other.trim() || ctx.model;
    return { ...call, body: JSON.stringify(body) };
  },
  send,
};
