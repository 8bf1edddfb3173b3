/**
 * Google PaLM 2's chat API (generativelanguage v1beta2 `models/{model}:generateMessage`), for
 * channels of type 11: a `prompt` of `context` (the system text) and `messages` by `author`, the
 * answer as `candidates[].content`. A prompt or answer the safety filters blocked comes back
 * without candidates and with `filters`. The API neither streams nor counts tokens: a streaming
 * client gets the whole answer as one chunk (the adaptor's stream parser hands the body over as
 * one event at its end) and the relay estimates the usage. Errors are Google's
 * `{error: {code, message, status}}` with their HTTP status.
 */
import { type ChatChunk, type ChatResponse, chatId, chunk, contentText, type Json, nowSeconds } from './openai.ts';
import type { SseEvent } from './sse.ts';
import type { WireProtocol } from './wire.ts';

interface PalmAnswer {
  candidates?: { author?: string; content?: string }[];
  filters?: { reason?: string; message?: string }[];
}

function answerOf(res: Json): { text: string; finish: string } {
  const a = res as PalmAnswer;
  const first = a.candidates?.[0];
  if (!first) return { text: '', finish: a.filters?.length ? 'content_filter' : 'stop' };
  return { text: first.content ?? '', finish: 'stop' };
}

export const palmProtocol: WireProtocol = {
  framing: 'sse',
  request(c) {
    const context = c.messages
      .filter((m) => m.role === 'system' || m.role === 'developer')
      .map((m) => contentText(m.content))
      .join('\n');
    const prompt: Json = {
      messages: c.messages
        .filter((m) => m.role === 'user' || m.role === 'assistant')
        .map((m) => ({ author: m.role === 'user' ? '0' : '1', content: contentText(m.content) })),
    };
    if (context) prompt.context = context;
    const out: Json = { prompt, candidateCount: 1 };
    if (c.temperature !== undefined) out.temperature = c.temperature;
    if (c.top_p !== undefined) out.topP = c.top_p;
    return out;
  },
  toCanonical(res, model): ChatResponse {
    const { text, finish } = answerOf(res);
    return {
      id: chatId(),
      object: 'chat.completion',
      created: nowSeconds(),
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finish }],
    };
  },
  usage: () => undefined,
  streamDecoder(model) {
    const id = chatId();
    return (item) => {
      const ev = item as SseEvent;
      if (!ev.data) return [];
      const { text, finish } = answerOf(JSON.parse(ev.data) as Json);
      const out: ChatChunk[] = [];
      if (text) out.push(chunk(id, model, { role: 'assistant', content: text }));
      out.push(chunk(id, model, {}, finish));
      return out;
    };
  },
};
