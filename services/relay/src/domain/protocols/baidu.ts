/**
 * Baidu ERNIE (Qianfan wenxinworkshop chat API), for channels of type 15: OpenAI-like messages
 * with the system prompt in its own field, the answer text in `result`, streams as SSE `data:`
 * lines with `result` pieces and `is_end`. Errors come with HTTP 200 as `{error_code, error_msg}`.
 */
import { UpstreamFailure } from '../exchange/failure.ts';
import {
  type ChatChunk,
  type ChatResponse,
  chatId,
  chunk,
  contentText,
  type Json,
  nowSeconds,
  usageFromOpenAI,
} from './openai.ts';
import type { SseEvent } from './sse.ts';
import type { WireProtocol } from './wire.ts';

/** Error codes meaning the access token is bad (the cached one is dropped). */
export const BAIDU_TOKEN_ERRORS = new Set([110, 111]);

/** The HTTP status a Baidu error code means. */
export function baiduErrorStatus(code: number): number {
  if (BAIDU_TOKEN_ERRORS.has(code) || code === 14 || code === 6) return 401;
  if (code === 4 || code === 17 || code === 18 || code === 19 || code === 336501 || code === 336502) return 429;
  if (code === 336003 || code === 336006 || code === 336007 || code === 336100) return 400;
  return 500;
}

function throwIfError(res: Json): void {
  if (res.error_code === undefined) return;
  const code = Number(res.error_code);
  throw new UpstreamFailure(baiduErrorStatus(code), `${code}: ${String(res.error_msg ?? '')}`);
}

export const baiduProtocol: WireProtocol = {
  framing: 'sse',
  request(c, call) {
    const system = c.messages
      .filter((m) => m.role === 'system' || m.role === 'developer')
      .map((m) => contentText(m.content))
      .join('\n');
    const out: Json = {
      messages: c.messages
        .filter((m) => m.role === 'user' || m.role === 'assistant')
        .map((m) => ({ role: m.role, content: contentText(m.content) })),
      stream: call.stream,
    };
    if (system) out.system = system;
    if (c.temperature !== undefined) out.temperature = c.temperature;
    if (c.top_p !== undefined) out.top_p = c.top_p;
    const max = c.max_completion_tokens ?? c.max_tokens;
    if (max) out.max_output_tokens = max;
    return out;
  },
  toCanonical(res, model): ChatResponse {
    throwIfError(res);
    const usage = usageFromOpenAI(res.usage);
    return {
      id: String(res.id ?? chatId()),
      object: 'chat.completion',
      created: Number(res.created ?? nowSeconds()),
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: String(res.result ?? '') },
          finish_reason: String(res.finish_reason || 'stop'),
        },
      ],
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
  usage: (res) => usageFromOpenAI(res.usage),
  streamDecoder(model) {
    return (item) => {
      const ev = item as SseEvent;
      if (!ev.data) return [];
      const d = JSON.parse(ev.data) as Json;
      throwIfError(d);
      const id = String(d.id ?? 'as-baidu');
      const created = Number(d.created ?? nowSeconds());
      const out: ChatChunk[] = [];
      const text = String(d.result ?? '');
      const end = d.is_end === true;
      if (text || end)
        out.push(
          chunk(id, model, text ? { content: text } : {}, end ? String(d.finish_reason || 'stop') : null, created),
        );
      const u = end ? usageFromOpenAI(d.usage) : undefined;
      if (u)
        out.push({
          ...chunk(id, model, {}, null, created),
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
