/**
 * Dify's chat-messages API, for channels of type 37. A Dify app keeps the conversation itself:
 * a request carries one `query` and, to continue, the `conversation_id` Dify gave. The relay takes
 * `conversation_id` from the OpenAI body (an extra field) and returns Dify's in the answer and in
 * every stream chunk (`conversation_id`), so a client can continue; without one, earlier turns of
 * the messages go into the query as text. Streams are SSE `data:` lines whose JSON names its
 * `event` (message, agent_message, message_end with the usage, error, and workflow/node events
 * the relay skips).
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
  usageFromOpenAI,
} from './openai.ts';
import type { SseEvent } from './sse.ts';
import type { WireProtocol } from './wire.ts';

function difyUsage(res: Json): Usage | undefined {
  return usageFromOpenAI((res.metadata as Json | undefined)?.usage);
}

export const difyProtocol: WireProtocol = {
  framing: 'sse',
  request(c, call) {
    const extra = c as unknown as { conversation_id?: unknown; user?: unknown };
    const conversation = typeof extra.conversation_id === 'string' ? extra.conversation_id : '';
    const turns = c.messages.filter((m) => m.role !== 'system' && m.role !== 'developer');
    const last = turns.at(-1);
    const query =
      conversation || turns.length <= 1
        ? contentText(last?.content)
        : turns.map((m) => `${m.role}: ${contentText(m.content)}`).join('\n');
    const system = c.messages
      .filter((m) => m.role === 'system' || m.role === 'developer')
      .map((m) => contentText(m.content))
      .join('\n');
    return {
      inputs: system ? { system } : {},
      query,
      response_mode: call.stream ? 'streaming' : 'blocking',
      user: typeof extra.user === 'string' && extra.user ? extra.user : 'aigw-relay',
      ...(conversation ? { conversation_id: conversation } : {}),
    };
  },
  toCanonical(res, model): ChatResponse {
    const usage = difyUsage(res);
    const out: ChatResponse & { conversation_id?: string } = {
      id: String(res.message_id ?? res.id ?? chatId()),
      object: 'chat.completion',
      created: Number(res.created_at ?? nowSeconds()),
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: String(res.answer ?? '') }, finish_reason: 'stop' }],
      conversation_id: String(res.conversation_id ?? ''),
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
    return out;
  },
  usage: (res) => difyUsage(res),
  streamDecoder(model) {
    return (item) => {
      const ev = item as SseEvent;
      if (!ev.data) return [];
      const d = JSON.parse(ev.data) as Json;
      const id = String(d.message_id ?? 'dify');
      const tag = (c: ChatChunk) => Object.assign(c, { conversation_id: String(d.conversation_id ?? '') });
      switch (d.event) {
        case 'message':
        case 'agent_message': {
          const text = String(d.answer ?? '');
          return text ? [tag(chunk(id, model, { content: text }, null, Number(d.created_at ?? nowSeconds())))] : [];
        }
        case 'message_end': {
          const out: ChatChunk[] = [tag(chunk(id, model, {}, 'stop'))];
          const u = difyUsage(d);
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
        }
        case 'error':
          throw new UpstreamFailure(
            Number(d.status) || 500,
            `${String(d.code ?? 'error')}: ${String(d.message ?? '')}`,
          );
        default:
          return [];
      }
    };
  },
};
