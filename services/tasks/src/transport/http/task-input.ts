/**
 * The one way a task route reads its input: the JSON body (or the query) parsed by a declared zod
 * schema. A mismatch (a field of the wrong type) throws MjError(400) naming the field and the
 * reason; each protocol's route answers it in its own shape (Midjourney `{code, description}`,
 * Suno `{code, message}`, Kling, Jimeng and OpenAI theirs). The schemas keep unknown keys: the
 * platforms pass their own fields on upstream.
 */
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { MjError } from '../../domain/mj-error.ts';
import { readJson } from './mj-routes.ts';

const zh = z.locales.zhCN().localeError;
const LABEL = { body: '请求体', query: '查询参数' } as const;

/** The first issue as one sentence: where, which field, what is wrong. */
function messageOf(part: keyof typeof LABEL, err: z.ZodError): string {
  const issue = err.issues[0];
  if (!issue) return `${LABEL[part]}无效`;
  const field = issue.path.map(String).join('.');
  return field ? `${LABEL[part]} ${field} 无效：${issue.message}` : `${LABEL[part]}无效：${issue.message}`;
}

/** `value` parsed by `schema`, or MjError(400) that the route answers in its protocol's shape. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  part: keyof typeof LABEL = 'body',
): z.output<S> {
  const r = schema.safeParse(value, { error: zh });
  if (!r.success) throw new MjError(400, 4, messageOf(part, r.error));
  return r.data;
}

/** The request's JSON body (an object: readJson) parsed by `schema`. */
export async function readInput<S extends z.ZodType>(req: IncomingMessage, schema: S): Promise<z.output<S>> {
  return parseInput(schema, await readJson(req));
}

/** The query string as an object (the last of repeated keys) parsed by `schema`. */
export function queryInput<S extends z.ZodType>(url: URL, schema: S): z.output<S> {
  return parseInput(schema, Object.fromEntries(url.searchParams), 'query');
}

const text = z.string().nullish();
const texts = z.array(z.string()).nullish();
/** A number clients send either way (`"5"` or `5`); the platform checks its range. */
const count = z.union([z.number(), z.string()]).nullish();
const ids = z.array(z.union([z.string(), z.number()])).nullish();
const body = <T extends z.ZodRawShape>(shape: T) => z.looseObject(shape);

/** Every Midjourney submit (imagine, blend, describe, action, change, modal, swap-face, ...). */
export const mjSubmitBody = body({
  prompt: text,
  base64: text,
  base64Array: texts,
  sourceBase64: text,
  targetBase64: text,
  maskBase64: text,
  customId: text,
  taskId: text,
  action: text,
  index: count,
  content: text,
  notifyHook: text,
  state: text,
  botType: text,
});
export const mjListBody = body({ ids });

export const sunoSubmitBody = body({
  prompt: text,
  gpt_description_prompt: text,
  mv: text,
  title: text,
  tags: text,
  continue_clip_id: text,
  continue_at: count,
});
export const sunoFetchBody = body({ ids });

export const klingSubmitBody = body({
  model_name: text,
  model: text,
  prompt: text,
  negative_prompt: text,
  image: text,
  image_tail: text,
  mode: text,
  aspect_ratio: text,
  duration: count,
  cfg_scale: z.number().nullish(),
  callback_url: text,
});

export const jimengQuery = z.object({ Action: z.string().optional(), Version: z.string().optional() });
export const jimengSubmitBody = body({
  req_key: text,
  prompt: text,
  image_urls: texts,
  binary_data_base64: texts,
  aspect_ratio: text,
  frames: count,
  seed: count,
});
export const jimengResultBody = body({ req_key: text, task_id: text });

/** OpenAI's create (JSON or the text fields of a multipart body) and remix. */
export const videoCreateBody = body({ model: text, prompt: text, seconds: count, size: text });
export const videoRemixBody = body({ prompt: text });
export const videoListQuery = z.object({
  limit: z.string().optional(),
  after: z.string().optional(),
  order: z.string().optional(),
});
export const videoContentQuery = z.object({ variant: z.string().optional() });

/** new-api's unified video request. */
export const generationBody = body({
  model: text,
  prompt: text,
  image: text,
  duration: count,
  width: count,
  height: count,
  seed: count,
  metadata: z.record(z.string(), z.unknown()).nullish(),
});
