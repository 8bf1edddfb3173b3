/**
 * The one way the relay refuses a malformed input: `parseInput` parses with a zod schema
 * (request-schemas.ts) or throws a 400 RelayError naming the first bad field by its path; the
 * route answers it in its protocol's error shape (OpenAI, Claude, Gemini: route-kit's `fail`;
 * Realtime: an error event).
 */
import type { z } from 'zod';
import { RelayError } from '../../domain/relay-error.ts';

/** The largest count a request may give (a 32-bit int: every provider's own limit is far below). */
export const MAX_COUNT = 2_147_483_647;

// Messages are composed with the issue's path once parsing failed (error maps do not see it).
/** The mark of a schema's own type message: `${TYPE}string 或 array`. */
export const TYPE = '\u0000type:';
const COUNT = '\u0000count';

/** Messages the parse gives where a schema gave none of its own (composed with the path after). */
const errorMap: z.core.$ZodErrorMap = (iss) => {
  const numeric = typeof iss.input === 'number';
  if (iss.code === 'invalid_type') {
    if (iss.expected === 'int' || (iss.expected === 'number' && numeric)) return COUNT;
    return `${TYPE}${iss.expected}`;
  }
  if ((iss.code === 'too_small' || iss.code === 'too_big') && numeric) return COUNT;
  return undefined;
};

/** A zod path as a client writes it: `messages[0].content`. */
function pathOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const k of path) out += typeof k === 'number' ? `[${k}]` : out ? `.${String(k)}` : String(k);
  return out || '(root)';
}

/**
 * The issue to report: for a value of one of a union's shapes that failed deeper inside (an
 * array of items where one item is wrong), that inner issue, not "string or array".
 */
function innermost(first: z.core.$ZodIssue): { issue: z.core.$ZodIssue; path: PropertyKey[] } {
  let issue = first;
  const path = [...issue.path];
  while (issue.code === 'invalid_union') {
    let deeper: z.core.$ZodIssue | undefined;
    for (const option of issue.errors) {
      const e = option[0];
      if (e && e.path.length > 0 && (!deeper || e.path.length > deeper.path.length)) deeper = e;
    }
    if (!deeper) break;
    path.push(...deeper.path);
    issue = deeper;
  }
  return { issue, path };
}

/**
 * Parses `value` with `schema`, or throws a 400 RelayError naming the first bad field; the route
 * answers it in its protocol's error shape (OpenAI, Claude, Gemini: route-kit's `fail`). The one
 * way the relay refuses a malformed body.
 */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const r = schema.safeParse(value, { error: errorMap });
  if (r.success) return r.data;
  const { issue, path } = innermost(r.error.issues[0] as z.core.$ZodIssue);
  const field = pathOf(path);
  if (issue.message === COUNT)
    throw new RelayError(400, `字段 ${field} 的值无效，应为 0 到 ${MAX_COUNT} 之间的整数`, 'invalid_field');
  if (issue.message.startsWith(TYPE))
    throw new RelayError(400, `字段 ${field} 的类型无效，应为 ${issue.message.slice(TYPE.length)}`, 'invalid_field');
  const code = issue.code === 'custom' ? (issue.params as { code?: string } | undefined)?.code : undefined;
  throw new RelayError(400, issue.message, code ?? 'invalid_request');
}
