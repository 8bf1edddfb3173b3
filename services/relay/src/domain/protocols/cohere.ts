/** Cohere's v2 API (/v2/chat, /v2/rerank, /v2/embed), for channels of type 34. */
import {
  type ChatChunk,
  type ChatRequest,
  type ChatResponse,
  chatId,
  chunk,
  contentText,
  type Json,
  nowSeconds,
  type ToolCall,
  type Usage,
  usageToOpenAI,
} from './openai.ts';
import type { SseEvent } from './sse.ts';
import type { WireProtocol } from './wire.ts';

const FINISH: Record<string, string> = {
  COMPLETE: 'stop',
  STOP_SEQUENCE: 'stop',
  MAX_TOKENS: 'length',
  TOOL_CALL: 'tool_calls',
  ERROR: 'stop',
};

export function cohereUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const o = u as {
    tokens?: { input_tokens?: number; output_tokens?: number };
    billed_units?: { input_tokens?: number; output_tokens?: number };
  };
  const t = o.tokens ?? o.billed_units;
  if (!t) return undefined;
  return { promptTokens: t.input_tokens ?? 0, completionTokens: t.output_tokens ?? 0 };
}

/** OpenAI chat request -> Cohere v2 chat request. */
export function openaiToCohereRequest(req: ChatRequest, model: string): Json {
  const messages = req.messages.map((m) => {
    const role = m.role === 'developer' ? 'system' : m.role;
    const out: Json = { role, content: contentText(m.content) };
    if (m.tool_calls?.length) out.tool_calls = m.tool_calls.map(({ index: _i, ...tc }) => tc);
    if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
    return out;
  });
  const out: Json = { model, messages, stream: req.stream === true };
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.p = req.top_p;
  const max = req.max_completion_tokens ?? req.max_tokens;
  if (max) out.max_tokens = max;
  if (req.stop !== undefined) out.stop_sequences = Array.isArray(req.stop) ? req.stop : [req.stop];
  if (req.tools?.length) out.tools = req.tools;
  return out;
}

/** Cohere v2 chat response -> OpenAI chat response. */
export function cohereToOpenAIResponse(res: Json, model: string): ChatResponse {
  const msg = (res.message ?? {}) as Json;
  const text = ((msg.content as { type: string; text?: string }[] | undefined) ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text ?? '')
    .join('');
  const toolCalls = (msg.tool_calls as ToolCall[] | undefined) ?? [];
  const message: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: text };
  if (toolCalls.length) message.tool_calls = toolCalls;
  const out: ChatResponse = {
    id: String(res.id ?? chatId()),
    object: 'chat.completion',
    created: nowSeconds(),
    model,
    choices: [{ index: 0, message, finish_reason: FINISH[String(res.finish_reason)] ?? 'stop' }],
  };
  const usage = cohereUsage(res.usage);
  if (usage) out.usage = usageToOpenAI(usage);
  return out;
}

/** Cohere v2 stream events -> OpenAI chunks. */
export function cohereStreamToOpenAI(model: string): { onEvent(ev: SseEvent): ChatChunk[] } {
  let id = chatId();
  let tools = -1;
  return {
    onEvent(ev) {
      if (!ev.data || ev.data === '[DONE]') return [];
      const d = JSON.parse(ev.data) as Json;
      const delta = (d.delta ?? {}) as Json;
      const message = (delta.message ?? {}) as Json;
      switch (d.type) {
        case 'message-start':
          if (d.id) id = String(d.id);
          return [chunk(id, model, { role: 'assistant', content: '' })];
        case 'content-delta': {
          const text = String(((message.content ?? {}) as Json).text ?? '');
          return text ? [chunk(id, model, { content: text })] : [];
        }
        case 'tool-call-start': {
          tools++;
          const tc = (message.tool_calls ?? {}) as ToolCall;
          return [
            chunk(id, model, {
              tool_calls: [
                {
                  index: tools,
                  id: tc.id,
                  type: 'function',
                  function: { name: tc.function?.name ?? '', arguments: tc.function?.arguments ?? '' },
                },
              ],
            }),
          ];
        }
        case 'tool-call-delta': {
          const tc = (message.tool_calls ?? {}) as ToolCall;
          return [
            chunk(id, model, {
              tool_calls: [
                {
                  index: Math.max(tools, 0),
                  function: { arguments: tc.function?.arguments ?? '' } as ToolCall['function'],
                },
              ],
            }),
          ];
        }
        case 'message-end': {
          const c = chunk(id, model, {}, FINISH[String(delta.finish_reason)] ?? 'stop');
          const usage = cohereUsage(delta.usage);
          if (usage) c.usage = usageToOpenAI(usage);
          return [c];
        }
        default:
          return [];
      }
    },
  };
}

/** OpenAI-style rerank request -> Cohere v2 rerank request. */
export function toCohereRerank(body: Json, model: string): Json {
  const docs = ((body.documents as unknown[] | undefined) ?? []).map((d) =>
    typeof d === 'string' ? d : String((d as Json).text ?? JSON.stringify(d)),
  );
  const out: Json = { model, query: body.query, documents: docs };
  if (typeof body.top_n === 'number') out.top_n = body.top_n;
  return out;
}

/** Cohere v2 rerank response -> the relay's rerank response (Jina-style). */
export function fromCohereRerank(
  res: Json,
  body: Json,
  model: string,
  promptEstimate: number,
): { body: Json; usage: Usage } {
  const docs = (body.documents as unknown[] | undefined) ?? [];
  const results = ((res.results as { index: number; relevance_score: number }[] | undefined) ?? []).map((r) => ({
    index: r.index,
    relevance_score: r.relevance_score,
    ...(body.return_documents
      ? { document: typeof docs[r.index] === 'string' ? { text: docs[r.index] } : docs[r.index] }
      : {}),
  }));
  const tokens = promptEstimate;
  return {
    body: { id: res.id, model, results, usage: { prompt_tokens: tokens, total_tokens: tokens } },
    usage: { promptTokens: tokens, completionTokens: 0 },
  };
}

/** OpenAI embeddings request -> Cohere v2 embed request. */
export function toCohereEmbed(body: Json, model: string): Json {
  const input = body.input;
  const texts = Array.isArray(input) ? input.map(String) : [String(input ?? '')];
  return { model, texts, input_type: 'search_document', embedding_types: ['float'] };
}

/** Cohere v2 embed response -> OpenAI embeddings response. */
export function fromCohereEmbed(res: Json, model: string): { body: Json; usage: Usage } {
  const vectors = (((res.embeddings ?? {}) as Json).float as number[][] | undefined) ?? [];
  const billed = ((res.meta as Json | undefined)?.billed_units ?? {}) as { input_tokens?: number };
  const prompt = billed.input_tokens ?? 0;
  return {
    body: {
      object: 'list',
      data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
      model,
      usage: { prompt_tokens: prompt, total_tokens: prompt },
    },
    usage: { promptTokens: prompt, completionTokens: 0 },
  };
}

/** The protocol module (registry.ts): Cohere's v2 chat. */
export const cohereProtocol: WireProtocol = {
  framing: 'sse',
  request: (c, call) => openaiToCohereRequest({ ...c, stream: call.stream }, call.model),
  toCanonical: cohereToOpenAIResponse,
  usage: (res) => cohereUsage(res.usage),
  streamDecoder(model) {
    const d = cohereStreamToOpenAI(model);
    return (e) => d.onEvent(e as SseEvent);
  },
};
