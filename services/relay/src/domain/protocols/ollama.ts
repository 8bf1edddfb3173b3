/** Ollama's native API (/api/chat, /api/embed), for channels of type 4 (local model runner). */
import {
  type ChatChunk,
  type ChatRequest,
  type ChatResponse,
  chatId,
  chunk,
  contentText,
  type Json,
  nowSeconds,
  parseDataUrl,
  type ToolCall,
  type Usage,
  usageFromOpenAI,
  usageToOpenAI,
} from './openai.ts';
import type { WireProtocol } from './wire.ts';

/** OpenAI chat request -> Ollama /api/chat request. */
export function openaiToOllamaRequest(req: ChatRequest, model: string): Json {
  const messages = req.messages.map((m) => {
    const out: Json = { role: m.role, content: contentText(m.content) };
    if (Array.isArray(m.content)) {
      const images = m.content
        .filter((p) => p.type === 'image_url' && p.image_url)
        .map((p) => parseDataUrl(p.image_url?.url ?? '')?.data)
        .filter((d): d is string => Boolean(d));
      if (images.length) out.images = images;
    }
    if (m.tool_calls?.length) {
      out.tool_calls = m.tool_calls.map((tc) => ({
        function: { name: tc.function.name, arguments: safeParse(tc.function.arguments) },
      }));
    }
    return out;
  });
  const options: Json = {};
  if (req.temperature !== undefined) options.temperature = req.temperature;
  if (req.top_p !== undefined) options.top_p = req.top_p;
  const max = req.max_completion_tokens ?? req.max_tokens;
  if (max) options.num_predict = max;
  if (req.stop !== undefined) options.stop = Array.isArray(req.stop) ? req.stop : [req.stop];
  const out: Json = { model, messages, stream: req.stream === true };
  if (Object.keys(options).length) out.options = options;
  if (req.tools?.length) out.tools = req.tools;
  return out;
}

function safeParse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return {};
  }
}

function ollamaUsage(res: Json): Usage | undefined {
  if (typeof res.prompt_eval_count !== 'number' && typeof res.eval_count !== 'number') return undefined;
  return { promptTokens: Number(res.prompt_eval_count ?? 0), completionTokens: Number(res.eval_count ?? 0) };
}

function toolCallsOf(msg: Json | undefined, offset = 0): ToolCall[] {
  const calls = (msg?.tool_calls as { function: { name: string; arguments?: unknown } }[] | undefined) ?? [];
  return calls.map((c, i) => ({
    id: `call_${offset + i}_${Date.now().toString(36)}`,
    type: 'function',
    function: { name: c.function.name, arguments: JSON.stringify(c.function.arguments ?? {}) },
  }));
}

const finishOf = (res: Json, tools: boolean) =>
  tools ? 'tool_calls' : res.done_reason === 'length' ? 'length' : 'stop';

/** Ollama chat response -> OpenAI chat response. */
export function ollamaToOpenAIResponse(res: Json, model: string): ChatResponse {
  const msg = res.message as Json | undefined;
  const toolCalls = toolCallsOf(msg);
  const message: ChatResponse['choices'][number]['message'] = {
    role: 'assistant',
    content: String(msg?.content ?? ''),
  };
  if (toolCalls.length) message.tool_calls = toolCalls;
  const out: ChatResponse = {
    id: chatId(),
    object: 'chat.completion',
    created: nowSeconds(),
    model,
    choices: [{ index: 0, message, finish_reason: finishOf(res, toolCalls.length > 0) }],
  };
  const usage = ollamaUsage(res);
  if (usage) out.usage = usageToOpenAI(usage);
  return out;
}

/** Ollama NDJSON stream lines -> OpenAI chunks. */
export function ollamaStreamToOpenAI(model: string): { onLine(line: unknown): ChatChunk[] } {
  const id = chatId();
  let first = true;
  let tools = 0;
  return {
    onLine(line) {
      const res = line as Json;
      if (res.error) throw new Error(String(res.error));
      const msg = res.message as Json | undefined;
      const delta: ChatChunk['choices'][number]['delta'] = {};
      if (first) {
        delta.role = 'assistant';
        first = false;
      }
      const text = String(msg?.content ?? '');
      if (text) delta.content = text;
      const calls = toolCallsOf(msg, tools);
      if (calls.length) {
        delta.tool_calls = calls.map((c) => ({ ...c, index: tools++ }));
      }
      const done = res.done === true;
      const c = chunk(id, model, delta, done ? finishOf(res, tools > 0) : null);
      const usage = done ? ollamaUsage(res) : undefined;
      if (usage) c.usage = usageToOpenAI(usage);
      return [c];
    },
  };
}

/** OpenAI embeddings request -> Ollama /api/embed request. */
export function openaiToOllamaEmbed(body: Json, model: string): Json {
  return { model, input: body.input };
}

/** Ollama /api/embed response -> OpenAI embeddings response. */
export function ollamaToOpenAIEmbed(res: Json, model: string): { body: Json; usage: Usage } {
  const vectors = (res.embeddings as number[][] | undefined) ?? [];
  const prompt = Number(res.prompt_eval_count ?? 0);
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

/** The protocol module (registry.ts): Ollama's /api/chat, streamed as NDJSON. */
export const ollamaProtocol: WireProtocol = {
  framing: 'ndjson',
  request: (c, call) => openaiToOllamaRequest({ ...c, stream: call.stream }, call.model),
  toCanonical: ollamaToOpenAIResponse,
  usage: (res, canonical) => usageFromOpenAI((canonical ?? ollamaToOpenAIResponse(res, '')).usage),
  streamDecoder(model) {
    const d = ollamaStreamToOpenAI(model);
    return (line) => d.onLine(line);
  },
};
