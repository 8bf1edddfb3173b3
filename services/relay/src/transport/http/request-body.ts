/**
 * A relay request's body as the routes accept it: multipart uploads (by the upload limit) or a
 * JSON object (by the JSON limit) that its route's schema accepts (request-schemas.ts: the fields
 * the relay reads have their types, counts are whole numbers in range); other fields go upstream
 * unchanged for the provider to judge.
 */
import type { IncomingMessage } from 'node:http';
import type { RelayMode } from '../../domain/adaptors/index.ts';
import type { ClientRequest } from '../../domain/exchange/build-request.ts';
import type { ClientFormat } from '../../domain/exchange/ports.ts';
import type { Json } from '../../domain/protocols/openai.ts';
import { clientOf } from '../../domain/protocols/registry.ts';
import { RelayError } from '../../domain/relay-error.ts';
import { readBody } from './node-sink.ts';
import { parseInput } from './parse-input.ts';
import { checkBody, multipartFields } from './request-schemas.ts';

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

/** Reads and checks a request's body (limits: the multipart and the JSON body limit in bytes). */
export async function parseClientRequest(
  req: IncomingMessage,
  mode: RelayMode,
  format: ClientFormat,
  limits: { maxBodyBytes: number; maxJsonBytes: number },
  gemini?: { model: string; stream: boolean },
  kind: { count?: boolean; playground?: boolean } = {},
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
    const model = parseInput(multipartFields, { model: form.get('model') ?? undefined }).model ?? '';
    return { format, mode, model, stream: false, body: form, includeUsage: false };
  }
  const body = jsonObject(raw);
  checkBody({ format, mode, ...kind }, body);
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
  // The model is required by the route's schema (request-schemas.ts).
  const body = creq.body as Json;
  const kept: Json = {};
  for (const k of COMPACT_FIELDS) if (body[k] !== undefined) kept[k] = body[k];
  return { ...creq, body: kept, raw: undefined };
}
