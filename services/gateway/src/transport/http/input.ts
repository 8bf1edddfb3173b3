import { invalid } from '@aigw/common/errors';

/** A query or body value as text ('' when absent or not a scalar). */
export function text(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return '';
}

/** A value as text, or undefined when absent (for "only the fields given change"). */
export function optionalText(v: unknown): string | undefined {
  return v === undefined || v === null ? undefined : text(v);
}

/** A whole number from a query or body value; `fallback` when absent, INVALID_ARGUMENT when not whole. */
export function wholeNumber(v: unknown, fallback: number, message = '无效的参数'): number {
  if (v === undefined || v === null || v === '') return fallback;
  const n = typeof v === 'number' ? v : Number(text(v));
  if (!Number.isInteger(n)) throw invalid(message);
  return n;
}

/** The body as a plain object (Express leaves it undefined without a JSON content type). */
export function bodyOf(req: { body?: unknown }): Record<string, unknown> {
  return req.body && typeof req.body === 'object' && !Array.isArray(req.body)
    ? (req.body as Record<string, unknown>)
    : {};
}
