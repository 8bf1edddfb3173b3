import { z } from 'zod';

/**
 * Field schemas shared by the /api routes. Numbers are plain decimal integers (JSON numbers, or
 * text of digits only): `0x10`, `1e3`, ` 1`, `2.5`, NaN and values beyond 2^53 are refused, never
 * coerced. Objects and arrays are refused where a scalar belongs.
 */
const MAX = Number.MAX_SAFE_INTEGER;

/** Messages written for a field (sent as they are; zod's generic ones get the field's name). */
export const ownMessages = new Set<string>();
const own = (m: string | undefined) => {
  if (m) ownMessages.add(m);
  return m;
};
const DIGITS = /^-?(0|[1-9]\d{0,15})$/;

/** A whole number in [min, max], from a JSON number or a string of decimal digits. */
export function int(min = -MAX, max = MAX, message?: string) {
  own(message);
  const range = z
    .number(message ? { error: message } : undefined)
    .int(message ? { error: message } : undefined)
    .min(min, message ? { error: message } : undefined)
    .max(max, message ? { error: message } : undefined);
  return z.union(
    [
      range,
      z
        .string()
        .regex(DIGITS, message ?? '必须是十进制整数')
        .pipe(z.coerce.number())
        .pipe(range),
    ],
    {
      error: message ?? '必须是整数',
    },
  );
}

/** A field that travels as a protobuf int32 (status, type, count...): any value it can carry. */
export const int32 = (message = '必须是 32 位整数') => int(-(2 ** 31), 2 ** 31 - 1, message);

/** A record id: a positive whole number. */
export const id = (message = '无效的 ID') => int(1, MAX, message);

/** A path id (`/x/:id`): decimal digits only, no sign, no leading zero. */
export const pathId = z.object({ id: id() });

/** A quota amount (may be negative where the route allows it). */
export const quota = (min = -MAX) => int(min, MAX, '额度必须是整数');

/** Unix seconds, 0 meaning "not set". */
export const timestamp = int(0, 253_402_300_799, '时间戳无效');

/** Free text: a string, or a number or boolean taken as text. */
export const text = z.union([z.string(), z.number().transform(String), z.boolean().transform(String)], {
  error: '必须是字符串',
});

/** A boolean: true/false, "true"/"false", 1/0. */
export const flag = z.union(
  [
    z.boolean(),
    z.enum(['true', 'false', '1', '0', '']).transform((v) => v === 'true' || v === '1'),
    z.literal(1).transform(() => true),
    z.literal(0).transform(() => false),
  ],
  {
    error: '必须是布尔值',
  },
);

/** A comma list, or an array of names sent as one. */
export const list = z.union([z.string(), z.array(z.string()).transform((a) => a.join(','))], {
  error: '必须是字符串或字符串数组',
});

/** `p` (1-based, at most 1,000,000) and `page_size`/`size` (1..1000, capped at 100) of a list query. */
export const pageShape = {
  p: int(1, 1_000_000, '页码必须是 1 到 1000000 之间的整数').optional(),
  page: int(1, 1_000_000, '页码必须是 1 到 1000000 之间的整数').optional(),
  page_size: int(1, 1000, '每页条数必须是 1 到 1000 之间的整数').optional(),
  size: int(1, 1000, '每页条数必须是 1 到 1000 之间的整数').optional(),
};

/** The page of a query parsed with `pageShape`. */
export function pageOf(q: { p?: number; page?: number; page_size?: number; size?: number }) {
  return { page: q.p ?? q.page ?? 1, pageSize: Math.min(q.page_size ?? q.size ?? 10, 100) };
}

/** A query where every declared key is optional text (unknown keys are dropped). */
export const query = <T extends z.ZodRawShape>(shape: T) => z.object(shape);

/** A JSON body: an object (not an array or scalar) with the given fields. */
export const body = <T extends z.ZodRawShape>(shape: T) => z.object(shape, { error: '请求体必须是 JSON 对象' });

/** Absent, null or '' (an emptied form field) read as undefined; anything else must satisfy `schema`. */
export function optional<T extends z.ZodType>(schema: T) {
  return z.preprocess((v) => (v === null || v === '' ? undefined : v), schema.optional());
}

/** Optional text: absent or null read as undefined (an empty string stays ''). */
export const optText = text.nullish().transform((v) => v ?? undefined);
