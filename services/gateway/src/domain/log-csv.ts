/**
 * The CSV of a log export (GET /api/log/export, /api/log/self/export): RFC 4180 quoting, CRLF
 * line ends, a UTF-8 byte order mark first (Excel reads a file without one in the system's code
 * page and garbles Chinese), and a header row of the API's field names.
 */

/** A log as the API answers it (snake_case). */
export type LogRow = Record<string, unknown>;

/** The columns of an admin's export; a user's own leaves out `channel` and `ip`. */
export const ADMIN_COLUMNS = [
  'id',
  'created_at',
  'time',
  'type',
  'user_id',
  'username',
  'token_name',
  'model_name',
  'quota',
  'prompt_tokens',
  'completion_tokens',
  'use_time',
  'is_stream',
  'group',
  'channel',
  'ip',
  'request_id',
  'content',
  'other',
] as const;
export const SELF_COLUMNS = ADMIN_COLUMNS.filter((c) => c !== 'channel' && c !== 'ip');

export const BOM = '\uFEFF';

/**
 * One field. Text that a spreadsheet would run as a formula (=, +, -, @, tab or CR first: a token
 * name or a log's content is typed by users) gets a leading apostrophe; numbers are written as
 * they are.
 */
export function csvField(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  let s = typeof v === 'string' ? v : JSON.stringify(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** One line (CRLF-terminated) of the given columns. */
export function csvLine(values: unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/** `2026-11-27 11:31:27` (UTC) for unix seconds. */
export function utcTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

/** The BOM and the header row. */
export function csvHead(columns: readonly string[]): string {
  return BOM + csvLine([...columns]);
}

/** A log's line: `time` is its created_at as UTC text. */
export function csvRow(columns: readonly string[], log: LogRow): string {
  return csvLine(columns.map((c) => (c === 'time' ? utcTime(Number(log.created_at ?? 0)) : log[c])));
}
