/**
 * Tencent Hunyuan's ChatCompletions (API 2023-09-01), for channels of type 23: PascalCase fields
 * (`Model`, `Messages` of `Role`/`Content`), the answer under `Response`, streams as SSE `data:`
 * lines with `Choices[].Delta` and no closing marker. Tencent Cloud answers errors with HTTP 200
 * and `Response.Error {Code, Message}`; they become failures with the HTTP status they mean.
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
  type Usage,
} from './openai.ts';
import type { SseEvent } from './sse.ts';
import type { WireProtocol } from './wire.ts';

/** The HTTP status a Tencent Cloud error code means. */
export function tencentErrorStatus(code: string): number {
  if (code.startsWith('AuthFailure')) return 401;
  if (code.startsWith('UnauthorizedOperation')) return 403;
  if (code.startsWith('LimitExceeded') || code.startsWith('RequestLimitExceeded')) return 429;
  if (
    code.startsWith('InvalidParameter') ||
    code.startsWith('MissingParameter') ||
    code.startsWith('UnsupportedOperation')
  )
    return 400;
  if (code.startsWith('ResourceInsufficient') || code.startsWith('ResourceUnavailable')) return 402;
  return 500;
}

/** Throws the failure a `Response.Error` (or a top-level one, as stream errors come) carries. */
function throwIfError(res: Json): void {
  const r = (res.Response ?? res) as { Error?: { Code?: string; Message?: string } };
  if (!r.Error) return;
  const code = String(r.Error.Code ?? 'InternalError');
  throw new UpstreamFailure(tencentErrorStatus(code), `${code}: ${r.Error.Message ?? ''}`);
}

function hunyuanUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const o = u as { PromptTokens?: number; CompletionTokens?: number };
  if (o.PromptTokens === undefined && o.CompletionTokens === undefined) return undefined;
  return { promptTokens: o.PromptTokens ?? 0, completionTokens: o.CompletionTokens ?? 0 };
}

const finish = (r: string | undefined): string | null => (r ? (r === 'sensitive' ? 'content_filter' : r) : null);

export const hunyuanProtocol: WireProtocol = {
  framing: 'sse',
  request(c, call) {
    const out: Json = {
      Model: call.model,
      Messages: c.messages.map((m) => ({
        Role: m.role === 'developer' ? 'system' : m.role,
        Content: contentText(m.content),
      })),
      Stream: call.stream,
    };
    if (c.temperature !== undefined) out.Temperature = c.temperature;
    if (c.top_p !== undefined) out.TopP = c.top_p;
    return out;
  },
  toCanonical(res, model): ChatResponse {
    throwIfError(res);
    const r = (res.Response ?? {}) as {
      Id?: string;
      Created?: number;
      Choices?: { Message?: { Role?: string; Content?: string }; FinishReason?: string }[];
      Usage?: { PromptTokens?: number; CompletionTokens?: number; TotalTokens?: number };
    };
    const usage = hunyuanUsage(r.Usage);
    return {
      id: r.Id ?? chatId(),
      object: 'chat.completion',
      created: r.Created ?? nowSeconds(),
      model,
      choices: (r.Choices ?? []).map((ch, index) => ({
        index,
        message: { role: 'assistant', content: ch.Message?.Content ?? '' },
        finish_reason: finish(ch.FinishReason) ?? 'stop',
      })),
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
  usage: (res) => hunyuanUsage((res.Response as Json | undefined)?.Usage),
  streamDecoder(model) {
    let id = '';
    return (item) => {
      const ev = item as SseEvent;
      if (!ev.data) return [];
      const d = JSON.parse(ev.data) as Json & {
        Id?: string;
        Created?: number;
        Choices?: { Delta?: { Role?: string; Content?: string }; FinishReason?: string }[];
        Usage?: { PromptTokens?: number; CompletionTokens?: number };
      };
      throwIfError(d);
      id ||= d.Id ?? chatId();
      const out: ChatChunk[] = [];
      const ch = d.Choices?.[0];
      const done = finish(ch?.FinishReason);
      if (ch?.Delta?.Content || done)
        out.push(chunk(id, model, ch?.Delta?.Content ? { content: ch.Delta.Content } : {}, done, d.Created));
      // Every event carries the running usage; the last one's is the total.
      if (done) {
        const u = hunyuanUsage(d.Usage);
        if (u)
          out.push({
            ...chunk(id, model, {}, null, d.Created),
            choices: [],
            usage: {
              prompt_tokens: u.promptTokens,
              completion_tokens: u.completionTokens,
              total_tokens: u.promptTokens + u.completionTokens,
            },
          });
      }
      return out;
    };
  },
};
