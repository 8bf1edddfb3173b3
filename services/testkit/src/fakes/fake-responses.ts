/**
 * OpenAI's Responses API for the fake OpenAI provider (fake-provider.ts): POST /v1/responses
 * (whole, or streamed as typed SSE events with sequence numbers), GET /v1/responses/{id},
 * GET /v1/responses/{id}/input_items and DELETE /v1/responses/{id}. Responses created with
 * `store` (the default) are kept in memory, as the real API keeps them. POST /v1/responses/compact
 * (documented fields only, as the API takes them) answers a `response.compaction` with the user
 * messages and one compaction item; POST /v1/responses/input_tokens counts (the fake's prompt size).
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';

type Json = Record<string, unknown>;

export interface ResponsesBehaviour {
  reply: string;
  promptTokens: number;
  cachedTokens: number;
  toolCall?: { name: string; arguments: Record<string, unknown> };
}

/** Responses kept by each fake server (by its port), as each OpenAI account keeps its own. */
const stores = new Map<number, Map<string, { response: Json; input: unknown }>>();

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const notFound = (id: string) => ({
  error: { message: `Response with id '${id}' not found.`, type: 'invalid_request_error', param: null, code: null },
});

const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

/** Handles a /v1/responses path; `stream(events)` writes SSE text with the fake's delays. */
export function fakeResponses(
  b: ResponsesBehaviour,
  body: Json,
  path: string,
  method: string,
  res: ServerResponse,
  stream: (events: string[]) => Promise<void>,
): Promise<void> | undefined {
  const m = /\/responses(?:\/([^/]+)(\/input_items)?)?$/.exec(path);
  if (!m) return undefined;
  const stored = storeOf(res);
  const [, rid, items] = m;
  if (method === 'POST' && (rid === 'compact' || rid === 'input_tokens') && !items)
    return Promise.resolve(rid === 'compact' ? compact(b, body, res) : inputTokens(b, body, res));
  if (rid) return Promise.resolve(storedResponse(stored, rid, Boolean(items), method, res));
  if (method !== 'POST') return Promise.resolve(json(res, 405, notFound('')));
  const previous = body.previous_response_id;
  if (typeof previous === 'string' && !stored.has(previous))
    return Promise.resolve(
      json(res, 400, {
        error: {
          message: `Previous response with id '${previous}' not found.`,
          type: 'invalid_request_error',
          param: 'previous_response_id',
          code: 'previous_response_not_found',
        },
      }),
    );
  const made = createResponse(b, body);
  if (made.store) stored.set(made.ids.response, { response: made.done, input: body.input });
  if (body.stream !== true) return Promise.resolve(json(res, 200, made.done));
  return stream(responseEvents(b, made));
}

type StoredResponses = Map<string, { response: Json; input: unknown }>;

/** The responses kept by the fake server that `res` answers for. */
function storeOf(res: ServerResponse): StoredResponses {
  const port = res.socket?.localPort ?? 0;
  let stored = stores.get(port);
  if (!stored) {
    stored = new Map();
    stores.set(port, stored);
  }
  return stored;
}

/** GET /v1/responses/{id}, GET /v1/responses/{id}/input_items and DELETE /v1/responses/{id}. */
function storedResponse(stored: StoredResponses, rid: string, items: boolean, method: string, res: ServerResponse) {
  const kept = stored.get(rid);
  if (!kept) return json(res, 404, notFound(rid));
  if (method === 'DELETE') {
    stored.delete(rid);
    return json(res, 200, { id: rid, object: 'response.deleted', deleted: true });
  }
  if (items) {
    const input = typeof kept.input === 'string' ? [{ role: 'user', content: kept.input }] : kept.input;
    const data = ((input as Json[]) ?? []).map((it) => ({ id: id('msg'), type: 'message', ...it }));
    return json(res, 200, { object: 'list', data, has_more: false });
  }
  return json(res, 200, kept.response);
}

/** A response made by POST /v1/responses: its item ids, its output, and the response at each status. */
interface MadeResponse {
  ids: { response: string; reasoning: string; message: string; call: string };
  words: string[];
  tool: ResponsesBehaviour['toolCall'];
  reasoning: boolean;
  store: boolean;
  thought: string;
  output: Json[];
  done: Json;
  snapshot: (status: string, output: Json[], withUsage: boolean) => Json;
}

/** The response to a create: a reasoning item when reasoning is asked, then the tool call or the reply. */
function createResponse(b: ResponsesBehaviour, body: Json): MadeResponse {
  const words = b.reply.split(' ').map((w, i, all) => (i < all.length - 1 ? `${w} ` : w));
  const tool = b.toolCall && Array.isArray(body.tools) && body.tools.length > 0 ? b.toolCall : undefined;
  const store = body.store !== false;
  const reasoning = typeof (body.reasoning as Json | undefined)?.effort === 'string';
  const usage = {
    input_tokens: b.promptTokens,
    input_tokens_details: { cached_tokens: b.cachedTokens },
    output_tokens: words.length + (reasoning ? 3 : 0),
    output_tokens_details: { reasoning_tokens: reasoning ? 3 : 0 },
    total_tokens: b.promptTokens + words.length + (reasoning ? 3 : 0),
  };
  const ids = { response: id('resp'), reasoning: id('rs'), message: id('msg'), call: id('fc') };
  const snapshot = (status: string, output: Json[], withUsage: boolean): Json => ({
    id: ids.response,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: String(body.model ?? 'fake-model'),
    output,
    parallel_tool_calls: true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: (body.reasoning as Json | undefined)?.effort ?? null, summary: null },
    store,
    temperature: body.temperature ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: withUsage ? usage : null,
    metadata: {},
  });
  const thought = 'Thinking it over.';
  const output: Json[] = [];
  if (reasoning)
    output.push({ id: ids.reasoning, type: 'reasoning', summary: [{ type: 'summary_text', text: thought }] });
  if (tool)
    output.push({
      id: ids.call,
      type: 'function_call',
      status: 'completed',
      arguments: JSON.stringify(tool.arguments),
      call_id: 'call_fake',
      name: tool.name,
    });
  else
    output.push({
      id: ids.message,
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: b.reply, annotations: [], logprobs: [] }],
    });
  const done = snapshot('completed', output, true);
  return { ids, words, tool, reasoning, store, thought, output, done, snapshot };
}

/** The typed SSE events of a streamed create, with sequence numbers, ending in response.completed. */
function responseEvents(b: ResponsesBehaviour, made: MadeResponse): string[] {
  const { words, tool, reasoning, thought, output, done } = made;
  const response = made.snapshot;
  const rsId = made.ids.reasoning;
  const msgId = made.ids.message;
  const fcId = made.ids.call;
  let seq = 0;
  const ev = (type: string, o: Json) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...o })}\n\n`;
  const events = [
    ev('response.created', { response: response('in_progress', [], false) }),
    ev('response.in_progress', { response: response('in_progress', [], false) }),
  ];
  let index = 0;
  if (reasoning) {
    const at = { item_id: rsId, output_index: index };
    events.push(
      ev('response.output_item.added', { output_index: index, item: { id: rsId, type: 'reasoning', summary: [] } }),
    );
    events.push(
      ev('response.reasoning_summary_part.added', {
        ...at,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      }),
    );
    events.push(ev('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta: thought }));
    events.push(ev('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: thought }));
    events.push(
      ev('response.reasoning_summary_part.done', {
        ...at,
        summary_index: 0,
        part: { type: 'summary_text', text: thought },
      }),
    );
    events.push(ev('response.output_item.done', { output_index: index, item: output[index] }));
    index++;
  }
  if (tool) {
    const args = JSON.stringify(tool.arguments);
    const at = { item_id: fcId, output_index: index };
    events.push(
      ev('response.output_item.added', {
        output_index: index,
        item: {
          id: fcId,
          type: 'function_call',
          status: 'in_progress',
          arguments: '',
          call_id: 'call_fake',
          name: tool.name,
        },
      }),
    );
    events.push(ev('response.function_call_arguments.delta', { ...at, delta: args }));
    events.push(ev('response.function_call_arguments.done', { ...at, arguments: args }));
    events.push(ev('response.output_item.done', { output_index: index, item: output[index] }));
  } else {
    const at = { item_id: msgId, output_index: index, content_index: 0 };
    events.push(
      ev('response.output_item.added', {
        output_index: index,
        item: { id: msgId, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
      }),
    );
    events.push(
      ev('response.content_part.added', {
        ...at,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      }),
    );
    for (const w of words) events.push(ev('response.output_text.delta', { ...at, delta: w, logprobs: [] }));
    events.push(ev('response.output_text.done', { ...at, text: b.reply, logprobs: [] }));
    events.push(
      ev('response.content_part.done', {
        ...at,
        part: { type: 'output_text', text: b.reply, annotations: [], logprobs: [] },
      }),
    );
    events.push(ev('response.output_item.done', { output_index: index, item: output[index] }));
  }
  events.push(ev('response.completed', { response: done }));
  return events;
}

const COMPACT_FIELDS = new Set([
  'model',
  'input',
  'instructions',
  'previous_response_id',
  'parallel_tool_calls',
  'service_tier',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
]);

const invalid = (message: string, param: string | null, code: string) => ({
  error: { message, type: 'invalid_request_error', param, code },
});

/** POST /v1/responses/compact: the user messages kept, the rest as one encrypted compaction item. */
function compact(b: ResponsesBehaviour, body: Json, res: ServerResponse) {
  const unknown = Object.keys(body).find((k) => !COMPACT_FIELDS.has(k));
  if (unknown) return json(res, 400, invalid(`Unknown parameter: '${unknown}'.`, unknown, 'unknown_parameter'));
  if (typeof body.model !== 'string')
    return json(res, 400, invalid("Missing required parameter: 'model'.", 'model', 'missing_required_parameter'));
  const input =
    typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : ((body.input as Json[]) ?? []);
  const users = input
    .filter((it) => (it.type ?? 'message') === 'message' && it.role === 'user')
    .map((it) => ({ id: id('msg'), type: 'message', status: 'completed', role: 'user', content: it.content }));
  const output = 7;
  return json(res, 200, {
    id: id('resp'),
    object: 'response.compaction',
    created_at: Math.floor(Date.now() / 1000),
    output: [
      ...users,
      { id: id('cmp'), type: 'compaction', encrypted_content: `enc-${randomBytes(6).toString('hex')}` },
    ],
    usage: {
      input_tokens: b.promptTokens,
      input_tokens_details: { cached_tokens: b.cachedTokens },
      output_tokens: output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: b.promptTokens + output,
    },
  });
}

/** POST /v1/responses/input_tokens: the fake's prompt size as the count. */
function inputTokens(b: ResponsesBehaviour, body: Json, res: ServerResponse) {
  if (typeof body.model !== 'string')
    return json(res, 400, invalid("Missing required parameter: 'model'.", 'model', 'missing_required_parameter'));
  return json(res, 200, { object: 'response.input_tokens', input_tokens: b.promptTokens });
}
