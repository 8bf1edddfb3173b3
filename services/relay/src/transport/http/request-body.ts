/**
 * A relay request's body as the routes accept it: multipart uploads (by the upload limit) or a
 * JSON object (by the JSON limit) whose fields the relay reads have their JSON types and whose
 * counts are whole numbers in range; other fields go upstream unchanged for the provider to judge.
 */
import type { IncomingMessage } from 'node:http';
import type { RelayMode } from '../../domain/adaptors/index.ts';
import type { ClientRequest } from '../../domain/exchange/build-request.ts';
import type { ClientFormat } from '../../domain/exchange/ports.ts';
import type { Json } from '../../domain/protocols/openai.ts';
import { clientOf } from '../../domain/protocols/registry.ts';
import { RelayError } from '../../domain/relay-error.ts';
import { readBody } from './node-sink.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The body as a JSON object: valid UTF-8, valid JSON, an object (not an array or a scalar). */
function jsonObject(raw: Buffer): Json {
  let body: unknown;
  try {
    body = JSON.parse(utf8.decode(raw));
  } catch {
    throw new RelayError(400, '请求体不是合法的 JSON', 'invalid_json');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new RelayError(400, '请求体必须是 JSON 对象', 'invalid_json');
  return body as Json;
}

const FIELD_TYPES: Record<string, 'string' | 'boolean' | 'number' | 'array' | 'object'> = {
  model: 'string',
  stream: 'boolean',
  max_tokens: 'number',
  max_completion_tokens: 'number',
  n: 'number',
  stream_options: 'object',
  messages: 'array',
};

/**
 * The fields the relay itself reads must have their declared JSON types (an object where a
 * string belongs is refused here with a 400, not met later as a TypeError and a 500). Other fields
 * go upstream unchanged; the provider judges them.
 */
function checkFields(body: Json): void {
  for (const [field, want] of Object.entries(FIELD_TYPES)) {
    const v = body[field];
    if (v === undefined || v === null) continue;
    const got = Array.isArray(v) ? 'array' : typeof v;
    if (got !== want) throw new RelayError(400, `字段 ${field} 的类型无效，应为 ${want}`, 'invalid_field');
  }
}

/** The largest count a request may give (a 32-bit int: every provider's own limit is far below). */
const MAX_COUNT = 2_147_483_647;

/**
 * Counts the relay prices by (output tokens, images) must be whole numbers in range: a huge or
 * fractional max_tokens (1e308) made the reservation Infinity and billing failed it with a 500.
 */
function checkCounts(body: Json, gemini: boolean): void {
  const counts: [string, unknown][] = gemini
    ? Object.entries((body.generationConfig ?? {}) as Json).filter(
        ([k]) => k === 'maxOutputTokens' || k === 'candidateCount',
      )
    : ['max_tokens', 'max_completion_tokens', 'max_output_tokens', 'n'].map((k) => [k, body[k]]);
  for (const [field, v] of counts) {
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_COUNT)
      throw new RelayError(400, `字段 ${field} 的值无效，应为 0 到 ${MAX_COUNT} 之间的整数`, 'invalid_field');
  }
}

/** Reads and checks a request's body (limits: the multipart and the JSON body limit in bytes). */
export async function parseClientRequest(
  req: IncomingMessage,
  mode: RelayMode,
  format: ClientFormat,
  limits: { maxBodyBytes: number; maxJsonBytes: number },
  gemini?: { model: string; stream: boolean },
): Promise<ClientRequest> {
  const ct = String(req.headers['content-type'] ?? '');
  // Per-route limits: uploads may be large, a JSON request (a prompt) much less so.
  const raw = await readBody(req, ct.includes('multipart/form-data') ? limits.maxBodyBytes : limits.maxJsonBytes);
  if (ct.includes('multipart/form-data')) {
    let form: FormData;
    try {
      form = await new Response(raw, { headers: { 'content-type': ct } }).formData();
    } catch {
      throw new RelayError(400, '请求体不是合法的 multipart/form-data', 'invalid_form');
    }
    const model = form.get('model') ?? '';
    if (typeof model !== 'string') throw new RelayError(400, '字段 model 必须是字符串', 'invalid_field');
    return { format, mode, model, stream: false, body: form, includeUsage: false };
  }
  const body = jsonObject(raw);
  if (!gemini) checkFields(body);
  checkCounts(body, gemini !== undefined);
  if (gemini) return { format, mode, model: gemini.model, stream: gemini.stream, body, raw, includeUsage: false };
  const stream = body.stream === true && (mode === 'chat' || mode === 'completions');
  const includeUsage =
    stream && (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const model = typeof body.model === 'string' ? body.model : '';
  const forward = forwarded(req, format);
  return forward
    ? { format, mode, model, stream, body, raw, includeUsage, forward }
    : { format, mode, model, stream, body, raw, includeUsage };
}

/** The client headers its protocol passes on to an upstream speaking it (Claude's betas). */
function forwarded(req: IncomingMessage, format: ClientFormat): Record<string, string> | undefined {
  const names = clientOf(format).forwardHeaders;
  if (!names) return undefined;
  let out: Record<string, string> | undefined;
  for (const name of names) {
    const v = req.headers[name];
    if (v === undefined) continue;
    out ??= {};
    out[name] = Array.isArray(v) ? v.join(',') : v;
  }
  return out;
}

/** The fields OpenAI documents for POST /v1/responses/compact (new-api forwards these alone too). */
const COMPACT_FIELDS = [
  'model',
  'input',
  'instructions',
  'previous_response_id',
  'parallel_tool_calls',
  'service_tier',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
];

/**
 * A Responses compaction request as it goes upstream: the model required (OpenAI's message), and
 * only the documented fields (Codex also sends tools, reasoning and text, which the endpoint does
 * not take).
 */
export function compactionRequest(creq: ClientRequest): ClientRequest {
  if (!creq.model) throw new RelayError(400, "Missing required parameter: 'model'.", 'missing_required_parameter');
  const body = creq.body as Json;
  const kept: Json = {};
  for (const k of COMPACT_FIELDS) if (body[k] !== undefined) kept[k] = body[k];
  return { ...creq, body: kept, raw: undefined };
}
