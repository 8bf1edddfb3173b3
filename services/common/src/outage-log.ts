import type { Logger } from 'pino';

/**
 * Logs a failure that repeats every tick (a Redis read a second) once per outage: a warn line
 * when it starts, with the error's message and no stack, and an info line when it ends, with how
 * long it lasted and how many attempts failed. A stack trace a second for as long as Redis was
 * away buried every other line.
 */
export function outageLog(logger: Pick<Logger, 'warn' | 'info'>, messages: { down: string; back: string }) {
  let since = 0;
  let failures = 0;
  return {
    /** An attempt failed: logged only when it is the first of an outage. */
    failed(err: unknown): void {
      failures++;
      if (since) return;
      since = Date.now();
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, messages.down);
    },
    /** An attempt succeeded: ends the outage, if one was going on. */
    ok(): void {
      if (!since) return;
      logger.info({ downMs: Date.now() - since, failures }, messages.back);
      since = 0;
      failures = 0;
    },
  };
}
