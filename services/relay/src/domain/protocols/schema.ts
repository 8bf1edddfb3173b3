/**
 * Schemas, tool choice and structured output between the client formats (OpenAI chat is the
 * canonical form in the middle):
 * - Gemini's `parameters` / `responseSchema` are an OpenAPI 3.0 subset with upper-case types
 *   (`OBJECT`, `STRING`) and `nullable`; `parametersJsonSchema` / `responseJsonSchema` are JSON
 *   Schema. OpenAI and Claude take JSON Schema.
 * - Gemini's `toolConfig.functionCallingConfig` (AUTO, ANY, NONE, VALIDATED, allowedFunctionNames)
 *   against OpenAI's `tool_choice` and Claude's `tool_choice`.
 * - Gemini's `responseMimeType: application/json` (with a schema or not) against OpenAI's
 *   `response_format` (json_schema, json_object); Claude has no JSON mode, so the instruction
 *   goes to its system prompt.
 */
import type { ChatRequest, ChatTool, Json } from './openai.ts';

/** Keys of an OpenAPI schema whose value is one schema. */
const ONE = ['items', 'not', 'additionalProperties'] as const;
/** Keys whose value is a list of schemas. */
const MANY = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;
/** Keys whose value is a map of schemas. */
const MAP = ['properties', 'patternProperties', '$defs', 'definitions'] as const;

/**
 * Gemini's OpenAPI-subset schema -> JSON Schema: type names lower-cased, `nullable: true` as a
 * `null` alternative, `propertyOrdering` (Gemini's own) dropped, nested schemas converted.
 */
export function geminiSchemaToJsonSchema(schema: unknown, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema) || depth > 64) return schema;
  const s = schema as Json;
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'propertyOrdering' || k === 'nullable') continue;
    if (k === 'type') out.type = typeof v === 'string' ? v.toLowerCase() : v;
    else if ((ONE as readonly string[]).includes(k)) out[k] = geminiSchemaToJsonSchema(v, depth + 1);
    else if ((MANY as readonly string[]).includes(k) && Array.isArray(v))
      out[k] = v.map((x) => geminiSchemaToJsonSchema(x, depth + 1));
    else if ((MAP as readonly string[]).includes(k) && v && typeof v === 'object')
      out[k] = Object.fromEntries(Object.entries(v).map(([n, x]) => [n, geminiSchemaToJsonSchema(x, depth + 1)]));
    else out[k] = v;
  }
  if (s.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (out.type === undefined && Array.isArray(out.anyOf)) out.anyOf = [...out.anyOf, { type: 'null' }];
  }
  // Gemini's enum of a string property may come without a type.
  if (out.type === undefined && Array.isArray(out.enum) && out.enum.every((e) => typeof e === 'string'))
    out.type = 'string';
  return out;
}

/**
 * A Gemini function declaration's parameters as JSON Schema. The JSON Schema form wins, in either
 * spelling the API takes (`parametersJsonSchema`, or `parameters_json_schema` as google-genai 3.6
 * for Python sends it); else the OpenAPI-subset `parameters`, converted.
 */
export function geminiParameters(d: {
  parameters?: unknown;
  parametersJsonSchema?: unknown;
  parameters_json_schema?: unknown;
}): Json {
  const json = d.parametersJsonSchema ?? d.parameters_json_schema;
  if (json && typeof json === 'object') return json as Json;
  if (d.parameters && typeof d.parameters === 'object') return geminiSchemaToJsonSchema(d.parameters) as Json;
  return { type: 'object', properties: {} };
}

/**
 * Gemini's toolConfig -> OpenAI tool_choice, and the tools left offered: ANY with one allowed
 * name forces that function; with several, the tools are narrowed to them and one is required.
 */
export function geminiToolChoice(
  toolConfig: unknown,
  tools: ChatTool[] | undefined,
): { choice?: ChatRequest['tool_choice']; tools?: ChatTool[] } {
  const fcc = (toolConfig as { functionCallingConfig?: { mode?: unknown; allowedFunctionNames?: unknown } } | undefined)
    ?.functionCallingConfig;
  if (!fcc) return { tools };
  const mode = typeof fcc.mode === 'string' ? fcc.mode.toUpperCase() : 'AUTO';
  const allowed = Array.isArray(fcc.allowedFunctionNames)
    ? fcc.allowedFunctionNames.filter((n): n is string => typeof n === 'string')
    : [];
  if (mode === 'NONE') return { choice: 'none', tools };
  if (mode === 'ANY') {
    const narrowed = allowed.length && tools ? tools.filter((t) => allowed.includes(t.function.name)) : tools;
    if (allowed.length === 1 && narrowed?.length === 1)
      return { choice: { type: 'function', function: { name: allowed[0] as string } }, tools: narrowed };
    return { choice: 'required', tools: narrowed?.length ? narrowed : tools };
  }
  // AUTO, VALIDATED (Gemini checks calls against the schema) and unknown modes.
  return { choice: 'auto', tools };
}

/** OpenAI tool_choice -> Gemini toolConfig. */
export function openaiToolChoiceToGemini(tc: ChatRequest['tool_choice']): Json | undefined {
  if (tc === undefined) return undefined;
  if (tc === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (tc === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  if (tc === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (typeof tc === 'object' && tc.function?.name)
    return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [tc.function.name] } };
  return undefined;
}

/** Gemini's JSON output settings -> OpenAI response_format (undefined for plain text). */
export function geminiResponseFormat(gc: Json): Json | undefined {
  const mime = typeof gc.responseMimeType === 'string' ? gc.responseMimeType.toLowerCase() : '';
  const jsonSchema = gc.responseJsonSchema ?? gc.response_json_schema;
  const oaSchema = gc.responseSchema ?? gc.response_schema;
  if (mime !== 'application/json' && !jsonSchema && !oaSchema) return undefined;
  const schema =
    jsonSchema && typeof jsonSchema === 'object'
      ? (jsonSchema as Json)
      : oaSchema && typeof oaSchema === 'object'
        ? (geminiSchemaToJsonSchema(oaSchema) as Json)
        : undefined;
  if (!schema) return { type: 'json_object' };
  return { type: 'json_schema', json_schema: { name: 'response', schema } };
}

/** OpenAI response_format -> Gemini generationConfig fields. */
export function openaiResponseFormatToGemini(rf: unknown): Json | undefined {
  const f = rf as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  if (f?.type === 'json_object') return { responseMimeType: 'application/json' };
  if (f?.type === 'json_schema') {
    const schema = f.json_schema?.schema;
    return schema && typeof schema === 'object'
      ? { responseMimeType: 'application/json', responseJsonSchema: schema }
      : { responseMimeType: 'application/json' };
  }
  return undefined;
}

/**
 * OpenAI response_format as an instruction for Claude (which has no JSON output mode): the
 * schema is stated in the system prompt.
 */
export function responseFormatInstruction(rf: unknown): string | undefined {
  const f = rf as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  if (f?.type === 'json_object') return 'Respond with a single JSON object only, with no other text.';
  if (f?.type === 'json_schema') {
    const schema = f.json_schema?.schema;
    return schema
      ? `Respond with a single JSON value only, with no other text, that conforms to this JSON Schema: ${JSON.stringify(schema)}`
      : 'Respond with a single JSON object only, with no other text.';
  }
  return undefined;
}
