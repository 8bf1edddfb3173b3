/**
 * OpenAI's Responses API (/v1/responses), both ways: served to clients (passed through to
 * channels that speak it, translated to chat for the others) and, as a protocol, decoded to the
 * canonical chat format. Streams are typed SSE events (response.created, response.output_item.added,
 * response.output_text.delta, ..., response.completed), each with a sequence_number.
 */
import { randomBytes } from 'node:crypto';
import { UpstreamFailure } from '../exchange/failure.ts';
import { CLAUDE_REASONING_FORMAT, type ReasoningDetail } from './claude.ts';
import {
  type ChatChunk,
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
  type ChatTool,
  type ContentPart,
  chatId,
  chunk,
  type Json,
  nowSeconds,
  openaiError,
  type StreamTally,
  type ToolCall,
  tallyText,
  type Usage,
  usageFromOpenAI,
  usageToOpenAI,
} from './openai.ts';
import { effortForBudget, openaiReasons, reasoningOf } from './reasoning.ts';
import { type SseEvent, sse } from './sse.ts';
import type { ChunkEncoder, ClientProtocol, StreamEncoder } from './wire.ts';

type Item = Json & { type?: string };

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

// ---------------------------------------------------------------------------------------------
// Requests: Responses -> chat (clients of /v1/responses on chat channels) and back.
// ---------------------------------------------------------------------------------------------

function textOfParts(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let s = '';
  for (const p of content as Item[]) if (typeof p.text === 'string') s += p.text;
  return s;
}

/** Responses content parts -> chat content parts (text and images; files become their name). */
function toChatContent(content: unknown): ChatMessage['content'] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: ContentPart[] = [];
  for (const p of content as Item[]) {
    if (p.type === 'input_text' || p.type === 'output_text' || p.type === 'text')
      parts.push({ type: 'text', text: String(p.text ?? '') });
    else if (p.type === 'input_image' && typeof p.image_url === 'string')
      parts.push({
        type: 'image_url',
        image_url: { url: p.image_url, ...(typeof p.detail === 'string' ? { detail: p.detail } : {}) },
      });
    else if (p.type === 'refusal') parts.push({ type: 'text', text: String(p.refusal ?? '') });
  }
  if (parts.every((p) => p.type === 'text')) return parts.map((p) => p.text).join('');
  return parts;
}

/** A Responses tool -> a chat tool (function tools only: built-in tools need an OpenAI channel). */
function toChatTool(t: Item): ChatTool | undefined {
  if (t.type !== 'function' || typeof t.name !== 'string') return undefined;
  const fn: ChatTool['function'] & { strict?: boolean } = { name: t.name };
  if (typeof t.description === 'string') fn.description = t.description;
  if (t.parameters && typeof t.parameters === 'object') fn.parameters = t.parameters as Json;
  if (typeof t.strict === 'boolean') fn.strict = t.strict;
  return { type: 'function', function: fn };
}

/** Marks Claude's redacted thinking kept in a reasoning item's encrypted_content. */
const REDACTED = 'redacted:';

/**
 * A reasoning item as chat reasoning: its summary (or reasoning text) and, when it went out from a
 * Claude answer, the signature kept in encrypted_content, so the thinking goes back signed.
 */
function reasoningFromItem(item: Item): { text: string; detail?: ReasoningDetail } {
  const text = textOfParts(item.summary) || textOfParts(item.content);
  const enc = typeof item.encrypted_content === 'string' ? item.encrypted_content : '';
  if (!enc) return { text };
  if (enc.startsWith(REDACTED))
    return {
      text,
      detail: { type: 'reasoning.encrypted', data: enc.slice(REDACTED.length), format: CLAUDE_REASONING_FORMAT },
    };
  return { text, detail: { type: 'reasoning.text', text, signature: enc, format: CLAUDE_REASONING_FORMAT } };
}

/** Responses create request -> chat request. */
export function responsesToChatRequest(body: Json): ChatRequest {
  const messages: ChatMessage[] = [];
  // Reasoning items belong to the assistant turn that follows them.
  let thinking: { text: string; details: ReasoningDetail[] } | undefined;
  const takeThinking = (m: ChatMessage) => {
    if (!thinking) return m;
    if (thinking.text) m.reasoning_content = thinking.text;
    if (thinking.details.length) m.reasoning_details = thinking.details.map((d, index) => ({ ...d, index }));
    thinking = undefined;
    return m;
  };
  if (typeof body.instructions === 'string' && body.instructions)
    messages.push({ role: 'system', content: body.instructions });
  const input = body.input;
  if (typeof input === 'string') messages.push({ role: 'user', content: input });
  else if (Array.isArray(input)) {
    for (const item of input as Item[]) {
      if (!item || typeof item !== 'object') continue;
      const type = item.type ?? 'message';
      if (type === 'message') {
        const role = item.role === 'developer' ? 'system' : String(item.role ?? 'user');
        const m: ChatMessage = { role, content: toChatContent(item.content) };
        messages.push(role === 'assistant' ? takeThinking(m) : m);
      } else if (type === 'reasoning') {
        const r = reasoningFromItem(item);
        thinking ??= { text: '', details: [] };
        thinking.text += r.text;
        if (r.detail) thinking.details.push(r.detail);
      } else if (type === 'function_call') {
        const call: ToolCall = {
          id: String(item.call_id ?? item.id ?? ''),
          type: 'function',
          function: { name: String(item.name ?? ''), arguments: String(item.arguments ?? '') },
        };
        // Consecutive calls belong to one assistant turn.
        const last = messages.at(-1);
        if (!thinking && last?.role === 'assistant' && last.tool_calls && !last.content) last.tool_calls.push(call);
        else messages.push(takeThinking({ role: 'assistant', content: null, tool_calls: [call] }));
      } else if (type === 'function_call_output') {
        const output = item.output;
        messages.push({
          role: 'tool',
          tool_call_id: String(item.call_id ?? ''),
          content: typeof output === 'string' ? output : textOfParts(output) || JSON.stringify(output ?? ''),
        });
      }
      // item_reference items carry nothing a chat upstream can use.
    }
  }
  const out: ChatRequest = { model: String(body.model ?? ''), messages };
  if (body.stream === true) out.stream = true;
  if (typeof body.max_output_tokens === 'number') out.max_tokens = body.max_output_tokens;
  if (typeof body.temperature === 'number') out.temperature = body.temperature;
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  if (typeof body.user === 'string') out.user = body.user;
  // OpenAI's cache routing key means the same on chat (Codex sends one per session).
  if (typeof body.prompt_cache_key === 'string') out.prompt_cache_key = body.prompt_cache_key;
  if (typeof body.prompt_cache_retention === 'string') out.prompt_cache_retention = body.prompt_cache_retention;
  if (typeof body.parallel_tool_calls === 'boolean') out.parallel_tool_calls = body.parallel_tool_calls;
  if (Array.isArray(body.tools)) {
    const tools = (body.tools as Item[]).map(toChatTool).filter((t): t is ChatTool => t !== undefined);
    if (tools.length) out.tools = tools;
  }
  const choice = body.tool_choice as Item | string | undefined;
  if (typeof choice === 'string') out.tool_choice = choice;
  else if (choice?.type === 'function' && typeof choice.name === 'string')
    out.tool_choice = { type: 'function', function: { name: choice.name } };
  const effort = (body.reasoning as Item | undefined)?.effort;
  if (typeof effort === 'string') out.reasoning_effort = effort;
  const format = ((body.text as Item | undefined)?.format ?? undefined) as Item | undefined;
  if (format?.type === 'json_schema')
    out.response_format = {
      type: 'json_schema',
      json_schema: {
        name: format.name ?? 'response',
        schema: format.schema ?? {},
        ...(typeof format.strict === 'boolean' ? { strict: format.strict } : {}),
        ...(typeof format.description === 'string' ? { description: format.description } : {}),
      },
    };
  else if (format?.type === 'json_object') out.response_format = { type: 'json_object' };
  return out;
}

/** Chat request -> Responses create request (chat clients on a channel that speaks only Responses). */
export function chatToResponsesRequest(c: ChatRequest, model: string, stream: boolean): Json {
  const input: Item[] = [];
  const instructions: string[] = [];
  for (const m of c.messages) {
    if (m.role === 'system' || m.role === 'developer') {
      instructions.push(textOfParts(m.content));
      continue;
    }
    if (m.role === 'tool') {
      input.push({ type: 'function_call_output', call_id: m.tool_call_id ?? '', output: textOfParts(m.content) });
      continue;
    }
    const parts = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content ?? []);
    const assistant = m.role === 'assistant';
    const content = parts
      .map((p) =>
        p.type === 'text'
          ? { type: assistant ? 'output_text' : 'input_text', text: p.text ?? '' }
          : p.type === 'image_url' && p.image_url
            ? { type: 'input_image', image_url: p.image_url.url, detail: p.image_url.detail ?? 'auto' }
            : undefined,
      )
      .filter((p) => p !== undefined);
    if (content.length) input.push({ type: 'message', role: m.role, content });
    for (const tc of m.tool_calls ?? [])
      input.push({ type: 'function_call', call_id: tc.id, name: tc.function.name, arguments: tc.function.arguments });
  }
  const out: Json = { model, input, stream };
  if (instructions.length) out.instructions = instructions.join('\n\n');
  const max = c.max_completion_tokens ?? c.max_tokens;
  if (typeof max === 'number') out.max_output_tokens = max;
  if (c.temperature !== undefined) out.temperature = c.temperature;
  if (c.top_p !== undefined) out.top_p = c.top_p;
  if (typeof c.prompt_cache_key === 'string') out.prompt_cache_key = c.prompt_cache_key;
  if (typeof c.prompt_cache_retention === 'string') out.prompt_cache_retention = c.prompt_cache_retention;
  if (c.tools?.length) out.tools = c.tools.map((t) => ({ type: 'function', ...t.function, strict: false }));
  if (typeof c.tool_choice === 'string') out.tool_choice = c.tool_choice;
  else if (c.tool_choice?.function?.name) out.tool_choice = { type: 'function', name: c.tool_choice.function.name };
  if (typeof c.reasoning_effort === 'string') out.reasoning = { effort: c.reasoning_effort };
  else {
    // A translated client's thinking (Claude, Gemini) as an effort, for the models that take one.
    const intent = reasoningOf(c);
    if (intent?.enabled && openaiReasons(model))
      out.reasoning = { effort: intent.effort ?? effortForBudget(intent.budget ?? 2048) };
  }
  // The relay keeps no conversation state for chat clients.
  out.store = false;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Answers: chat -> Responses objects and events, Responses -> chat.
// ---------------------------------------------------------------------------------------------

/** Relay usage -> the Responses usage object. */
export function responsesUsage(u: Usage, reasoningTokens = 0): Json {
  return {
    input_tokens: u.promptTokens,
    input_tokens_details: { cached_tokens: u.cachedTokens ?? 0 },
    output_tokens: u.completionTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: u.promptTokens + u.completionTokens,
  };
}

const INCOMPLETE: Record<string, string> = { length: 'max_output_tokens', content_filter: 'content_filter' };

/** A Responses object around its output items. */
function responseObject(
  id: string,
  model: string,
  createdAt: number,
  status: 'in_progress' | 'completed' | 'incomplete',
  output: Item[],
  finish: string | null,
  usage: Json | null,
): Json {
  const reason = finish ? INCOMPLETE[finish] : undefined;
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' && reason ? { reason } : null,
    instructions: null,
    max_output_tokens: null,
    model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    truncation: 'disabled',
    usage,
    metadata: {},
  };
}

const messageItem = (id: string, text: string, status: string): Item => ({
  id,
  type: 'message',
  status,
  role: 'assistant',
  content: text || status !== 'in_progress' ? [{ type: 'output_text', text, annotations: [], logprobs: [] }] : [],
});

const reasoningItem = (id: string, text: string, encrypted?: string): Item => ({
  id,
  type: 'reasoning',
  summary: text ? [{ type: 'summary_text', text }] : [],
  ...(encrypted ? { encrypted_content: encrypted } : {}),
});

/** A chat answer's reasoning detail as a reasoning item's encrypted_content (Claude's signature). */
const encryptedOf = (d: ReasoningDetail): string | undefined =>
  d.type === 'reasoning.text' && d.signature
    ? d.signature
    : d.type === 'reasoning.encrypted' && d.data
      ? REDACTED + d.data
      : undefined;

const callItem = (id: string, call: { id?: string; name: string; args: string }, status: string): Item => ({
  id,
  type: 'function_call',
  status,
  arguments: call.args,
  call_id: call.id || id,
  name: call.name,
});

/** A chat answer as a Responses object (nothing is stored: the id cannot be retrieved later). */
export function chatToResponsesResponse(res: ChatResponse, model: string, usage: Usage): Json {
  const choice = res.choices?.[0];
  const msg = choice?.message;
  const output: Item[] = [];
  const reasoning = msg?.reasoning_content;
  const details = (Array.isArray(msg?.reasoning_details) ? msg.reasoning_details : []) as ReasoningDetail[];
  const kept = details.filter((d) => encryptedOf(d));
  if (kept.length)
    // One item per signed block (Claude's interleaved thinking), each keeping its signature.
    for (const d of kept)
      output.push(reasoningItem(newId('rs'), d.type === 'reasoning.text' ? (d.text ?? '') : '', encryptedOf(d)));
  else if (typeof reasoning === 'string' && reasoning) output.push(reasoningItem(newId('rs'), reasoning));
  const text = typeof msg?.content === 'string' ? msg.content : '';
  if (text || !msg?.tool_calls?.length) output.push(messageItem(newId('msg'), text, 'completed'));
  for (const tc of msg?.tool_calls ?? [])
    output.push(callItem(newId('fc'), { id: tc.id, name: tc.function.name, args: tc.function.arguments }, 'completed'));
  const finish = choice?.finish_reason ?? 'stop';
  const status = INCOMPLETE[finish] ? 'incomplete' : 'completed';
  return responseObject(newId('resp'), model, nowSeconds(), status, output, finish, responsesUsage(usage));
}

/** The canonical (chat) view of a Responses object. */
export function responsesToChatResponse(res: Json, model: string): ChatResponse {
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  for (const item of (res.output as Item[] | undefined) ?? []) {
    if (item.type === 'message') text += textOfParts(item.content);
    else if (item.type === 'reasoning') reasoning += textOfParts(item.summary);
    else if (item.type === 'function_call')
      toolCalls.push({
        id: String(item.call_id ?? item.id),
        type: 'function',
        function: { name: String(item.name ?? ''), arguments: String(item.arguments ?? '') },
      });
  }
  const message: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: text };
  if (reasoning) message.reasoning_content = reasoning;
  if (toolCalls.length) message.tool_calls = toolCalls;
  const reason = (res.incomplete_details as Item | null | undefined)?.reason;
  const finish = toolCalls.length
    ? 'tool_calls'
    : reason === 'max_output_tokens'
      ? 'length'
      : reason === 'content_filter'
        ? 'content_filter'
        : 'stop';
  const out: ChatResponse = {
    id: String(res.id ?? chatId()),
    object: 'chat.completion',
    created: typeof res.created_at === 'number' ? res.created_at : nowSeconds(),
    model: String(res.model ?? model),
    choices: [{ index: 0, message, finish_reason: finish }],
  };
  const usage = usageFromOpenAI(res.usage);
  if (usage) out.usage = usageToOpenAI(usage);
  return out;
}

type StreamCall = { id?: string; name: string; args: string };

/** An output item a Responses stream encoder has open. */
interface StreamItem {
  index: number;
  id: string;
  kind: 'reasoning' | 'message' | 'call';
  text: string;
  call?: StreamCall | undefined;
  encrypted?: string;
}

/** What a Responses stream encoder keeps between chunks. */
interface ResponsesEncoding {
  id: string;
  model: string;
  createdAt: number;
  /** The next event's sequence_number. */
  seq: number;
  started: boolean;
  finish: string | null;
  /** Every item so far (an open one as a placeholder until it closes). */
  output: Item[];
  open: StreamItem[];
  reasoning: StreamItem | undefined;
  message: StreamItem | undefined;
  /** The chat tool call index -> its function_call item. */
  calls: Map<number, StreamItem>;
}

/** One stream event, numbered. */
function streamEvent(st: ResponsesEncoding, type: string, payload: Json): string {
  return sse(JSON.stringify({ type, sequence_number: st.seq++, ...payload }), type);
}

/** response.created and response.in_progress, once. */
function streamStart(st: ResponsesEncoding): string {
  if (st.started) return '';
  st.started = true;
  const r = responseObject(st.id, st.model, st.createdAt, 'in_progress', [], null, null);
  return (
    streamEvent(st, 'response.created', { response: r }) + streamEvent(st, 'response.in_progress', { response: r })
  );
}

function streamItemOf(o: StreamItem, status: string): Item {
  return o.kind === 'reasoning'
    ? reasoningItem(o.id, o.text, o.encrypted)
    : o.kind === 'message'
      ? messageItem(o.id, o.text, status)
      : callItem(o.id, o.call ?? { name: '', args: '' }, status);
}

/** Opens an item: output_item.added, and the first content (or summary) part of a message (or reasoning). */
function openStreamItem(
  st: ResponsesEncoding,
  kind: StreamItem['kind'],
  prefix: string,
  call?: StreamCall,
): [StreamItem, string] {
  const o: StreamItem = { index: st.output.length, id: newId(prefix), kind, text: '', call };
  st.output.push({});
  st.open.push(o);
  let out = streamEvent(st, 'response.output_item.added', {
    output_index: o.index,
    item: kind === 'reasoning' ? reasoningItem(o.id, '') : streamItemOf(o, 'in_progress'),
  });
  if (kind === 'message')
    out += streamEvent(st, 'response.content_part.added', {
      item_id: o.id,
      output_index: o.index,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
    });
  else if (kind === 'reasoning')
    out += streamEvent(st, 'response.reasoning_summary_part.added', {
      item_id: o.id,
      output_index: o.index,
      summary_index: 0,
      part: { type: 'summary_text', text: '' },
    });
  return [o, out];
}

/** Closes an item: its text's (or arguments') done events, then output_item.done with the whole item. */
function closeStreamItem(st: ResponsesEncoding, o: StreamItem): string {
  let out = '';
  const at = { item_id: o.id, output_index: o.index };
  if (o.kind === 'message') {
    out += streamEvent(st, 'response.output_text.done', { ...at, content_index: 0, text: o.text, logprobs: [] });
    out += streamEvent(st, 'response.content_part.done', {
      ...at,
      content_index: 0,
      part: { type: 'output_text', text: o.text, annotations: [], logprobs: [] },
    });
  } else if (o.kind === 'reasoning') {
    out += streamEvent(st, 'response.reasoning_summary_text.done', { ...at, summary_index: 0, text: o.text });
    out += streamEvent(st, 'response.reasoning_summary_part.done', {
      ...at,
      summary_index: 0,
      part: { type: 'summary_text', text: o.text },
    });
  } else {
    out += streamEvent(st, 'response.function_call_arguments.done', {
      ...at,
      name: o.call?.name ?? '',
      arguments: o.call?.args ?? '',
    });
  }
  const done = streamItemOf(o, 'completed');
  st.output[o.index] = done;
  out += streamEvent(st, 'response.output_item.done', { output_index: o.index, item: done });
  st.open.splice(st.open.indexOf(o), 1);
  return out;
}

/** Closes the item when it is still open ('' otherwise). */
function closeIfOpen(st: ResponsesEncoding, o: StreamItem | undefined): string {
  return o && st.open.includes(o) ? closeStreamItem(st, o) : '';
}

/** Reasoning text: into the reasoning item, opened on its first delta. */
function reasoningTextEvents(st: ResponsesEncoding, think: string): string {
  let out = '';
  if (!st.reasoning) {
    const [o, text] = openStreamItem(st, 'reasoning', 'rs');
    st.reasoning = o;
    out += text;
  }
  const r = st.reasoning;
  r.text += think;
  return (
    out +
    streamEvent(st, 'response.reasoning_summary_text.delta', {
      item_id: r.id,
      output_index: r.index,
      summary_index: 0,
      delta: think,
    })
  );
}

/** Signed or encrypted reasoning: closes the reasoning streamed so far with it, or is an item of its own. */
function reasoningDetailEvents(st: ResponsesEncoding, details: ReasoningDetail[]): string {
  let out = '';
  for (const detail of details) {
    const enc = encryptedOf(detail);
    if (!enc) continue;
    if (st.reasoning && st.open.includes(st.reasoning) && !st.reasoning.encrypted) {
      // The signature closes the thinking block streamed so far.
      st.reasoning.encrypted = enc;
      out += closeStreamItem(st, st.reasoning);
    } else {
      const [o, text] = openStreamItem(st, 'reasoning', 'rs');
      o.encrypted = enc;
      out += text + closeStreamItem(st, o);
    }
    // Interleaved thinking: the next thinking text opens a new item.
    st.reasoning = undefined;
  }
  return out;
}

/** Answer text: closes the reasoning, into the message item (opened on its first delta). */
function messageTextEvents(st: ResponsesEncoding, content: string): string {
  let out = closeIfOpen(st, st.reasoning);
  if (!st.message) {
    const [o, text] = openStreamItem(st, 'message', 'msg');
    st.message = o;
    out += text;
  }
  const m = st.message;
  m.text += content;
  return (
    out +
    streamEvent(st, 'response.output_text.delta', {
      item_id: m.id,
      output_index: m.index,
      content_index: 0,
      delta: content,
      logprobs: [],
    })
  );
}

/** A tool call's delta: its function_call item (opened first, closing the reasoning and message), its arguments. */
function toolCallEvents(st: ResponsesEncoding, tc: ToolCallDelta): string {
  let out = '';
  const i = tc.index ?? 0;
  let o = st.calls.get(i);
  if (!o) {
    out += closeIfOpen(st, st.reasoning);
    out += closeIfOpen(st, st.message);
    const [created, text] = openStreamItem(st, 'call', 'fc', { id: tc.id, name: tc.function?.name ?? '', args: '' });
    o = created;
    st.calls.set(i, o);
    out += text;
  }
  const call = o.call as StreamCall;
  if (tc.function?.name && !call.name) call.name = tc.function.name;
  const piece = tc.function?.arguments;
  if (piece) {
    call.args += piece;
    out += streamEvent(st, 'response.function_call_arguments.delta', {
      item_id: o.id,
      output_index: o.index,
      delta: piece,
    });
  }
  return out;
}

type ToolCallDelta = NonNullable<ChatChunk['choices'][number]['delta']['tool_calls']>[number];

/**
 * Canonical chunks -> Responses stream events. Items open as their first delta arrives
 * (reasoning, then the message, then function calls) and close, in order, at the end.
 */
export function chatStreamToResponses(model: string): ChunkEncoder {
  const st: ResponsesEncoding = {
    id: newId('resp'),
    model,
    createdAt: nowSeconds(),
    seq: 0,
    started: false,
    finish: null,
    output: [],
    open: [],
    reasoning: undefined,
    message: undefined,
    calls: new Map(),
  };
  return {
    onChunk(c: ChatChunk) {
      let out = streamStart(st);
      const choice = c.choices?.[0];
      if (!choice) return out;
      const d = choice.delta ?? {};
      const think = d.reasoning_content;
      if (typeof think === 'string' && think) out += reasoningTextEvents(st, think);
      out += reasoningDetailEvents(
        st,
        (Array.isArray(d.reasoning_details) ? d.reasoning_details : []) as ReasoningDetail[],
      );
      if (d.content) out += messageTextEvents(st, d.content);
      for (const tc of d.tool_calls ?? []) out += toolCallEvents(st, tc);
      if (choice.finish_reason) st.finish = choice.finish_reason;
      return out;
    },
    end(usage: Usage) {
      let out = streamStart(st);
      while (st.open.length) out += closeStreamItem(st, st.open[0] as StreamItem);
      if (st.output.length === 0) {
        // Nothing was produced: one empty message, as the API answers.
        const [o, text] = openStreamItem(st, 'message', 'msg');
        out += text + closeStreamItem(st, o);
      }
      const finish = st.finish;
      const status = finish && INCOMPLETE[finish] ? 'incomplete' : 'completed';
      const r = responseObject(st.id, model, st.createdAt, status, st.output, finish, responsesUsage(usage));
      return (
        out + streamEvent(st, status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: r })
      );
    },
  };
}

/** Responses stream events -> canonical chunks (chat clients on a channel that speaks only Responses). */
export function responsesStreamToChat(model: string): (item: unknown) => ChatChunk[] {
  let id = chatId();
  let first = true;
  const callIndex = new Map<number, number>();
  return (e) => {
    const ev = e as SseEvent;
    if (!ev.data || ev.data === '[DONE]') return [];
    const d = JSON.parse(ev.data) as Item;
    const type = ev.event || String(d.type ?? '');
    const delta: ChatChunk['choices'][number]['delta'] = {};
    if (first) {
      delta.role = 'assistant';
      first = false;
    }
    switch (type) {
      case 'response.created':
        id = String((d.response as Item | undefined)?.id ?? id);
        return [chunk(id, model, delta)];
      case 'response.output_text.delta':
        delta.content = String(d.delta ?? '');
        return [chunk(id, model, delta)];
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        delta.reasoning_content = String(d.delta ?? '');
        return [chunk(id, model, delta)];
      case 'response.output_item.added': {
        const item = d.item as Item | undefined;
        if (item?.type !== 'function_call') return [];
        const index = callIndex.size;
        callIndex.set(Number(d.output_index), index);
        delta.tool_calls = [
          {
            index,
            id: String(item.call_id ?? item.id),
            type: 'function',
            function: { name: String(item.name), arguments: '' },
          },
        ];
        return [chunk(id, model, delta)];
      }
      case 'response.function_call_arguments.delta':
        delta.tool_calls = [
          {
            index: callIndex.get(Number(d.output_index)) ?? 0,
            function: { arguments: String(d.delta ?? '') } as ToolCall['function'],
          },
        ];
        return [chunk(id, model, delta)];
      case 'response.completed':
      case 'response.incomplete': {
        const res = d.response as Json;
        const finish = responsesToChatResponse(res, model).choices[0]?.finish_reason ?? 'stop';
        const c = chunk(id, model, delta, callIndex.size ? 'tool_calls' : finish);
        const usage = usageFromOpenAI(res.usage);
        if (usage) c.usage = usageToOpenAI(usage);
        return [c];
      }
      case 'response.failed':
      case 'error': {
        const err = ((d.response as Item | undefined)?.error ?? d) as Item;
        throw new UpstreamFailure(500, String(err.message ?? 'upstream stream error'));
      }
      default:
        return [];
    }
  };
}

const LIFECYCLE = new Set([
  'response.created',
  'response.completed',
  'response.incomplete',
  'response.failed',
  'error',
]);

/** A Responses upstream to a Responses client: events pass as they came, followed for usage and the id. */
function responsesPassthroughStream(_ctx: unknown, tally: StreamTally): StreamEncoder {
  return {
    event: (e) => {
      const ev = e as SseEvent;
      if (!ev.data) return { out: '', produced: false };
      const out = ev.event ? sse(ev.data, ev.event) : sse(ev.data);
      const type = ev.event;
      // Only deltas, errors and the lifecycle events carry what the relay follows.
      if (type && !type.endsWith('.delta') && !LIFECYCLE.has(type)) return { out, produced: false };
      let d: Item;
      try {
        d = JSON.parse(ev.data) as Item;
      } catch {
        return { out, produced: false };
      }
      const t = type || String(d.type ?? '');
      if (t.endsWith('.delta')) {
        const piece = typeof d.delta === 'string' ? d.delta : '';
        tallyText(tally, piece);
        return { out, produced: piece.length > 0 };
      }
      if (t === 'error') throw new UpstreamFailure(500, String(d.message ?? 'upstream stream error'));
      const res = d.response as Item | undefined;
      if (t === 'response.created' && res?.store !== false && typeof res?.id === 'string') tally.stateId = res.id;
      const usage = usageFromOpenAI(res?.usage);
      if (usage) tally.usage = usage;
      return { out, produced: false };
    },
    end: () => '',
  };
}

export const responsesProtocol: ClientProtocol = {
  framing: 'sse',
  request: (c, call) => chatToResponsesRequest(c, call.model, call.stream),
  toCanonical: responsesToChatResponse,
  usage: (res) => usageFromOpenAI(res.usage),
  stateId: (res) => (res.store !== false && typeof res.id === 'string' ? res.id : undefined),
  streamDecoder: responsesStreamToChat,
  client: {
    canonical: (body) => responsesToChatRequest(body),
    // Responses has no stream_options: usage always comes with response.completed.
    passthrough: (req, call) =>
      req.raw && call.model === req.model ? req.raw : JSON.stringify({ ...req.body, model: call.model }),
    withSuffix: (body, meaning) => ({
      ...body,
      model: meaning.model,
      reasoning: { ...((body.reasoning as Json | undefined) ?? {}), effort: meaning.intent.effort ?? 'none' },
    }),
    passthroughStream: responsesPassthroughStream,
    fromCanonical: chatToResponsesResponse,
    chunkEncoder: (ctx) => chatStreamToResponses(ctx.model),
    error: openaiError,
    streamError: (message) =>
      sse(JSON.stringify({ type: 'error', code: 'server_error', message, param: null, sequence_number: 0 }), 'error'),
  },
};
