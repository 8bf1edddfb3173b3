/**
 * Coze's chat API v3 (`POST /v3/chat`), for channels of type 49. A request names the bot
 * (`bot_id`, the channel's `other`, put in by the adaptor), a `user_id` (the OpenAI body's `user`)
 * and the turns as `additional_messages` (user questions and assistant answers as text; the bot
 * keeps its own prompt, so system messages are not sent). Streams are SSE with named events:
 * `conversation.message.delta` carries the answer's text (and `reasoning_content`),
 * `conversation.chat.completed` the usage (`input_count`, `output_count`),
 * `conversation.chat.failed` and `error` a failure, `done` the end. A whole answer is the
 * message list of a finished chat (`data`: its messages, `type` answer for the reply) with the
 * finished chat under `chat` (adaptors/coze.ts builds it from the stream).
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

/** Usage of a finished Coze chat (`usage` of the chat object). */
export function cozeUsage(chat: unknown): Usage | undefined {
  const u = (chat as { usage?: { input_count?: unknown; output_count?: unknown } } | undefined)?.usage;
  if (!u || typeof u.input_count !== 'number') return undefined;
  return { promptTokens: u.input_count, completionTokens: typeof u.output_count === 'number' ? u.output_count : 0 };
}

/** The message of a Coze failure: a chat's `last_error` or an error event's body. */
export function cozeError(d: Json): string {
  const e = (d.last_error ?? d) as { code?: unknown; msg?: unknown; message?: unknown };
  return `coze error ${String(e.code ?? '')}: ${String(e.msg ?? e.message ?? '')}`.trim();
}

const openaiUsage = (u: Usage) => ({
  prompt_tokens: u.promptTokens,
  completion_tokens: u.completionTokens,
  total_tokens: u.promptTokens + u.completionTokens,
});

export const cozeProtocol: WireProtocol = {
  framing: 'sse',
  request(c, call) {
    const extra = c as unknown as { user?: unknown };
    const additional_messages = c.messages
      .filter((m) => m.role === 'user' || m.role === 'assistant')
      .map((m) => ({
        role: m.role,
        type: m.role === 'user' ? 'question' : 'answer',
        content: contentText(m.content),
        content_type: 'text',
      }));
    return {
      bot_id: '',
      user_id: typeof extra.user === 'string' && extra.user ? extra.user : 'aigw-relay',
      stream: call.stream,
      additional_messages,
    };
  },
  toCanonical(res, model): ChatResponse {
    const answers = (Array.isArray(res.data) ? (res.data as Json[]) : []).filter(
      (m) => m.role === 'assistant' && m.type === 'answer',
    );
    const text = answers.map((m) => (typeof m.content === 'string' ? m.content : '')).join('');
    const reasoning = answers.map((m) => (typeof m.reasoning_content === 'string' ? m.reasoning_content : '')).join('');
    const chat = (res.chat ?? {}) as Json;
    const usage = cozeUsage(chat);
    return {
      id: String(chat.id ?? chatId()),
      object: 'chat.completion',
      created: Number(chat.created_at ?? nowSeconds()),
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: text, ...(reasoning ? { reasoning_content: reasoning } : {}) },
          finish_reason: 'stop',
        },
      ],
      ...(usage ? { usage: openaiUsage(usage) } : {}),
    };
  },
  usage: (res) => cozeUsage(res.chat),
  streamDecoder(model) {
    return (item) => {
      const ev = item as SseEvent;
      if (!ev.data || ev.event === 'done') return [];
      const d = JSON.parse(ev.data) as Json;
      switch (ev.event) {
        case 'conversation.message.delta': {
          if (d.type !== undefined && d.type !== 'answer') return [];
          const delta: ChatChunk['choices'][number]['delta'] = {};
          if (typeof d.content === 'string' && d.content) delta.content = d.content;
          if (typeof d.reasoning_content === 'string' && d.reasoning_content)
            delta.reasoning_content = d.reasoning_content;
          if (delta.content === undefined && delta.reasoning_content === undefined) return [];
          return [chunk(String(d.chat_id ?? 'coze'), model, delta)];
        }
        case 'conversation.chat.completed': {
          const id = String(d.id ?? 'coze');
          const out: ChatChunk[] = [chunk(id, model, {}, 'stop')];
          const u = cozeUsage(d);
          if (u) out.push({ ...chunk(id, model, {}), choices: [], usage: openaiUsage(u) } as ChatChunk);
          return out;
        }
        case 'conversation.chat.failed':
        case 'error':
          throw new UpstreamFailure(502, cozeError(d));
        default:
          return [];
      }
    };
  },
};
