/**
 * iFlytek Spark's chat API (a WebSocket per request), for channels of type 18. The request is one
 * JSON frame `{header: {app_id, uid}, parameter: {chat: {domain, temperature, max_tokens}},
 * payload: {message: {text: [{role, content}]}}}`; the answer comes as frames
 * `{header: {code, message, sid, status}, payload: {choices: {status, seq, text: [{content}]},
 * usage}}` whose header status is 2 on the last one, which carries `usage.text`. A non-zero
 * `header.code` is an error, mapped to the HTTP status it means.
 *
 * The adaptor (adaptors/spark.ts) runs the socket: a streamed call hands each frame on as one SSE
 * event (`data:` the frame), a whole call gets the frames joined into one frame-shaped answer.
 */
import { UpstreamFailure } from '../exchange/failure.ts';
import { type ChatChunk, type ChatResponse, chatId, chunk, contentText, type Json, type Usage } from './openai.ts';
import type { SseEvent } from './sse.ts';
import type { WireProtocol } from './wire.ts';

/** One Spark answer frame (or the whole answer, joined). */
export interface SparkFrame {
  header?: { code?: number; message?: string; sid?: string; status?: number };
  payload?: {
    choices?: { status?: number; seq?: number; text?: { content?: string; role?: string; index?: number }[] };
    usage?: {
      text?: { question_tokens?: number; prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
    };
  };
}

/** The HTTP status a Spark error code means. */
export function sparkErrorStatus(code: number): number {
  if (code === 11200 || code === 10313 || code === 10311) return 401; // no licence, app id mismatch
  if (code === 11201 || code === 11202 || code === 11203 || code === 10110) return 429; // daily, QPS, concurrency
  if (code === 10013 || code === 10014 || code === 10019) return 400; // content refused by review
  if (code === 10907 || code === 10163 || code === 10160 || code === 10161 || code === 10222) return 400; // bad request
  return 500;
}

export function throwIfSparkError(f: SparkFrame): void {
  const code = Number(f.header?.code ?? 0);
  if (!code) return;
  throw new UpstreamFailure(sparkErrorStatus(code), `${code}: ${f.header?.message ?? ''}`);
}

function sparkUsage(f: SparkFrame): Usage | undefined {
  const u = f.payload?.usage?.text;
  if (!u) return undefined;
  return { promptTokens: u.prompt_tokens ?? 0, completionTokens: u.completion_tokens ?? 0 };
}

const frameText = (f: SparkFrame): string => (f.payload?.choices?.text ?? []).map((t) => t.content ?? '').join('');

export const sparkProtocol: WireProtocol = {
  framing: 'sse',
  request(c) {
    const chat: Json = { domain: '' };
    if (c.temperature !== undefined) chat.temperature = c.temperature;
    const max = c.max_completion_tokens ?? c.max_tokens;
    if (max) chat.max_tokens = max;
    if (typeof c.user === 'string' && c.user) chat.chat_id = c.user.slice(0, 32);
    return {
      // The adaptor fills app_id and domain from the channel.
      header: { app_id: '', uid: typeof c.user === 'string' && c.user ? c.user.slice(0, 32) : 'relay' },
      parameter: { chat },
      payload: {
        message: {
          text: c.messages.map((m) => ({
            role: m.role === 'developer' ? 'system' : m.role === 'tool' ? 'user' : m.role,
            content: contentText(m.content),
          })),
        },
      },
    };
  },
  toCanonical(res, model): ChatResponse {
    const f = res as SparkFrame;
    throwIfSparkError(f);
    const usage = sparkUsage(f);
    return {
      id: f.header?.sid ? `chatcmpl-${f.header.sid}` : chatId(),
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: frameText(f) }, finish_reason: 'stop' }],
      ...(usage
        ? {
            usage: {
              prompt_tokens: usage.promptTokens,
              completion_tokens: usage.completionTokens,
              total_tokens: usage.promptTokens + usage.completionTokens,
            },
          }
        : {}),
    };
  },
  usage: (res) => sparkUsage(res as SparkFrame),
  streamDecoder(model) {
    let id = '';
    return (item) => {
      const ev = item as SseEvent;
      if (!ev.data) return [];
      const f = JSON.parse(ev.data) as SparkFrame;
      throwIfSparkError(f);
      id ||= f.header?.sid ? `chatcmpl-${f.header.sid}` : chatId();
      const out: ChatChunk[] = [];
      const text = frameText(f);
      const last = f.header?.status === 2;
      if (text || last) out.push(chunk(id, model, text ? { content: text } : {}, last ? 'stop' : null));
      const u = last ? sparkUsage(f) : undefined;
      if (u)
        out.push({
          ...chunk(id, model, {}, null),
          choices: [],
          usage: {
            prompt_tokens: u.promptTokens,
            completion_tokens: u.completionTokens,
            total_tokens: u.promptTokens + u.completionTokens,
          },
        });
      return out;
    };
  },
};
