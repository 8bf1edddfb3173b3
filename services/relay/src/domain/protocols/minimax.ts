/**
 * MiniMax's chat completion v2 (`/v1/text/chatcompletion_v2`), for channels of type 35: OpenAI's
 * request and answer shapes, plus `base_resp {status_code, status_msg}` in every answer and
 * stream chunk. MiniMax reports errors with HTTP 200 and a non-zero `status_code`; they become
 * failures with the HTTP status they mean. The last stream chunk repeats the whole text as
 * `choices[].message` (not a delta) with the finish reason and the usage; the relay keeps only
 * its finish reason and usage, so the text is not sent twice.
 */
import { UpstreamFailure } from '../exchange/failure.ts';
import { type ChatChunk, type ChatResponse, chatId, chunk, type Json, nowSeconds, usageFromOpenAI } from './openai.ts';
import type { SseEvent } from './sse.ts';
import type { WireProtocol } from './wire.ts';

/** The HTTP status a MiniMax `base_resp.status_code` means. */
export function minimaxErrorStatus(code: number): number {
  if (code === 1004 || code === 2049) return 401; // authentication failed, invalid API key
  if (code === 1008) return 402; // insufficient balance
  if (code === 1002 || code === 1039 || code === 1041) return 429; // rate / token / connection limits
  if (code === 1026 || code === 1027 || code === 2013 || code === 1013) return 400; // sensitive, bad params
  return 500; // 1000 unknown, 1001 timeout, 1024 internal...
}

function throwIfError(res: Json): void {
  const b = res.base_resp as { status_code?: number; status_msg?: string } | undefined;
  const code = Number(b?.status_code ?? 0);
  if (!code) return;
  throw new UpstreamFailure(minimaxErrorStatus(code), `${code}: ${String(b?.status_msg ?? '')}`);
}

export const minimaxProtocol: WireProtocol = {
  framing: 'sse',
  request(c, call) {
    const out: Json = { ...c, model: call.model };
    delete out.stream_options;
    if (call.stream) out.stream = true;
    else delete out.stream;
    return out;
  },
  toCanonical(res, model): ChatResponse {
    throwIfError(res);
    const r = res as unknown as ChatResponse;
    const { base_resp: _b, ...rest } = res;
    return {
      ...(rest as unknown as ChatResponse),
      id: r.id || chatId(),
      object: 'chat.completion',
      created: r.created ?? nowSeconds(),
      model: r.model || model,
    };
  },
  usage: (res) => usageFromOpenAI(res.usage),
  streamDecoder(model) {
    return (item) => {
      const ev = item as SseEvent;
      if (!ev.data || ev.data === '[DONE]') return [];
      const d = JSON.parse(ev.data) as Json & {
        id?: string;
        created?: number;
        choices?: { index?: number; delta?: Json; message?: Json; finish_reason?: string | null }[];
      };
      throwIfError(d);
      const id = d.id || 'minimax';
      const out: ChatChunk[] = [];
      for (const ch of d.choices ?? []) {
        // The closing chunk carries the whole `message` again: only its finish reason is new.
        if (ch.message && !ch.delta) {
          if (ch.finish_reason) out.push(chunk(id, model, {}, ch.finish_reason, d.created));
          continue;
        }
        const c = chunk(
          id,
          model,
          (ch.delta ?? {}) as ChatChunk['choices'][number]['delta'],
          ch.finish_reason ?? null,
          d.created,
        );
        const first = c.choices[0];
        if (first) first.index = ch.index ?? 0;
        out.push(c);
      }
      const u = usageFromOpenAI(d.usage);
      if (u)
        out.push({
          ...chunk(id, model, {}, null, d.created),
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
