/**
 * Google's Gemini generateContent API, both ways: the relay calls Gemini channels with it and
 * serves it on /v1beta/models/{model}:generateContent and :streamGenerateContent.
 */
import {
  type ChatChunk,
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
  type ChatTool,
  type ContentPart,
  chatId,
  chunk,
  contentText,
  type Json,
  nowSeconds,
  parseDataUrl,
  type StreamTally,
  type ToolCall,
  tallyText,
  type Usage,
  usageToOpenAI,
} from './openai.ts';
import {
  clampGeminiBudget,
  effortForBudget,
  geminiBudgetFor,
  geminiLevelFor,
  type ReasoningIntent,
  reasoningOf,
  type SuffixMeaning,
  setReasoning,
} from './reasoning.ts';
import {
  geminiParameters,
  geminiResponseFormat,
  geminiToolChoice,
  openaiResponseFormatToGemini,
  openaiToolChoiceToGemini,
} from './schema.ts';
import { type SseEvent, sse } from './sse.ts';
import type { ClientProtocol } from './wire.ts';

type Part = Json;

const FINISH: Record<string, string> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
};
const TO_GEMINI_FINISH: Record<string, string> = {
  stop: 'STOP',
  length: 'MAX_TOKENS',
  content_filter: 'SAFETY',
  tool_calls: 'STOP',
};

/** usageMetadata -> relay usage (thinking tokens are billed as completion). */
export function geminiUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const o = u as {
    promptTokenCount?: number;
    candidatesTokenCount?: number;
    thoughtsTokenCount?: number;
    cachedContentTokenCount?: number;
  };
  if (typeof o.promptTokenCount !== 'number') return undefined;
  const usage: Usage = {
    promptTokens: o.promptTokenCount,
    completionTokens: (o.candidatesTokenCount ?? 0) + (o.thoughtsTokenCount ?? 0),
  };
  if (o.cachedContentTokenCount) usage.cachedTokens = o.cachedContentTokenCount;
  return usage;
}

function toParts(content: ChatMessage['content']): Part[] {
  if (content == null) return [];
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  const out: Part[] = [];
  for (const p of content) {
    if (p.type === 'text') out.push({ text: p.text ?? '' });
    else if (p.type === 'image_url' && p.image_url) {
      const d = parseDataUrl(p.image_url.url);
      out.push(
        d
          ? { inlineData: { mimeType: d.mediaType, data: d.data } }
          : { fileData: { mimeType: 'image/jpeg', fileUri: p.image_url.url } },
      );
    }
  }
  return out;
}

function parseArgs(args: string | undefined): unknown {
  try {
    return args ? JSON.parse(args) : {};
  } catch {
    return {};
  }
}

/**
 * Gemini's thinkingConfig for an intent: a level on Gemini 3, else a budget (an effort's share of
 * the model's most, new-api's shares; `-thinking`: a share of maxOutputTokens); thoughts included
 * whenever thinking is asked for, so that they come back as reasoning. Thinking off is a zero
 * budget (Gemini 3 and 2.5 Pro cannot stop thinking: the least they take).
 */
export function geminiThinkingConfig(
  model: string,
  intent: ReasoningIntent | undefined,
  maxOutput: number | undefined,
): Json | undefined {
  if (!intent) return undefined;
  if (!intent.enabled) {
    if (/^gemini-3/.test(model)) return { thinkingLevel: 'low' };
    const least = clampGeminiBudget(model, 0);
    return { thinkingBudget: least };
  }
  const out: Json = { includeThoughts: intent.include ?? true };
  if (intent.budget !== undefined) out.thinkingBudget = clampGeminiBudget(model, intent.budget);
  else if (intent.budgetShare !== undefined && maxOutput)
    out.thinkingBudget = clampGeminiBudget(model, Math.floor(maxOutput * intent.budgetShare));
  else if (intent.effort) {
    const level = geminiLevelFor(model, intent.effort);
    if (level) out.thinkingLevel = level;
    else out.thinkingBudget = geminiBudgetFor(model, intent.effort);
  }
  return out;
}

/** A Gemini client's thinkingConfig (camelCase or snake_case) as an intent. */
export function geminiIntent(gc: Json): ReasoningIntent | undefined {
  const t = (gc.thinkingConfig ?? gc.thinking_config) as Json | undefined;
  if (!t || typeof t !== 'object') return undefined;
  const budget = t.thinkingBudget ?? t.thinking_budget;
  const level = t.thinkingLevel ?? t.thinking_level;
  const include = t.includeThoughts ?? t.include_thoughts;
  const intent: ReasoningIntent = { enabled: true };
  if (typeof include === 'boolean') intent.include = include;
  if (typeof level === 'string' && level) intent.effort = level.toLowerCase();
  else if (typeof budget === 'number') {
    if (budget === 0) return { enabled: false };
    if (budget > 0) {
      intent.budget = budget;
      intent.effort = effortForBudget(budget);
    }
  }
  return intent;
}

/**
 * The thought signature Google documents for function calls whose real signature was not kept
 * (a conversation made elsewhere): Gemini 3 refuses a call turn without one.
 */
export const GEMINI_SIGNATURE_BYPASS = 'skip_thought_signature_validator';

/** OpenAI chat request -> Gemini generateContent request. */
export function openaiToGeminiRequest(req: ChatRequest, model = req.model): Json {
  const contents: { role: string; parts: Part[] }[] = [];
  const system: string[] = [];
  const toolNames = new Map<string, string>();
  const push = (role: string, parts: Part[]) => {
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const m of req.messages) {
    if (m.role === 'system' || m.role === 'developer') system.push(contentText(m.content));
    else if (m.role === 'assistant') {
      const parts = toParts(m.content);
      let signed = false;
      for (const tc of m.tool_calls ?? []) {
        toolNames.set(tc.id, tc.function.name);
        const part: Part = { functionCall: { name: tc.function.name, args: parseArgs(tc.function.arguments) } };
        // Gemini 3 wants the first call of a turn signed.
        if (!signed && /^gemini-3/.test(model)) part.thoughtSignature = GEMINI_SIGNATURE_BYPASS;
        signed = true;
        parts.push(part);
      }
      push('model', parts);
    } else if (m.role === 'tool') {
      const name = toolNames.get(m.tool_call_id ?? '') ?? m.name ?? '';
      const text = contentText(m.content);
      let response: unknown;
      try {
        response = JSON.parse(text);
      } catch {
        response = { content: text };
      }
      if (typeof response !== 'object' || response === null || Array.isArray(response))
        response = { content: response };
      push('user', [{ functionResponse: { name, response } }]);
    } else push('user', toParts(m.content));
  }
  const out: Json = { contents };
  if (system.length) out.systemInstruction = { parts: [{ text: system.join('\n') }] };
  const gc: Json = {};
  if (req.temperature !== undefined) gc.temperature = req.temperature;
  if (req.top_p !== undefined) gc.topP = req.top_p;
  const max = req.max_completion_tokens ?? req.max_tokens;
  if (max) gc.maxOutputTokens = max;
  if (req.stop !== undefined) gc.stopSequences = Array.isArray(req.stop) ? req.stop : [req.stop];
  if (typeof req.n === 'number' && req.n > 1) gc.candidateCount = req.n;
  if (typeof req.presence_penalty === 'number') gc.presencePenalty = req.presence_penalty;
  if (typeof req.frequency_penalty === 'number') gc.frequencyPenalty = req.frequency_penalty;
  if (typeof req.seed === 'number') gc.seed = req.seed;
  Object.assign(gc, openaiResponseFormatToGemini(req.response_format));
  const thinking = geminiThinkingConfig(model, reasoningOf(req), max);
  if (thinking) gc.thinkingConfig = thinking;
  if (Object.keys(gc).length) out.generationConfig = gc;
  if (req.tools?.length) {
    out.tools = [
      {
        // JSON Schema as given (Gemini's `parameters` is an OpenAPI subset that refuses
        // additionalProperties, $schema and the like).
        functionDeclarations: req.tools.map((t) => ({
          name: t.function.name,
          ...(t.function.description ? { description: t.function.description } : {}),
          ...(t.function.parameters ? { parametersJsonSchema: t.function.parameters } : {}),
        })),
      },
    ];
  }
  const toolConfig = openaiToolChoiceToGemini(req.tool_choice);
  if (toolConfig) out.toolConfig = toolConfig;
  return out;
}

function candidateMessage(res: Json): {
  text: string;
  thought: string;
  toolCalls: ToolCall[];
  finish: string | null;
} {
  const cand = ((res.candidates as Json[] | undefined) ?? [])[0] ?? {};
  const parts = ((cand.content as Json | undefined)?.parts as Part[] | undefined) ?? [];
  let text = '';
  let thought = '';
  const toolCalls: ToolCall[] = [];
  for (const p of parts) {
    if (typeof p.text === 'string') {
      if (p.thought) thought += p.text;
      else text += p.text;
    }
    const fc = p.functionCall as { name: string; args?: unknown; id?: string } | undefined;
    if (fc) {
      toolCalls.push({
        id: fc.id ?? `call_${toolCalls.length}_${Date.now().toString(36)}`,
        type: 'function',
        function: { name: fc.name, arguments: JSON.stringify(fc.args ?? {}) },
      });
    }
  }
  const reason = cand.finishReason ? String(cand.finishReason) : null;
  const finish = reason ? (toolCalls.length ? 'tool_calls' : (FINISH[reason] ?? 'stop')) : null;
  return { text, thought, toolCalls, finish };
}

/** Gemini response -> OpenAI chat response. */
export function geminiToOpenAIResponse(res: Json, model: string): ChatResponse {
  const { text, thought, toolCalls, finish } = candidateMessage(res);
  const message: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: text };
  if (thought) message.reasoning_content = thought;
  if (toolCalls.length) message.tool_calls = toolCalls;
  const out: ChatResponse = {
    id: String(res.responseId ?? chatId()),
    object: 'chat.completion',
    created: nowSeconds(),
    model,
    choices: [{ index: 0, message, finish_reason: finish ?? 'stop' }],
  };
  const usage = geminiUsage(res.usageMetadata);
  if (usage) out.usage = usageToOpenAI(usage);
  return out;
}

/** Gemini SSE stream (alt=sse) -> OpenAI chunks. */
export function geminiStreamToOpenAI(model: string): { onEvent(ev: SseEvent): ChatChunk[] } {
  const id = chatId();
  let first = true;
  let tools = 0;
  return {
    onEvent(ev) {
      if (!ev.data) return [];
      const res = JSON.parse(ev.data) as Json;
      if (res.error) throw new Error(String((res.error as Json).message ?? 'upstream stream error'));
      const { text, thought, toolCalls, finish } = candidateMessage(res);
      const delta: ChatChunk['choices'][number]['delta'] = {};
      if (first) {
        delta.role = 'assistant';
        first = false;
      }
      if (thought) delta.reasoning_content = thought;
      if (text) delta.content = text;
      if (toolCalls.length) delta.tool_calls = toolCalls.map((tc) => ({ ...tc, index: tools++ }));
      const c = chunk(id, model, delta, finish);
      const usage = geminiUsage(res.usageMetadata);
      if (finish && usage) c.usage = usageToOpenAI(usage);
      return [c];
    },
  };
}

/** Follows a native Gemini stream (passthrough). */
export function tallyGeminiEvent(t: StreamTally, ev: SseEvent): boolean {
  if (!ev.data) return false;
  const res = JSON.parse(ev.data) as Json;
  const u = geminiUsage(res.usageMetadata);
  if (u) t.usage = u;
  const { text, thought, toolCalls, finish } = candidateMessage(res);
  tallyText(t, text);
  tallyText(t, thought);
  if (finish) t.finishReason = finish;
  return text.length > 0 || thought.length > 0 || toolCalls.length > 0;
}

// ---------------------------------------------------------------------------------------------
// Serving /v1beta: Gemini requests in, OpenAI canonical in the middle.
// ---------------------------------------------------------------------------------------------

/** Gemini generateContent request -> OpenAI chat request. */
export function geminiToOpenAIRequest(body: Json, model: string, stream: boolean): ChatRequest {
  const messages: ChatMessage[] = [];
  const sys = (body.systemInstruction ?? body.system_instruction) as { parts?: Part[] } | undefined;
  const sysText = (sys?.parts ?? []).map((p) => String(p.text ?? '')).join('\n');
  if (sysText) messages.push({ role: 'system', content: sysText });
  let callSeq = 0;
  const pendingIds = new Map<string, string[]>();
  for (const c of (body.contents as { role?: string; parts?: Part[] }[] | undefined) ?? []) {
    const parts: ContentPart[] = [];
    const toolCalls: ToolCall[] = [];
    let thought = '';
    for (const p of c.parts ?? []) {
      if (typeof p.text === 'string' && p.thought) thought += p.text;
      else if (typeof p.text === 'string') parts.push({ type: 'text', text: p.text });
      const inline = p.inlineData as { mimeType: string; data: string } | undefined;
      if (inline)
        parts.push({ type: 'image_url', image_url: { url: `data:${inline.mimeType};base64,${inline.data}` } });
      const file = p.fileData as { fileUri: string } | undefined;
      if (file) parts.push({ type: 'image_url', image_url: { url: file.fileUri } });
      const fc = p.functionCall as { name: string; args?: unknown; id?: string } | undefined;
      if (fc) {
        const id = fc.id ?? `call_${callSeq++}`;
        pendingIds.set(fc.name, [...(pendingIds.get(fc.name) ?? []), id]);
        toolCalls.push({ id, type: 'function', function: { name: fc.name, arguments: JSON.stringify(fc.args ?? {}) } });
      }
      const fr = p.functionResponse as { name: string; response?: unknown; id?: string } | undefined;
      if (fr) {
        const queue = pendingIds.get(fr.name) ?? [];
        const id = fr.id ?? queue.shift() ?? `call_${callSeq++}`;
        messages.push({ role: 'tool', tool_call_id: id, name: fr.name, content: JSON.stringify(fr.response ?? {}) });
      }
    }
    const content = parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('') : parts;
    if (c.role === 'model') {
      const msg: ChatMessage = { role: 'assistant', content: parts.length ? content : null };
      if (thought) msg.reasoning_content = thought;
      if (toolCalls.length) msg.tool_calls = toolCalls;
      messages.push(msg);
    } else if (parts.length) messages.push({ role: 'user', content });
  }
  const req: ChatRequest = { model, messages };
  if (stream) req.stream = true;
  const gc = (body.generationConfig ?? body.generation_config ?? {}) as Json;
  if (typeof gc.temperature === 'number') req.temperature = gc.temperature;
  if (typeof gc.topP === 'number') req.top_p = gc.topP;
  if (typeof gc.maxOutputTokens === 'number') req.max_tokens = gc.maxOutputTokens;
  if (Array.isArray(gc.stopSequences)) req.stop = gc.stopSequences as string[];
  if (typeof gc.candidateCount === 'number') req.n = gc.candidateCount;
  if (typeof gc.presencePenalty === 'number') req.presence_penalty = gc.presencePenalty;
  if (typeof gc.frequencyPenalty === 'number') req.frequency_penalty = gc.frequencyPenalty;
  if (typeof gc.seed === 'number') req.seed = gc.seed;
  const format = geminiResponseFormat(gc);
  if (format) req.response_format = format;
  // Only the intent: reasoning_effort would be refused by upstream models that do not reason.
  setReasoning(req, geminiIntent(gc));
  // Function declarations only: Google Search, code execution and the like have no equivalent.
  const decls = ((body.tools as Json[] | undefined) ?? []).flatMap(
    (t) =>
      ((t.functionDeclarations ?? t.function_declarations) as
        | { name: string; description?: string; parameters?: Json; parametersJsonSchema?: Json }[]
        | undefined) ?? [],
  );
  const tools: ChatTool[] | undefined = decls.length
    ? decls.map((d) => ({
        type: 'function',
        function: {
          name: d.name,
          ...(d.description ? { description: d.description } : {}),
          parameters: geminiParameters(d),
        },
      }))
    : undefined;
  const { choice, tools: offered } = geminiToolChoice(body.toolConfig ?? body.tool_config, tools);
  if (offered?.length) {
    req.tools = offered;
    if (choice !== undefined) req.tool_choice = choice;
  } else if (choice === 'none') req.tool_choice = 'none';
  return req;
}

function geminiUsageOf(u: Usage | undefined): Json {
  const p = u?.promptTokens ?? 0;
  const c = u?.completionTokens ?? 0;
  return { promptTokenCount: p, candidatesTokenCount: c, totalTokenCount: p + c };
}

function geminiParts(
  text: string | null | undefined,
  toolCalls: Partial<ToolCall>[] | undefined,
  thought?: unknown,
): Part[] {
  const parts: Part[] = [];
  if (typeof thought === 'string' && thought) parts.push({ text: thought, thought: true });
  if (text) parts.push({ text });
  for (const tc of toolCalls ?? []) {
    if (tc.function?.name)
      parts.push({ functionCall: { name: tc.function.name, args: parseArgs(tc.function.arguments) } });
  }
  return parts;
}

/** OpenAI chat response -> Gemini response. */
export function openaiToGeminiResponse(res: ChatResponse, model: string, usage: Usage | undefined): Json {
  const choice = res.choices?.[0];
  return {
    candidates: [
      {
        content: {
          role: 'model',
          parts: geminiParts(choice?.message?.content, choice?.message?.tool_calls, choice?.message?.reasoning_content),
        },
        finishReason: TO_GEMINI_FINISH[String(choice?.finish_reason)] ?? 'STOP',
        index: 0,
      },
    ],
    usageMetadata: geminiUsageOf(usage),
    modelVersion: model,
    responseId: res.id,
  };
}

/**
 * OpenAI chunks -> Gemini SSE events. Tool call arguments arrive in pieces in OpenAI streams;
 * Gemini sends whole function calls, so they are collected and sent with the last event.
 */
export function openaiStreamToGemini(model: string): {
  onChunk(c: ChatChunk): string;
  end(usage: Usage | undefined): string;
} {
  const calls = new Map<number, { name: string; args: string }>();
  let finish = 'STOP';
  return {
    onChunk(c) {
      const choice = c.choices?.[0];
      if (!choice) return '';
      for (const tc of choice.delta?.tool_calls ?? []) {
        const i = tc.index ?? 0;
        const cur = calls.get(i) ?? { name: '', args: '' };
        if (tc.function?.name) cur.name = tc.function.name;
        if (tc.function?.arguments) cur.args += tc.function.arguments;
        calls.set(i, cur);
      }
      if (choice.finish_reason) finish = TO_GEMINI_FINISH[choice.finish_reason] ?? 'STOP';
      const parts = geminiParts(choice.delta?.content, undefined, choice.delta?.reasoning_content);
      if (!parts.length) return '';
      return sse(
        JSON.stringify({
          candidates: [{ content: { role: 'model', parts }, index: 0 }],
          modelVersion: model,
        }),
      );
    },
    end(usage) {
      const parts = [...calls.values()].map((c) => ({ functionCall: { name: c.name, args: parseArgs(c.args) } }));
      return sse(
        JSON.stringify({
          candidates: [
            {
              content: { role: 'model', parts: parts.length ? parts : [{ text: '' }] },
              finishReason: finish,
              index: 0,
            },
          ],
          usageMetadata: geminiUsageOf(usage),
          modelVersion: model,
        }),
      );
    },
  };
}

/** A Gemini client's body with a model-name suffix's thinkingConfig (its own thinkingConfig wins). */
export function geminiBodyWithSuffix(body: Json, meaning: SuffixMeaning): Json {
  const gc = { ...((body.generationConfig as Json | undefined) ?? {}) };
  if (gc.thinkingConfig !== undefined || gc.thinking_config !== undefined) return body;
  const max = typeof gc.maxOutputTokens === 'number' ? gc.maxOutputTokens : undefined;
  const thinking = geminiThinkingConfig(meaning.model, meaning.intent, max);
  if (thinking) gc.thinkingConfig = thinking;
  return { ...body, generationConfig: gc };
}

/** Gemini's error body. */
export function geminiError(status: number, message: string): Json {
  const s =
    status === 400
      ? 'INVALID_ARGUMENT'
      : status === 401
        ? 'UNAUTHENTICATED'
        : status === 403
          ? 'PERMISSION_DENIED'
          : status === 404
            ? 'NOT_FOUND'
            : status === 429
              ? 'RESOURCE_EXHAUSTED'
              : status === 503
                ? 'UNAVAILABLE'
                : 'INTERNAL';
  return { error: { code: status, message, status: s } };
}

/** The protocol module (registry.ts): Gemini channels, and clients of /v1beta generateContent. */
export const geminiProtocol: ClientProtocol = {
  framing: 'sse',
  request: (c, call) => openaiToGeminiRequest(c, call.model),
  toCanonical: geminiToOpenAIResponse,
  usage: (res) => geminiUsage(res.usageMetadata),
  streamDecoder(model) {
    const d = geminiStreamToOpenAI(model);
    return (e) => d.onEvent(e as SseEvent);
  },
  client: {
    canonical: geminiToOpenAIRequest,
    // The model is in the URL: the body goes as the client sent it.
    passthrough: (req) => req.raw ?? JSON.stringify(req.body),
    withSuffix: geminiBodyWithSuffix,
    passthroughStream: (_ctx, tally) => ({
      event: (e) => {
        const ev = e as SseEvent;
        const produced = tallyGeminiEvent(tally, ev);
        return { out: sse(ev.data), produced };
      },
      end: () => '',
    }),
    fromCanonical: openaiToGeminiResponse,
    chunkEncoder: (ctx) => openaiStreamToGemini(ctx.model),
    error: (status, message) => geminiError(status, message),
    streamError: (message) => sse(JSON.stringify(geminiError(500, message))),
  },
};
