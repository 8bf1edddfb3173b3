/**
 * The JSON bodies the relay reads, as zod schemas per API and route. Permissive where the
 * protocols are (unknown fields pass through to the provider, which judges them), strict on the
 * fields the relay itself reads (model, stream, messages and their roles and texts, counts it
 * prices by): a wrong type is a 400 with the field's path, never a TypeError (500) and never a
 * value coerced in silence (`String({})` in a token estimate or a translated prompt).
 * The bodies are checked, not rewritten: what goes upstream is what the client sent.
 */
import { z } from 'zod';
import type { RelayMode } from '../../domain/adaptors/index.ts';
import type { ClientFormat } from '../../domain/exchange/ports.ts';
import type { Json } from '../../domain/protocols/openai.ts';
import { MAX_COUNT, parseInput, TYPE } from './parse-input.ts';

/** A count the relay prices by (output tokens, images, results): a whole number in range. */
const count = z.number().int().min(0).max(MAX_COUNT);
const text = z.string();
/** An optional field that may also be null (OpenAI's SDKs send nulls for unset fields). */
const opt = <T extends z.ZodType>(s: T) => s.nullish();
/** One of several shapes; `want` names them in the message. */
const either = <const T extends readonly [z.ZodType, z.ZodType, ...z.ZodType[]]>(want: string, options: T) =>
  z.union(options, { error: () => `${TYPE}${want}` });
/** Text or a list of texts (stop sequences, inputs). */
const texts = either('string 或 array', [text, z.array(text)]);
/**
 * A body whose `field` must be there, with the protocol's own message (and error code) when it
 * is not (checked on the object: zod does not run a field's schema for an absent key).
 */
const requiring = <T extends z.ZodType>(schema: T, field: string, missing: string, code = 'invalid_request') =>
  schema.superRefine((v, ctx) => {
    if ((v as Record<string, unknown>)[field] === undefined)
      ctx.addIssue({ code: 'custom', message: missing, path: [field], params: { code } });
  });

// ------------------------------------------------------------------------------------- OpenAI

/** A content part: text, image_url, input_audio, file... (`text` read for the token estimate). */
const part = z.looseObject({ type: text, text: opt(text) });
const chatMessage = z.looseObject({
  role: text,
  content: opt(either('string 或 array', [text, z.array(part)])),
  name: opt(text),
  tool_calls: opt(z.array(z.looseObject({ function: opt(z.looseObject({ name: opt(text), arguments: opt(text) })) }))),
  tool_call_id: opt(text),
});
/** What every OpenAI-style body may carry that the relay reads. */
const openaiBase = {
  model: opt(text),
  stream: opt(z.boolean()),
  stream_options: opt(z.looseObject({ include_usage: opt(z.boolean()) })),
  max_tokens: opt(count),
  max_completion_tokens: opt(count),
  n: opt(count),
  user: opt(text),
};
/** A completion's prompt: text, texts, or token ids (one list or several). */
const prompt = either('string 或 array', [
  text,
  z.array(either('string、number 或 array', [text, z.number(), z.array(z.number())])),
]);
/** An embedding's input: the same, or objects (multimodal inputs such as Jina's `{text}`, `{image}`). */
const embeddingInput = either('string 或 array', [
  text,
  z.array(either('string、number、array 或 object', [text, z.number(), z.array(z.number()), z.looseObject({})])),
]);

const chat = z.looseObject({
  ...openaiBase,
  messages: opt(z.array(chatMessage)),
  stop: opt(texts),
  tools: opt(z.array(z.looseObject({ type: opt(text) }))),
  reasoning_effort: opt(text),
  prompt_cache_key: opt(text),
});
/** The console's playground: a chat body with the group to use. */
const playground = chat.extend({ group: opt(text) });
const completions = z.looseObject({ ...openaiBase, prompt: opt(prompt), stop: opt(texts) });
const embeddings = z.looseObject({ ...openaiBase, input: opt(embeddingInput) });
const images = z.looseObject({ ...openaiBase, prompt: opt(text), size: opt(text) });
const speech = z.looseObject({ ...openaiBase, input: opt(text) });
const moderations = z.looseObject({
  ...openaiBase,
  input: opt(either('string 或 array', [text, z.array(either('string 或 object', [text, part]))])),
});
const rerank = z.looseObject({
  ...openaiBase,
  query: opt(text),
  documents: opt(z.array(either('string 或 object', [text, z.looseObject({})]))),
});

// ---------------------------------------------------------------------------------- Responses

/** An input item: a message (role, content), a function call or its output, a reasoning item... */
const responseItem = z.looseObject({
  type: opt(text),
  role: opt(text),
  content: opt(either('string 或 array', [text, z.array(part)])),
  call_id: opt(text),
  name: opt(text),
  arguments: opt(text),
});
const responsesShape = {
  model: opt(text),
  input: opt(either('string 或 array', [text, z.array(responseItem)])),
  // Text (read as the system prompt when translated), or input items as OpenAI also takes.
  instructions: opt(either('string 或 array', [text, z.array(responseItem)])),
  stream: opt(z.boolean()),
  max_output_tokens: opt(count),
  previous_response_id: opt(text),
  store: opt(z.boolean()),
  tools: opt(z.array(z.looseObject({ type: text }))),
  reasoning: opt(z.looseObject({ effort: opt(text), summary: opt(text) })),
  text: opt(z.looseObject({ format: opt(z.looseObject({ type: text })) })),
  prompt_cache_key: opt(text),
};
const responses = z.looseObject(responsesShape);
/** input_tokens and compact: OpenAI's message when the model is missing. */
const responsesWithModel = requiring(
  responses,
  'model',
  "Missing required parameter: 'model'.",
  'missing_required_parameter',
);

// ------------------------------------------------------------------------------------- Claude

const claudeBlock = z.looseObject({ type: text, text: opt(text) });
const claudeMessages = z.array(
  z.looseObject({ role: text, content: opt(either('string 或 array', [text, z.array(claudeBlock)])) }),
);
const claudeShape = {
  model: opt(text),
  messages: opt(claudeMessages),
  system: opt(either('string 或 array', [text, z.array(claudeBlock)])),
  max_tokens: opt(count),
  stream: opt(z.boolean()),
  stop_sequences: opt(z.array(text)),
  metadata: opt(z.looseObject({ user_id: opt(text) })),
  thinking: opt(z.looseObject({ type: text, budget_tokens: opt(count) })),
  tools: opt(z.array(z.looseObject({ name: opt(text), input_schema: opt(z.looseObject({})) }))),
  tool_choice: opt(z.looseObject({ type: text, name: opt(text) })),
};
const claude = z.looseObject(claudeShape);
const claudeCount = requiring(
  requiring(claude, 'model', 'model: Field required'),
  'messages',
  'messages: Field required',
);

// ------------------------------------------------------------------------------------- Gemini

const geminiPart = z.looseObject({
  text: opt(text),
  thought: opt(z.boolean()),
  inlineData: opt(z.looseObject({ mimeType: text, data: text })),
  fileData: opt(z.looseObject({ fileUri: text })),
  functionCall: opt(z.looseObject({ name: text })),
  functionResponse: opt(z.looseObject({ name: text })),
});
const geminiContent = z.looseObject({ role: opt(text), parts: opt(z.array(geminiPart)) });
const generationConfig = z.looseObject({
  maxOutputTokens: opt(count),
  candidateCount: opt(count),
  stopSequences: opt(z.array(text)),
  responseMimeType: opt(text),
});
const geminiShape = {
  contents: opt(z.array(geminiContent)),
  systemInstruction: opt(geminiContent),
  system_instruction: opt(geminiContent),
  generationConfig: opt(generationConfig),
  generation_config: opt(generationConfig),
  tools: opt(z.array(z.looseObject({ functionDeclarations: opt(z.array(z.looseObject({ name: text }))) }))),
};
const gemini = z.looseObject(geminiShape);
const geminiCount = z
  .looseObject({ ...geminiShape, generateContentRequest: opt(z.looseObject(geminiShape)) })
  .superRefine((b, ctx) => {
    if (!b.contents && !b.generateContentRequest?.contents)
      ctx.addIssue({ code: 'custom', message: 'contents is required' });
  });

// ----------------------------------------------------------------------------------- Realtime

/**
 * A Realtime client event that carries a prompt (conversation.item.create, session.update,
 * response.create): the relay reads its item, session or response for the sensitive-word check.
 */
export const realtimePromptEvent = z.looseObject({
  type: text,
  event_id: opt(text),
  item: opt(z.looseObject({})),
  session: opt(z.looseObject({})),
  response: opt(z.looseObject({})),
});

/** The text fields of a multipart upload the relay reads (a file where text belongs is refused). */
export const multipartFields = z.looseObject({ model: opt(text) });

// ------------------------------------------------------------------------------------ choosing

const OPENAI: Partial<Record<RelayMode, z.ZodType>> = {
  chat,
  completions,
  embeddings,
  images,
  image_edits: images,
  image_variations: images,
  speech,
  moderations,
  rerank,
  responses_compact: responsesWithModel,
};

/** Which body a request is: its API, its mode, and whether it only counts tokens. */
export interface BodyKind {
  format: ClientFormat;
  mode: RelayMode;
  /** count_tokens, countTokens, input_tokens: the prompt is required. */
  count?: boolean;
  /** The console's playground (chat with a `group`). */
  playground?: boolean;
}

/** The schema of a request's JSON body. */
export function bodySchema(kind: BodyKind): z.ZodType {
  switch (kind.format) {
    case 'claude':
      return kind.count ? claudeCount : claude;
    case 'gemini':
      return kind.count ? geminiCount : gemini;
    case 'responses':
      return kind.count ? responsesWithModel : responses;
    default:
      if (kind.playground) return playground;
      // Transcriptions and translations are multipart; a JSON body of theirs has the base fields.
      return OPENAI[kind.mode] ?? z.looseObject(openaiBase);
  }
}

/** Checks a JSON body against its route's schema (the body itself goes on unchanged). */
export function checkBody(kind: BodyKind, body: Json): void {
  parseInput(bodySchema(kind), body);
}
