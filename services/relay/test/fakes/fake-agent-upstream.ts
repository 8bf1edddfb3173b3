/**
 * A scripted upstream for coding agents (Codex CLI, Claude Code) run through the relay: a real
 * HTTP server speaking OpenAI Responses and chat completions, Anthropic Messages or Gemini
 * generateContent, whole and streamed (SSE), in each provider's wire format.
 *
 * The script, per request:
 * - tools offered and no tool result yet: a plan in text, then a call to the shell tool the
 *   agent offered (arguments fitted to that tool's schema) running `command`;
 * - a tool result in the request: the final text (the tool round trip is done);
 * - no tools (an agent's side request, e.g. a title): a short text.
 * Each answer reports fixed usage per step; `requests` keeps what came in and what was reported,
 * so a test can price every call the agent made.
 *
 * @example
 * const up = await startAgentUpstream({ kind: 'anthropic', key: 'up-key', command: 'cat note.txt', final: 'Done.' });
 * // channel base_url: up.url; after the run: up.requests.map((r) => r.step)
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type AgentWire = 'openai' | 'anthropic' | 'gemini';
export type AgentStep = 'tool' | 'final' | 'side';
export interface StepUsage {
  input: number;
  output: number;
}

/** Usage reported per step; distinct numbers keep the log rows apart. */
export const AGENT_USAGE: Record<AgentStep, StepUsage> = {
  tool: { input: 310, output: 41 },
  final: { input: 420, output: 17 },
  side: { input: 53, output: 5 },
};
export const AGENT_PLAN = 'Plan: run the command, read its output, then answer.';
export const SIDE_TEXT = 'Agent session';

export interface AgentExchange {
  /** The model asked for (from the body, or Gemini's path). */
  model: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  step: AgentStep;
  /** The tool the fake called (tool step). */
  tool?: string;
  /** Tool results the request carried, as text. */
  toolResults: string[];
  usage: StepUsage;
}

export interface AgentUpstream {
  url: string;
  requests: AgentExchange[];
  close(): Promise<void>;
}

export interface AgentUpstreamOptions {
  kind: AgentWire;
  key: string;
  /** The shell command the tool call runs. */
  command: string;
  /** The final answer once the tool result came back. */
  final: string;
}

type Json = Record<string, unknown>;
interface Tool {
  name: string;
  schema: Json;
}
interface Answer {
  step: AgentStep;
  text: string;
  call?: { id: string; name: string; args: Json };
  usage: StepUsage;
}

export async function startAgentUpstream(o: AgentUpstreamOptions): Promise<AgentUpstream> {
  const requests: AgentExchange[] = [];
  let calls = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      let body: Json = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json;
      } catch {
        return send(res, 400, { error: { message: 'invalid JSON body' } });
      }
      if (keyOf(o.kind, req, url) !== o.key) return send(res, 401, errorBody(o.kind, 401, 'invalid api key'));
      const route = routeOf(o.kind, req.method ?? '', url.pathname);
      if (!route) return send(res, 404, errorBody(o.kind, 404, `no route ${req.method} ${url.pathname}`));
      if (route.count) return send(res, 200, { input_tokens: AGENT_USAGE.side.input });
      const invalid = invalidRequest(route.wire, req, body);
      if (invalid) return send(res, 400, errorBody(o.kind, 400, invalid));
      const tools = toolsOf(body);
      const toolResults = resultsOf(body);
      const shell = pickShell(tools);
      const step: AgentStep = toolResults.length > 0 ? 'final' : shell ? 'tool' : 'side';
      calls++;
      const answer: Answer = {
        step,
        text: step === 'tool' ? AGENT_PLAN : step === 'final' ? o.final : SIDE_TEXT,
        usage: AGENT_USAGE[step],
        ...(step === 'tool' && shell
          ? { call: { id: `${idPrefix[route.wire]}${calls}`, name: shell.name, args: argsFor(shell, o.command) } }
          : {}),
      };
      requests.push({
        model: String(body.model ?? route.model ?? ''),
        path: url.pathname + url.search,
        headers: req.headers,
        body,
        step,
        ...(answer.call ? { tool: answer.call.name } : {}),
        toolResults,
        usage: answer.usage,
      });
      const model = String(body.model ?? route.model ?? 'fake');
      const stream = route.stream || body.stream === true;
      const writer = WRITERS[route.wire];
      if (!stream) return send(res, 200, writer.whole(answer, model));
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const includeUsage = route.wire !== 'chat' || (body.stream_options as Json | undefined)?.include_usage === true;
      for (const ev of writer.events(answer, model, includeUsage)) {
        const type = route.wire === 'responses' || route.wire === 'messages' ? `event: ${ev.type}\n` : '';
        res.write(`${type}data: ${JSON.stringify(ev)}\n\n`);
      }
      if (route.wire === 'chat') res.write('data: [DONE]\n\n');
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

type WireName = 'responses' | 'chat' | 'messages' | 'gemini';
/** Tool call ids as each API spells them (Gemini has none on the wire; its calls pair by name). */
const idPrefix: Record<WireName, string> = {
  responses: 'call_agent_',
  chat: 'call_agent_',
  messages: 'toolu_agent_',
  gemini: 'agent_',
};
interface Route {
  wire: WireName;
  stream?: boolean;
  count?: boolean;
  model?: string;
}

function routeOf(kind: AgentWire, method: string, path: string): Route | undefined {
  if (method !== 'POST') return undefined;
  if (kind === 'openai' && path === '/v1/responses') return { wire: 'responses' };
  if (kind === 'openai' && path === '/v1/chat/completions') return { wire: 'chat' };
  if (kind === 'anthropic' && path === '/v1/messages') return { wire: 'messages' };
  if (kind === 'anthropic' && path === '/v1/messages/count_tokens') return { wire: 'messages', count: true };
  const m =
    kind === 'gemini' ? /^\/v1(?:beta)?\/models\/([^:]+):(generateContent|streamGenerateContent)$/.exec(path) : null;
  if (m) return { wire: 'gemini', model: m[1], stream: m[2] === 'streamGenerateContent' };
  return undefined;
}

function keyOf(kind: AgentWire, req: IncomingMessage, url: URL): string {
  const h = req.headers;
  if (kind === 'anthropic') return String(h['x-api-key'] ?? '');
  if (kind === 'gemini') return String(h['x-goog-api-key'] ?? url.searchParams.get('key') ?? '');
  return String(h.authorization ?? '').replace(/^Bearer /, '');
}

function errorBody(kind: AgentWire, status: number, message: string): Json {
  if (kind === 'anthropic') return { type: 'error', error: { type: 'invalid_request_error', message } };
  if (kind === 'gemini') return { error: { code: status, message, status: 'INVALID_ARGUMENT' } };
  return { error: { message, type: 'invalid_request_error', param: null, code: null } };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Function tools offered, in any of the four request formats. */
function toolsOf(body: Json): Tool[] {
  const out: Tool[] = [];
  for (const t of (body.tools as Json[] | undefined) ?? []) {
    const fn = t.function as Json | undefined;
    if (fn?.name) out.push({ name: String(fn.name), schema: (fn.parameters as Json) ?? {} });
    else if (Array.isArray(t.functionDeclarations))
      for (const d of t.functionDeclarations as Json[])
        out.push({
          name: String(d.name),
          schema: ((d.parametersJsonSchema ?? d.parameters_json_schema ?? d.parameters) as Json) ?? {},
        });
    else if (typeof t.name === 'string' && (t.type === undefined || t.type === 'function' || t.type === 'custom'))
      out.push({ name: t.name, schema: ((t.parameters ?? t.input_schema) as Json) ?? {} });
  }
  return out;
}

/** Codex's shell tools and Claude Code's Bash, in the order an agent's choice is preferred. */
const SHELLS = ['Bash', 'shell_command', 'exec_command', 'shell', 'local_shell'];
function pickShell(tools: Tool[]): Tool | undefined {
  for (const name of SHELLS) {
    const t = tools.find((x) => x.name === name);
    if (t) return t;
  }
  return undefined;
}

/** Arguments fitted to the tool's schema: `cmd` or `command` as a string or an argv array. */
function argsFor(tool: Tool, command: string): Json {
  const props = (tool.schema.properties as Record<string, Json> | undefined) ?? {};
  if (props.cmd) return { cmd: command };
  const c = props.command;
  const type = String(c?.type ?? '').toLowerCase();
  if (type === 'array') return { command: ['bash', '-lc', command] };
  const args: Json = { command };
  if (props.description) args.description = 'Run the command';
  return args;
}

/**
 * What the provider would refuse with a 400: a missing required field, or (the check that matters
 * for a tool round trip) a tool result whose call is not in the request, by id or (Gemini) name.
 */
function invalidRequest(wire: WireName, req: IncomingMessage, body: Json): string | undefined {
  const calls = new Set<string>();
  const results: string[] = [];
  if (wire === 'responses') {
    if (body.input === undefined) return "Missing required parameter: 'input'.";
    for (const it of Array.isArray(body.input) ? (body.input as Json[]) : []) {
      if (it.type === 'function_call' || it.type === 'custom_tool_call') calls.add(String(it.call_id));
      if (it.type === 'function_call_output' || it.type === 'custom_tool_call_output') results.push(String(it.call_id));
    }
  } else if (wire === 'chat') {
    if (!Array.isArray(body.messages)) return "Missing required parameter: 'messages'.";
    for (const m of body.messages as Json[]) {
      for (const c of (m.tool_calls as Json[] | undefined) ?? []) calls.add(String(c.id));
      if (m.role === 'tool') results.push(String(m.tool_call_id));
    }
  } else if (wire === 'messages') {
    if (!req.headers['anthropic-version']) return 'anthropic-version: header is required';
    if (!Array.isArray(body.messages) || typeof body.max_tokens !== 'number')
      return 'messages and max_tokens: Field required';
    for (const m of body.messages as Json[])
      for (const b of Array.isArray(m.content) ? (m.content as Json[]) : []) {
        if (b.type === 'tool_use') calls.add(String(b.id));
        if (b.type === 'tool_result') results.push(String(b.tool_use_id));
      }
  } else {
    if (!Array.isArray(body.contents)) return '* GenerateContentRequest.contents: contents is not specified';
    for (const c of body.contents as Json[])
      for (const p of (c.parts as Json[] | undefined) ?? []) {
        if (p.functionCall) calls.add(String((p.functionCall as Json).name));
        if (p.functionResponse) results.push(String((p.functionResponse as Json).name));
      }
  }
  const orphan = results.find((id) => !calls.has(id));
  return orphan === undefined ? undefined : `tool result ${orphan} has no matching tool call in the request`;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v ?? ''));

/** The tool results a request carries (each format's own shape), as text. */
function resultsOf(body: Json): string[] {
  const out: string[] = [];
  for (const item of (body.input as Json[] | undefined) ?? [])
    if (item && typeof item === 'object' && String(item.type).endsWith('call_output')) out.push(text(item.output));
  for (const m of (body.messages as Json[] | undefined) ?? []) {
    if (m.role === 'tool') out.push(text(m.content));
    if (Array.isArray(m.content))
      for (const b of m.content as Json[]) if (b.type === 'tool_result') out.push(text(b.content));
  }
  for (const c of (body.contents as Json[] | undefined) ?? [])
    for (const p of (c.parts as Json[] | undefined) ?? [])
      if (p.functionResponse) out.push(text((p.functionResponse as Json).response));
  return out;
}

interface Writer {
  whole(a: Answer, model: string): Json;
  events(a: Answer, model: string, includeUsage: boolean): Json[];
}

const created = 1_790_000_000;

function responsesItems(a: Answer, n: number): Json[] {
  const items: Json[] = [
    {
      type: 'message',
      id: `msg_agent_${n}`,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: a.text, annotations: [] }],
    },
  ];
  if (a.call)
    items.push({
      type: 'function_call',
      id: `fc_agent_${n}`,
      status: 'completed',
      call_id: a.call.id,
      name: a.call.name,
      arguments: JSON.stringify(a.call.args),
    });
  return items;
}

function responsesObject(a: Answer, model: string, status: string, output: Json[]): Json {
  return {
    id: `resp_agent_${a.call?.id ?? a.step}`,
    object: 'response',
    created_at: created,
    status,
    model,
    output,
    usage:
      status === 'completed'
        ? {
            input_tokens: a.usage.input,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: a.usage.output,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: a.usage.input + a.usage.output,
          }
        : null,
  };
}

const responses: Writer = {
  whole: (a, model) => responsesObject(a, model, 'completed', responsesItems(a, 0)),
  events(a, model) {
    const items = responsesItems(a, 0);
    const evs: Json[] = [{ type: 'response.created', response: responsesObject(a, model, 'in_progress', []) }];
    items.forEach((item, i) => {
      if (item.type === 'message') {
        evs.push({
          type: 'response.output_item.added',
          output_index: i,
          item: { ...item, status: 'in_progress', content: [] },
        });
        evs.push({
          type: 'response.content_part.added',
          item_id: item.id,
          output_index: i,
          content_index: 0,
          part: { type: 'output_text', text: '', annotations: [] },
        });
        evs.push({
          type: 'response.output_text.delta',
          item_id: item.id,
          output_index: i,
          content_index: 0,
          delta: a.text,
        });
        evs.push({
          type: 'response.output_text.done',
          item_id: item.id,
          output_index: i,
          content_index: 0,
          text: a.text,
        });
      } else {
        evs.push({
          type: 'response.output_item.added',
          output_index: i,
          item: { ...item, status: 'in_progress', arguments: '' },
        });
        evs.push({
          type: 'response.function_call_arguments.delta',
          item_id: item.id,
          output_index: i,
          delta: item.arguments,
        });
        evs.push({
          type: 'response.function_call_arguments.done',
          item_id: item.id,
          output_index: i,
          arguments: item.arguments,
        });
      }
      evs.push({ type: 'response.output_item.done', output_index: i, item });
    });
    evs.push({ type: 'response.completed', response: responsesObject(a, model, 'completed', items) });
    return evs.map((e, i) => ({ ...e, sequence_number: i }));
  },
};

const chatUsage = (a: Answer) => ({
  prompt_tokens: a.usage.input,
  completion_tokens: a.usage.output,
  total_tokens: a.usage.input + a.usage.output,
});

const chat: Writer = {
  whole: (a, model) => ({
    id: 'chatcmpl-agent',
    object: 'chat.completion',
    created,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: a.text,
          ...(a.call
            ? {
                tool_calls: [
                  {
                    id: a.call.id,
                    type: 'function',
                    function: { name: a.call.name, arguments: JSON.stringify(a.call.args) },
                  },
                ],
              }
            : {}),
        },
        finish_reason: a.call ? 'tool_calls' : 'stop',
      },
    ],
    usage: chatUsage(a),
  }),
  events(a, model, includeUsage) {
    const chunk = (delta: Json, finish: string | null): Json => ({
      id: 'chatcmpl-agent',
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    });
    const evs = [chunk({ role: 'assistant', content: '' }, null), chunk({ content: a.text }, null)];
    if (a.call)
      evs.push(
        chunk(
          {
            tool_calls: [{ index: 0, id: a.call.id, type: 'function', function: { name: a.call.name, arguments: '' } }],
          },
          null,
        ),
        chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(a.call.args) } }] }, null),
      );
    evs.push(chunk({}, a.call ? 'tool_calls' : 'stop'));
    if (includeUsage)
      evs.push({
        id: 'chatcmpl-agent',
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [],
        usage: chatUsage(a),
      });
    return evs;
  },
};

const messages: Writer = {
  whole: (a, model) => ({
    id: 'msg_agent',
    type: 'message',
    role: 'assistant',
    model,
    content: [
      { type: 'text', text: a.text },
      ...(a.call ? [{ type: 'tool_use', id: a.call.id, name: a.call.name, input: a.call.args }] : []),
    ],
    stop_reason: a.call ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: a.usage.input,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: a.usage.output,
    },
  }),
  events(a, model) {
    const evs: Json[] = [
      {
        type: 'message_start',
        message: {
          id: 'msg_agent',
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: a.usage.input,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 1,
          },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: a.text } },
      { type: 'content_block_stop', index: 0 },
    ];
    if (a.call)
      evs.push(
        {
          type: 'content_block_start',
          index: 1,
          content_block: { type: 'tool_use', id: a.call.id, name: a.call.name, input: {} },
        },
        {
          type: 'content_block_delta',
          index: 1,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(a.call.args) },
        },
        { type: 'content_block_stop', index: 1 },
      );
    evs.push(
      {
        type: 'message_delta',
        delta: { stop_reason: a.call ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: { output_tokens: a.usage.output },
      },
      { type: 'message_stop' },
    );
    return evs;
  },
};

function geminiChunk(a: Answer, model: string, parts: Json[], output: number, last: boolean): Json {
  return {
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
    usageMetadata: {
      promptTokenCount: a.usage.input,
      candidatesTokenCount: output,
      totalTokenCount: a.usage.input + output,
    },
    modelVersion: model,
    responseId: `agent-${a.step}`,
  };
}

const gemini: Writer = {
  whole: (a, model) =>
    geminiChunk(
      a,
      model,
      [{ text: a.text }, ...(a.call ? [{ functionCall: { name: a.call.name, args: a.call.args } }] : [])],
      a.usage.output,
      true,
    ),
  events: (a, model) => [
    geminiChunk(a, model, [{ text: a.text }], a.call ? 3 : a.usage.output, !a.call),
    ...(a.call
      ? [geminiChunk(a, model, [{ functionCall: { name: a.call.name, args: a.call.args } }], a.usage.output, true)]
      : []),
  ],
};

const WRITERS: Record<WireName, Writer> = { responses, chat, messages, gemini };
