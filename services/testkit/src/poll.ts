/**
 * Polling for tests: the one way a test waits for something the system does asynchronously
 * (a Kafka consumer, a cache refresh, a poller). It fails loudly: a condition that never holds is
 * an error naming what was awaited and the last value seen, never a silent return of that value.
 */

export interface EventuallyOptions {
  /** How long to keep trying (default 15 s). */
  timeoutMs?: number;
  /** Pause between attempts (default 100 ms). */
  intervalMs?: number;
  /** What is awaited, for the error on timeout (e.g. 'the wallet refunded'). */
  what?: string;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_INTERVAL_MS = 100;
const PREVIEW_CHARS = 500;

/** A short JSON rendering of a value for an error message (Maps and Sets as arrays, BigInts as strings). */
export function preview(v: unknown, max = PREVIEW_CHARS): string {
  let text: string;
  try {
    text =
      JSON.stringify(v, (_k, x: unknown) => {
        if (typeof x === 'bigint') return `${x}n`;
        if (x instanceof Map) return Object.fromEntries(x);
        if (x instanceof Set) return [...x];
        if (x instanceof Error) return `${x.name}: ${x.message}`;
        return x;
      }) ?? String(v);
  } catch {
    text = String(v);
  }
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/**
 * Calls `fn` until `check` accepts its value and returns that value; throws when `timeoutMs`
 * passes first, with `what` and the last value in the message. `opts` may be the timeout alone.
 * An error thrown by `fn` or `check` ends the wait at once (it is not retried).
 */
export async function eventually<T>(
  fn: () => Promise<T> | T,
  check: (v: T) => boolean,
  opts: number | EventuallyOptions = {},
): Promise<T> {
  const o = typeof opts === 'number' ? { timeoutMs: opts } : opts;
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const intervalMs = o.intervalMs ?? DEFAULT_INTERVAL_MS;
  const started = Date.now();
  const deadline = started + timeoutMs;
  let attempts = 0;
  for (;;) {
    const v = await fn();
    attempts += 1;
    if (check(v)) return v;
    if (Date.now() >= deadline) {
      throw new Error(
        `eventually: ${o.what ?? 'condition'} did not hold within ${timeoutMs} ms ` +
          `(${attempts} attempts, ${Date.now() - started} ms); last value: ${preview(v)}`,
      );
    }
    await new Promise((r) => setTimeout(r, Math.min(intervalMs, Math.max(0, deadline - Date.now()))));
  }
}
