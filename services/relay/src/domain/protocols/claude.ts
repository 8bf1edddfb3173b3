/**
 * Anthropic's Messages API, both ways: the relay calls Claude channels with it (OpenAI requests
 * translated) and serves it on /v1/messages (translated to OpenAI for other channels).
 */

import {
  type ChatChunk,
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
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
  CLAUDE_MIN_BUDGET,
  CLAUDE5,
  claudeAdaptive,
  claudeBudgetFor,
  effortForBudget,
  type ReasoningIntent,
  reasoningOf,
  type SuffixMeaning,
  setReasoning,
} from './reasoning.ts';
import { responseFormatInstruction } from './schema.ts';
import { type SseEvent, sse } from './sse.ts';
import type { ClientProtocol } from './wire.ts';

type Block = Json & { type: string };

export const CLAUDE_DEFAULT_MAX_TOKENS = 4096;

const STOP_TO_FINISH: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};
const FINISH_TO_STOP: Record<string, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

/** Claude usage -> relay usage (cache reads and writes count as prompt tokens). */
export function claudeUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const o = u as {
    input_tokens?: number;
    output_tokens?: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
    cache_creation?: { ephemeral_5m_input_tokens?: number; ephemeral_1h_input_tokens?: number };
  };
  if (typeof o.input_tokens !== 'number' && typeof o.output_tokens !== 'number') return undefined;
  const cached = o.cache_read_input_tokens ?? 0;
  const written = o.cache_creation_input_tokens ?? 0;
  const usage: Usage = {
    promptTokens: (o.input_tokens ?? 0) + cached + written,
    completionTokens: o.output_tokens ?? 0,
  };
  if (cached) usage.cachedTokens = cached;
  if (written) usage.cacheCreationTokens = written;
  // The split by lifetime (`cache_creation`): one-hour writes cost more than 5-minute ones.
  const hour = o.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  if (written && hour) usage.cacheCreation1hTokens = Math.min(hour, written);
  return usage;
}

function imageBlock(url: string): Block {
  const d = parseDataUrl(url);
  if (d) return { type: 'image', source: { type: 'base64', media_type: d.mediaType, data: d.data } };
  return { type: 'image', source: { type: 'url', url } };
}

/**
 * Chat content as Claude blocks. Anthropic's `cache_control` (with its `ttl`) on a part, as chat
 * clients of Claude models send it (OpenRouter's convention), stays on its block; on the message
 * itself, it goes to the message's last block.
 */
function toClaudeContent(content: ChatMessage['content'], messageCache?: unknown): Block[] {
  const out: Block[] = [];
  if (typeof content === 'string') {
    if (content) out.push({ type: 'text', text: content });
  } else if (content) {
    for (const p of content) {
      const block =
        p.type === 'text'
          ? { type: 'text', text: p.text ?? '' }
          : p.type === 'image_url' && p.image_url
            ? imageBlock(p.image_url.url)
            : undefined;
      if (!block) continue;
      if (p.cache_control) block.cache_control = p.cache_control;
      out.push(block);
    }
  }
  const last = out.at(-1);
  if (messageCache && last && !last.cache_control) last.cache_control = messageCache;
  return out;
}

/** Whether chat content carries cache breakpoints (then Claude's system stays in blocks to keep them). */
const cached = (m: ChatMessage) =>
  m.cache_control !== undefined || (Array.isArray(m.content) && m.content.some((p) => p.cache_control));

function parseArgs(args: string | undefined): unknown {
  if (!args) return {};
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
}

/** OpenAI chat request -> Claude Messages request. */
export function openaiToClaudeRequest(req: ChatRequest, model: string): Json {
  const system: string[] = [];
  const systemBlocks: Block[] = [];
  const keepSystemBlocks = req.messages.some((m) => (m.role === 'system' || m.role === 'developer') && cached(m));
  const messages: { role: string; content: Block[] }[] = [];
  const push = (role: string, blocks: Block[]) => {
    const last = messages[messages.length - 1];
    // Claude wants alternating roles: merge consecutive messages of one role.
    if (last && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const m of req.messages) {
    if (m.role === 'system' || m.role === 'developer') {
      system.push(contentText(m.content));
      if (keepSystemBlocks) systemBlocks.push(...toClaudeContent(m.content, m.cache_control));
    } else if (m.role === 'tool') {
      const result: Block = { type: 'tool_result', tool_use_id: m.tool_call_id ?? '', content: contentText(m.content) };
      if (m.cache_control) result.cache_control = m.cache_control;
      push('user', [result]);
    } else if (m.role === 'assistant') {
      const blocks = [...thinkingBlocks(m), ...toClaudeContent(m.content, m.cache_control)];
      for (const tc of m.tool_calls ?? []) {
        blocks.push({ type: 'tool_use', id: tc.id, name: tc.function.name, input: parseArgs(tc.function.arguments) });
      }
      push('assistant', blocks);
    } else {
      push('user', toClaudeContent(m.content, m.cache_control));
    }
  }
  const out: Json = {
    model,
    messages,
    max_tokens: req.max_completion_tokens ?? req.max_tokens ?? CLAUDE_DEFAULT_MAX_TOKENS,
  };
  // Claude has no JSON output mode: OpenAI's response_format becomes an instruction.
  const json = responseFormatInstruction(req.response_format);
  if (json) {
    system.push(json);
    systemBlocks.push({ type: 'text', text: json });
  }
  if (keepSystemBlocks) out.system = systemBlocks;
  else if (system.length > 0) out.system = system.join('\n');
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.top_p = req.top_p;
  if (req.stop !== undefined) out.stop_sequences = Array.isArray(req.stop) ? req.stop : [req.stop];
  if (req.stream) out.stream = true;
  if (req.tools?.length) {
    out.tools = req.tools.map((t) => ({
      name: t.function.name,
      description: t.function.description,
      input_schema: t.function.parameters ?? { type: 'object', properties: {} },
      ...((t as { cache_control?: unknown }).cache_control
        ? { cache_control: (t as { cache_control?: unknown }).cache_control }
        : {}),
    }));
  }
  const tc = req.tool_choice;
  if (tc !== undefined) {
    if (tc === 'auto') out.tool_choice = { type: 'auto' };
    else if (tc === 'required') out.tool_choice = { type: 'any' };
    else if (tc === 'none') out.tool_choice = { type: 'none' };
    else if (typeof tc === 'object' && tc.function?.name) out.tool_choice = { type: 'tool', name: tc.function.name };
  }
  applyThinking(out, reasoningOf(req), req.max_completion_tokens ?? req.max_tokens);
  // Claude 5 refuses sampling settings other than the defaults (Anthropic's Sonnet 5 page): chat
  // clients send a temperature by habit.
  if (CLAUDE5.test(model)) {
    delete out.temperature;
    delete out.top_p;
  }
  return out;
}

/** The format of OpenRouter's chat `reasoning_details` for Claude's signed thinking. */
export const CLAUDE_REASONING_FORMAT = 'anthropic-claude-v1';

/** One reasoning detail of a chat message (OpenRouter's `reasoning_details` shape). */
export interface ReasoningDetail {
  type: 'reasoning.text' | 'reasoning.encrypted' | 'reasoning.summary';
  text?: string;
  signature?: string;
  data?: string;
  format?: string;
  index?: number;
}

/**
 * A chat assistant message's thinking as Claude blocks: `reasoning_details` with signatures
 * (a detail without text takes the message's `reasoning_content`, as a stream leaves it);
 * unsigned reasoning cannot be sent back to Claude and is left out.
 */
function thinkingBlocks(m: ChatMessage): Block[] {
  const details = Array.isArray(m.reasoning_details) ? (m.reasoning_details as ReasoningDetail[]) : [];
  const out: Block[] = [];
  const texts = details.filter((d) => d?.type === 'reasoning.text');
  for (const d of details) {
    if (d?.type === 'reasoning.text' && d.signature) {
      const text = d.text || (texts.length === 1 && typeof m.reasoning_content === 'string' ? m.reasoning_content : '');
      out.push({ type: 'thinking', thinking: text, signature: d.signature });
    } else if (d?.type === 'reasoning.encrypted' && d.data) out.push({ type: 'redacted_thinking', data: d.data });
  }
  return out;
}

/**
 * Claude's thinking for an intent, with what Anthropic requires beside it: budget_tokens at least
 * 1024 and below max_tokens (max_tokens is raised to budget + the answer room asked for), no
 * temperature other than 1, top_p only from 0.95, no top_k; `adaptive` thinking with an effort on
 * the models that have it. Left off when a forced tool choice is asked (Anthropic refuses both) or
 * when the last assistant turn calls tools without its signed thinking (Anthropic refuses that
 * too: the turn was made by a client that did not keep it).
 */
export function applyThinking(out: Json, intent: ReasoningIntent | undefined, askedMax: number | undefined): void {
  if (!intent?.enabled) return;
  const tc = out.tool_choice as { type?: string } | undefined;
  if (tc?.type === 'any' || tc?.type === 'tool') return;
  const messages = (out.messages as { role: string; content: unknown }[] | undefined) ?? [];
  const last = [...messages].reverse().find((m) => m.role === 'assistant');
  if (last && Array.isArray(last.content)) {
    const blocks = last.content as Block[];
    if (
      blocks.some((b) => b.type === 'tool_use') &&
      blocks[0]?.type !== 'thinking' &&
      blocks[0]?.type !== 'redacted_thinking'
    )
      return;
  }
  const model = String(out.model ?? '');
  delete out.top_k;
  if (claudeAdaptive(model, intent.effortSuffix)) {
    // Opus 4.7 and later omit the thinking text unless asked to summarize it (new-api does too).
    out.thinking = { type: 'adaptive', ...(/^claude-opus-4-6/.test(model) ? {} : { display: 'summarized' }) };
    out.output_config = { ...((out.output_config as Json | undefined) ?? {}), effort: intent.effort ?? 'high' };
    delete out.temperature;
    delete out.top_p;
    return;
  }
  let max = typeof out.max_tokens === 'number' ? out.max_tokens : CLAUDE_DEFAULT_MAX_TOKENS;
  let budget: number;
  if (intent.budget !== undefined) budget = intent.budget;
  else if (intent.budgetShare !== undefined) {
    // new-api's -thinking: max_tokens at least 1280, the budget a share of it.
    max = Math.max(max, 1280);
    budget = Math.floor(max * intent.budgetShare);
  } else budget = claudeBudgetFor(intent.effort);
  budget = Math.max(CLAUDE_MIN_BUDGET, budget);
  if (max <= budget) max = budget + (askedMax && askedMax > 0 ? askedMax : CLAUDE_DEFAULT_MAX_TOKENS);
  out.max_tokens = max;
  out.thinking = { type: 'enabled', budget_tokens: budget };
  delete out.temperature;
  if (typeof out.top_p === 'number' && out.top_p < 0.95) delete out.top_p;
}

/** A Claude client's thinking settings as an intent. */
export function claudeIntent(body: Json): ReasoningIntent | undefined {
  const t = body.thinking as { type?: string; budget_tokens?: number } | undefined;
  if (!t || typeof t !== 'object') return undefined;
  if (t.type === 'disabled') return { enabled: false };
  if (t.type === 'enabled') {
    const budget = typeof t.budget_tokens === 'number' ? t.budget_tokens : undefined;
    return { enabled: true, ...(budget !== undefined ? { budget, effort: effortForBudget(budget) } : {}) };
  }
  if (t.type === 'adaptive') {
    const effort = (body.output_config as { effort?: unknown } | undefined)?.effort;
    return { enabled: true, effort: typeof effort === 'string' ? effort : 'high' };
  }
  return undefined;
}

/** Claude thinking blocks of an answer as chat reasoning (text, and the details that keep signatures). */
function reasoningOfBlocks(blocks: Block[]): { text: string; details: ReasoningDetail[] } {
  let text = '';
  const details: ReasoningDetail[] = [];
  for (const b of blocks) {
    if (b.type === 'thinking') {
      text += String(b.thinking ?? '');
      details.push({
        type: 'reasoning.text',
        text: String(b.thinking ?? ''),
        signature: String(b.signature ?? ''),
        format: CLAUDE_REASONING_FORMAT,
        index: details.length,
      });
    } else if (b.type === 'redacted_thinking') {
      details.push({
        type: 'reasoning.encrypted',
        data: String(b.data ?? ''),
        format: CLAUDE_REASONING_FORMAT,
        index: details.length,
      });
    }
  }
  return { text, details };
}

/** A Claude client's body with a model-name suffix's thinking (passed through to a Claude channel). */
export function claudeBodyWithSuffix(body: Json, meaning: SuffixMeaning): Json {
  const out: Json = { ...body, model: meaning.model };
  // A client that set thinking itself keeps it (new-api does the same).
  if (out.thinking === undefined)
    applyThinking(out, meaning.intent, typeof body.max_tokens === 'number' ? body.max_tokens : undefined);
  return out;
}

/** Claude Messages response -> OpenAI chat response. */
export function claudeToOpenAIResponse(res: Json, model: string): ChatResponse {
  const blocks = (res.content as Block[] | undefined) ?? [];
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const b of blocks) {
    if (b.type === 'text') text += String(b.text ?? '');
    else if (b.type === 'tool_use') {
      toolCalls.push({
        id: String(b.id),
        type: 'function',
        function: { name: String(b.name), arguments: JSON.stringify(b.input ?? {}) },
      });
    }
  }
  const usage = claudeUsage(res.usage);
  const message: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: text };
  const thinking = reasoningOfBlocks(blocks);
  if (thinking.text) message.reasoning_content = thinking.text;
  if (thinking.details.length) message.reasoning_details = thinking.details;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const out: ChatResponse = {
    id: String(res.id ?? chatId()),
    object: 'chat.completion',
    created: nowSeconds(),
    model: String(res.model ?? model),
    choices: [{ index: 0, message, finish_reason: STOP_TO_FINISH[String(res.stop_reason)] ?? 'stop' }],
  };
  if (usage) out.usage = usageToOpenAI(usage);
  return out;
}

/** What a Claude stream decoder keeps between events. */
interface ClaudeDecoding {
  model: string;
  id: string;
  /** The usage of message_start (the prompt and its cache reads and writes). */
  input: Usage | undefined;
  /** Claude's content block index -> the OpenAI tool call index. */
  toolIndex: Map<number, number>;
  tools: number;
  /** The index of the next reasoning detail. */
  details: number;
}

/** content_block_start: a tool call opens, a redacted thinking block passes as an encrypted detail. */
function claudeBlockStart(st: ClaudeDecoding, d: Json): ChatChunk[] {
  const b = (d.content_block ?? {}) as Block;
  if (b.type === 'redacted_thinking')
    return [
      chunk(st.id, st.model, {
        reasoning_details: [
          {
            type: 'reasoning.encrypted',
            data: String(b.data ?? ''),
            format: CLAUDE_REASONING_FORMAT,
            index: st.details++,
          },
        ],
      }),
    ];
  if (b.type !== 'tool_use') return [];
  const i = st.tools++;
  st.toolIndex.set(Number(d.index), i);
  return [
    chunk(st.id, st.model, {
      tool_calls: [{ index: i, id: String(b.id), type: 'function', function: { name: String(b.name), arguments: '' } }],
    }),
  ];
}

/** content_block_delta: text, thinking, a thinking block's signature, or a tool call's arguments. */
function claudeBlockDelta(st: ClaudeDecoding, d: Json): ChatChunk[] {
  const delta = (d.delta ?? {}) as Json;
  if (delta.type === 'text_delta') return [chunk(st.id, st.model, { content: String(delta.text ?? '') })];
  if (delta.type === 'thinking_delta')
    return [chunk(st.id, st.model, { reasoning_content: String(delta.thinking ?? '') })];
  if (delta.type === 'signature_delta')
    // The signature closes a thinking block: the chat client keeps it to send the turn back.
    return [
      chunk(st.id, st.model, {
        reasoning_details: [
          {
            type: 'reasoning.text',
            text: '',
            signature: String(delta.signature ?? ''),
            format: CLAUDE_REASONING_FORMAT,
            index: st.details++,
          },
        ],
      }),
    ];
  if (delta.type === 'input_json_delta') {
    const i = st.toolIndex.get(Number(d.index)) ?? 0;
    return [
      chunk(st.id, st.model, {
        tool_calls: [{ index: i, function: { arguments: String(delta.partial_json ?? '') } as ToolCall['function'] }],
      }),
    ];
  }
  return [];
}

/** message_delta: the finish reason and the usage (message_start's prompt, this event's answer). */
function claudeMessageDelta(st: ClaudeDecoding, d: Json): ChatChunk {
  const delta = (d.delta ?? {}) as Json;
  const input = st.input;
  const out = claudeUsage(d.usage);
  const c = chunk(st.id, st.model, {}, STOP_TO_FINISH[String(delta.stop_reason)] ?? 'stop');
  const usage: Usage = {
    promptTokens: out?.promptTokens || input?.promptTokens || 0,
    completionTokens: out?.completionTokens ?? 0,
  };
  const cached = input?.cachedTokens ?? out?.cachedTokens;
  if (cached) usage.cachedTokens = cached;
  c.usage = usageToOpenAI(usage);
  // The relay bills cache writes apart; the usage chunk never reaches a client as is.
  const written = input?.cacheCreationTokens ?? out?.cacheCreationTokens;
  const hour = input?.cacheCreation1hTokens ?? out?.cacheCreation1hTokens;
  if (written)
    c.usage.prompt_tokens_details = {
      ...c.usage.prompt_tokens_details,
      cache_creation_tokens: written,
      ...(hour ? { cache_creation_1h_tokens: hour } : {}),
    };
  return c;
}

/** Claude stream events -> OpenAI chunks (one decoder per stream). */
export function claudeStreamToOpenAI(model: string): { onEvent(ev: SseEvent): ChatChunk[] } {
  const st: ClaudeDecoding = { model, id: chatId(), input: undefined, toolIndex: new Map(), tools: 0, details: 0 };
  return {
    onEvent(ev) {
      if (!ev.data || ev.data === '[DONE]') return [];
      const d = JSON.parse(ev.data) as Json;
      switch (d.type) {
        case 'message_start': {
          const msg = (d.message ?? {}) as Json;
          if (msg.id) st.id = String(msg.id);
          st.input = claudeUsage(msg.usage);
          return [chunk(st.id, model, { role: 'assistant', content: '' })];
        }
        case 'content_block_start':
          return claudeBlockStart(st, d);
        case 'content_block_delta':
          return claudeBlockDelta(st, d);
        case 'message_delta':
          return [claudeMessageDelta(st, d)];
        case 'error': {
          const err = (d.error ?? {}) as Json;
          throw new UpstreamStreamError(String(err.message ?? 'upstream stream error'));
        }
        default:
          return [];
      }
    },
  };
}

/** An error event in the middle of an upstream stream. */
export class UpstreamStreamError extends Error {}

/** Follows a native Claude stream (passthrough) for usage and produced text. */
export function tallyClaudeEvent(t: StreamTally, ev: SseEvent): boolean {
  if (!ev.data) return false;
  if (!ev.data.includes('usage') && !ev.data.includes('_delta')) return false;
  const d = JSON.parse(ev.data) as Json;
  if (d.type === 'message_start') {
    const u = claudeUsage((d.message as Json | undefined)?.usage);
    if (u) t.usage = { ...u, completionTokens: 0 };
    return false;
  }
  if (d.type === 'content_block_delta') {
    const delta = (d.delta ?? {}) as Json;
    tallyText(t, String(delta.text ?? delta.partial_json ?? delta.thinking ?? ''));
    return true;
  }
  if (d.type === 'message_delta') {
    const u = claudeUsage(d.usage);
    if (u) {
      t.usage = {
        ...(t.usage ?? { promptTokens: 0, completionTokens: 0 }),
        completionTokens: u.completionTokens,
      };
      if (u.promptTokens) t.usage.promptTokens = u.promptTokens;
      if (u.cachedTokens) t.usage.cachedTokens = u.cachedTokens;
      if (u.cacheCreationTokens) t.usage.cacheCreationTokens = u.cacheCreationTokens;
      if (u.cacheCreation1hTokens) t.usage.cacheCreation1hTokens = u.cacheCreation1hTokens;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Serving /v1/messages: Claude requests in, OpenAI canonical in the middle.
// ---------------------------------------------------------------------------------------------

function fromClaudeContent(content: unknown): {
  parts: ContentPart[];
  toolCalls: ToolCall[];
  toolResults: ChatMessage[];
  thinking: { text: string; details: ReasoningDetail[] };
} {
  const parts: ContentPart[] = [];
  const toolCalls: ToolCall[] = [];
  const toolResults: ChatMessage[] = [];
  const blocks = Array.isArray(content) ? (content as Block[]) : [];
  const thinking = reasoningOfBlocks(blocks);
  if (typeof content === 'string')
    return { parts: [{ type: 'text', text: content }], toolCalls, toolResults, thinking };
  for (const b of blocks) {
    if (b.type === 'text') parts.push({ type: 'text', text: String(b.text ?? '') });
    else if (b.type === 'image') {
      const src = (b.source ?? {}) as Json;
      const url =
        src.type === 'base64' ? `data:${String(src.media_type)};base64,${String(src.data)}` : String(src.url ?? '');
      parts.push({ type: 'image_url', image_url: { url } });
    } else if (b.type === 'tool_use') {
      toolCalls.push({
        id: String(b.id),
        type: 'function',
        function: { name: String(b.name), arguments: JSON.stringify(b.input ?? {}) },
      });
    } else if (b.type === 'tool_result') {
      const c = b.content;
      const text =
        typeof c === 'string' ? c : ((c as Block[] | undefined) ?? []).map((x) => String(x.text ?? '')).join('');
      toolResults.push({ role: 'tool', tool_call_id: String(b.tool_use_id), content: text });
    }
  }
  return { parts, toolCalls, toolResults, thinking };
}

const simplify = (parts: ContentPart[]): string | ContentPart[] =>
  parts.every((p) => p.type === 'text') ? parts.map((p) => p.text ?? '').join('') : parts;

/** Claude Messages request -> OpenAI chat request. */
export function claudeToOpenAIRequest(body: Json): ChatRequest {
  const messages: ChatMessage[] = [];
  const system = body.system;
  if (typeof system === 'string' && system) messages.push({ role: 'system', content: system });
  else if (Array.isArray(system)) {
    const text = (system as Block[]).map((b) => String(b.text ?? '')).join('\n');
    if (text) messages.push({ role: 'system', content: text });
  }
  for (const m of (body.messages as { role: string; content: unknown }[] | undefined) ?? []) {
    const { parts, toolCalls, toolResults, thinking } = fromClaudeContent(m.content);
    messages.push(...toolResults);
    if (m.role === 'assistant') {
      const msg: ChatMessage = { role: 'assistant', content: parts.length ? simplify(parts) : null };
      if (thinking.text) msg.reasoning_content = thinking.text;
      if (thinking.details.length) msg.reasoning_details = thinking.details;
      if (toolCalls.length) msg.tool_calls = toolCalls;
      messages.push(msg);
    } else if (parts.length > 0 || toolResults.length === 0) {
      messages.push({ role: m.role, content: simplify(parts) });
    }
  }
  const req: ChatRequest = { model: String(body.model ?? ''), messages };
  if (typeof body.max_tokens === 'number') req.max_tokens = body.max_tokens;
  if (typeof body.temperature === 'number') req.temperature = body.temperature;
  if (typeof body.top_p === 'number') req.top_p = body.top_p;
  if (Array.isArray(body.stop_sequences)) req.stop = body.stop_sequences as string[];
  if (body.stream === true) req.stream = true;
  const tools = body.tools as { name: string; description?: string; input_schema?: Json }[] | undefined;
  if (tools?.length) {
    req.tools = tools.map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        parameters: t.input_schema ?? {},
      },
    }));
  }
  const tc = body.tool_choice as { type?: string; name?: string } | undefined;
  if (tc?.type === 'auto') req.tool_choice = 'auto';
  else if (tc?.type === 'any') req.tool_choice = 'required';
  else if (tc?.type === 'none') req.tool_choice = 'none';
  else if (tc?.type === 'tool' && tc.name) req.tool_choice = { type: 'function', function: { name: tc.name } };
  // Only the intent: reasoning_effort would be refused by upstream models that do not reason.
  setReasoning(req, claudeIntent(body));
  return req;
}

function claudeUsageOf(u: Usage | undefined): Json {
  return {
    input_tokens: (u?.promptTokens ?? 0) - (u?.cachedTokens ?? 0) - (u?.cacheCreationTokens ?? 0),
    output_tokens: u?.completionTokens ?? 0,
    ...(u?.cachedTokens ? { cache_read_input_tokens: u.cachedTokens } : {}),
    ...(u?.cacheCreationTokens ? { cache_creation_input_tokens: u.cacheCreationTokens } : {}),
  };
}

/** OpenAI chat response -> Claude Messages response. */
export function openaiToClaudeResponse(res: ChatResponse, model: string, usage: Usage | undefined): Json {
  const choice = res.choices?.[0];
  const content: Block[] = [];
  const msg = choice?.message;
  if (msg) {
    const signed = thinkingBlocks(msg as ChatMessage);
    if (signed.length) content.push(...signed);
    else if (typeof msg.reasoning_content === 'string' && msg.reasoning_content)
      // Reasoning from another provider carries no Anthropic signature.
      content.push({ type: 'thinking', thinking: msg.reasoning_content, signature: '' });
  }
  const text = choice?.message?.content;
  if (text) content.push({ type: 'text', text });
  for (const tc of choice?.message?.tool_calls ?? []) {
    content.push({ type: 'tool_use', id: tc.id, name: tc.function.name, input: parseArgs(tc.function.arguments) });
  }
  return {
    id: res.id?.startsWith('msg_') ? res.id : `msg_${res.id ?? chatId()}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: FINISH_TO_STOP[String(choice?.finish_reason)] ?? 'end_turn',
    stop_sequence: null,
    usage: claudeUsageOf(usage),
  };
}

/** The content block a Claude stream encoder has open. */
interface OpenBlock {
  index: number;
  kind: 'text' | 'tool' | 'thinking';
  toolIndex?: number;
  signed?: boolean;
}

/** What a Claude stream encoder keeps between chunks. */
interface ClaudeEncoding {
  model: string;
  promptTokens: number;
  started: boolean;
  open: OpenBlock | undefined;
  blockIndex: number;
  finish: string;
}

/** One Claude stream event (its type both in the body and as the SSE event name). */
function claudeEvent(type: string, body: Json = {}): string {
  return sse(JSON.stringify({ type, ...body }), type);
}

function messageStart(st: ClaudeEncoding, id: string): string {
  st.started = true;
  return claudeEvent('message_start', {
    message: {
      id: `msg_${id}`,
      type: 'message',
      role: 'assistant',
      model: st.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: st.promptTokens, output_tokens: 0 },
    },
  });
}

function blockDelta(st: ClaudeEncoding, delta: Json): string {
  return claudeEvent('content_block_delta', { index: st.open?.index ?? 0, delta });
}

/** Closes the open block; a thinking block ends with its signature (empty when the upstream gave none). */
function closeBlock(st: ClaudeEncoding): string {
  const open = st.open;
  if (!open) return '';
  const pre =
    open.kind === 'thinking' && !open.signed ? blockDelta(st, { type: 'signature_delta', signature: '' }) : '';
  st.open = undefined;
  return pre + claudeEvent('content_block_stop', { index: open.index });
}

/** Closes the open block and opens the next (`content`: its content_block, given its index). */
function openBlock(st: ClaudeEncoding, block: Omit<OpenBlock, 'index'>, content: (index: number) => Json): string {
  const out = closeBlock(st);
  const open: OpenBlock = { index: st.blockIndex++, ...block };
  st.open = open;
  return out + claudeEvent('content_block_start', { index: open.index, content_block: content(open.index) });
}

/** Reasoning text: into the open thinking block, or a new one. */
function thinkingEvents(st: ClaudeEncoding, think: string): string {
  let out = '';
  if (st.open?.kind !== 'thinking')
    out += openBlock(st, { kind: 'thinking' }, () => ({ type: 'thinking', thinking: '', signature: '' }));
  return out + blockDelta(st, { type: 'thinking_delta', thinking: think });
}

/** Reasoning details: a signature closes the thinking block, encrypted reasoning is a redacted block. */
function detailEvents(st: ClaudeEncoding, details: ReasoningDetail[]): string {
  let out = '';
  for (const detail of details) {
    if (detail?.type === 'reasoning.text' && detail.signature && st.open?.kind === 'thinking') {
      out += blockDelta(st, { type: 'signature_delta', signature: detail.signature });
      st.open.signed = true;
      out += closeBlock(st);
    } else if (detail?.type === 'reasoning.encrypted' && detail.data) {
      out += closeBlock(st);
      const index = st.blockIndex++;
      out += claudeEvent('content_block_start', {
        index,
        content_block: { type: 'redacted_thinking', data: detail.data },
      });
      out += claudeEvent('content_block_stop', { index });
    }
  }
  return out;
}

function textEvents(st: ClaudeEncoding, text: string): string {
  let out = '';
  if (st.open?.kind !== 'text') out += openBlock(st, { kind: 'text' }, () => ({ type: 'text', text: '' }));
  return out + blockDelta(st, { type: 'text_delta', text });
}

/** A tool call's delta: a new tool_use block when it names a new call, then its arguments. */
function toolEvents(st: ClaudeEncoding, tc: NonNullable<ChatChunk['choices'][number]['delta']['tool_calls']>[number]) {
  let out = '';
  if (tc.id || st.open?.kind !== 'tool' || (tc.index !== undefined && tc.index !== st.open.toolIndex))
    out += openBlock(st, { kind: 'tool', ...(tc.index !== undefined ? { toolIndex: tc.index } : {}) }, (index) => ({
      type: 'tool_use',
      id: tc.id ?? `toolu_${index}`,
      name: tc.function?.name ?? '',
      input: {},
    }));
  if (tc.function?.arguments) out += blockDelta(st, { type: 'input_json_delta', partial_json: tc.function.arguments });
  return out;
}

/** OpenAI chunks -> Claude stream events (SSE text), with the closing events at end(). */
export function openaiStreamToClaude(
  model: string,
  promptTokens: number,
): {
  onChunk(c: ChatChunk): string;
  end(usage: Usage | undefined): string;
} {
  const st: ClaudeEncoding = {
    model,
    promptTokens,
    started: false,
    open: undefined,
    blockIndex: 0,
    finish: 'end_turn',
  };
  return {
    onChunk(c) {
      let out = st.started ? '' : messageStart(st, c.id ?? chatId());
      const choice = c.choices?.[0];
      if (!choice) return out;
      const d = choice.delta ?? {};
      const think = d.reasoning_content;
      if (typeof think === 'string' && think) out += thinkingEvents(st, think);
      out += detailEvents(st, (Array.isArray(d.reasoning_details) ? d.reasoning_details : []) as ReasoningDetail[]);
      if (d.content) out += textEvents(st, d.content);
      for (const tc of d.tool_calls ?? []) out += toolEvents(st, tc);
      if (choice.finish_reason) st.finish = FINISH_TO_STOP[choice.finish_reason] ?? 'end_turn';
      return out;
    },
    end(usage) {
      let out = st.started ? '' : messageStart(st, chatId());
      out += closeBlock(st);
      out += claudeEvent('message_delta', {
        delta: { stop_reason: st.finish, stop_sequence: null },
        usage: claudeUsageOf(usage),
      });
      out += claudeEvent('message_stop');
      return out;
    },
  };
}

/** Claude's error body. */
export function claudeError(status: number, message: string): Json {
  const type =
    status === 401
      ? 'authentication_error'
      : status === 403
        ? 'permission_error'
        : status === 404
          ? 'not_found_error'
          : status === 429
            ? 'rate_limit_error'
            : status >= 500
              ? 'api_error'
              : 'invalid_request_error';
  return { type: 'error', error: { type, message } };
}

/** The protocol module (registry.ts): Claude channels, and clients of /v1/messages. */
export const claudeProtocol: ClientProtocol = {
  framing: 'sse',
  request: (c, call) => openaiToClaudeRequest({ ...c, stream: call.stream }, call.model),
  toCanonical: claudeToOpenAIResponse,
  // Claude's own usage keeps what the OpenAI shape has no field for (cache writes).
  usage: (res) => claudeUsage(res.usage),
  streamDecoder(model) {
    const d = claudeStreamToOpenAI(model);
    return (e) => d.onEvent(e as SseEvent);
  },
  client: {
    canonical: (body) => claudeToOpenAIRequest(body),
    passthrough: (req, call) =>
      req.raw && call.model === req.model ? req.raw : JSON.stringify({ ...req.body, model: call.model }),
    withSuffix: claudeBodyWithSuffix,
    passthroughStream: (_ctx, tally) => ({
      event: (e) => {
        const ev = e as SseEvent;
        const produced = tallyClaudeEvent(tally, ev);
        return { out: ev.event ? sse(ev.data, ev.event) : sse(ev.data), produced };
      },
      end: () => '',
    }),
    fromCanonical: openaiToClaudeResponse,
    chunkEncoder: (ctx) => openaiStreamToClaude(ctx.model, 0),
    error: (status, message) => claudeError(status, message),
    streamError: (message) => sse(JSON.stringify(claudeError(500, message)), 'error'),
    // Betas (context_management, interleaved thinking...) and the API version the client chose.
    forwardHeaders: ['anthropic-version', 'anthropic-beta'],
  },
};
