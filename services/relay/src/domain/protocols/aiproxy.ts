/**
 * AI Proxy's knowledge-base API (`/api/library/ask`), for channels of type 21 (知识库：AI Proxy):
 * one `query` asked of a library (`libraryId`), the answer as `answer` with the `documents` it
 * drew on, streams as SSE `data:` lines of `{content, finish, model, documents}`. Errors come with
 * HTTP 200 as `{success: false, errCode, message}`. The API reports no token counts (the relay
 * estimates them). The documents are appended to the answer as a Markdown list of links.
 */
import { UpstreamFailure } from '../exchange/failure.ts';
import { type ChatChunk, type ChatResponse, chatId, chunk, contentText, type Json, nowSeconds } from './openai.ts';
import type { SseEvent } from './sse.ts';
import type { WireProtocol } from './wire.ts';

interface LibraryDocument {
  title?: string;
  url?: string;
}

/** The HTTP status an AI Proxy error means (its codes follow HTTP's where they are statuses). */
export function aiproxyErrorStatus(code: number, message: string): number {
  if (code >= 400 && code < 600) return code;
  if (/api[- ]?key|unauthori[sz]ed|token/i.test(message)) return 401;
  if (/point|balance|余额|积分/i.test(message)) return 402;
  return 500;
}

function throwIfError(res: Json): void {
  if (res.success !== false) return;
  const code = Number(res.errCode ?? 0);
  const message = String(res.message ?? res.errMsg ?? 'AI Proxy error');
  throw new UpstreamFailure(aiproxyErrorStatus(code, message), `${code}: ${message}`);
}

/** The documents as the Markdown appended to the answer ('' when there are none). */
export function documentsMarkdown(docs: unknown): string {
  if (!Array.isArray(docs) || docs.length === 0) return '';
  const lines = (docs as LibraryDocument[]).map((d) => `- [${d.title ?? ''}](${d.url ?? ''})`);
  return `\n\n参考文档：\n${lines.join('\n')}`;
}

export const aiproxyProtocol: WireProtocol = {
  framing: 'sse',
  request(c, call) {
    const last = c.messages.filter((m) => m.role === 'user').at(-1);
    return {
      model: call.model,
      query: contentText(last?.content),
      // The adaptor sets it from the channel's `other` (the library id).
      libraryId: '',
      stream: call.stream,
    };
  },
  toCanonical(res, model): ChatResponse {
    throwIfError(res);
    return {
      id: chatId(),
      object: 'chat.completion',
      created: nowSeconds(),
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: String(res.answer ?? '') + documentsMarkdown(res.documents) },
          finish_reason: 'stop',
        },
      ],
    };
  },
  usage: () => undefined,
  streamDecoder(model) {
    const id = chatId();
    return (item) => {
      const ev = item as SseEvent;
      if (!ev.data || ev.data === '[DONE]') return [];
      const d = JSON.parse(ev.data) as Json;
      throwIfError(d);
      const out: ChatChunk[] = [];
      const text = String(d.content ?? '') + (d.finish === true ? documentsMarkdown(d.documents) : '');
      if (text) out.push(chunk(id, model, { content: text }));
      if (d.finish === true) out.push(chunk(id, model, {}, 'stop'));
      return out;
    };
  },
};
