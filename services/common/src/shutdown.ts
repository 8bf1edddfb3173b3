import type { Logger } from './logger.ts';
import { stopTelemetry } from './telemetry.ts';

/** What every service's composition root returns. */
export interface App {
  start(): Promise<void>;
  /** Stops accepting work, drains in-flight work, closes clients. Must be safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Runs an app as the process: start it (exit 1 on failure), then stop it once on SIGTERM/SIGINT
 * within `graceMs` (25 s unless the service sets its own: the relay's drain takes minutes), then
 * exit. A second signal exits at once. The Pod's terminationGracePeriodSeconds must exceed it.
 */
export async function runMain(app: App, logger: Logger, graceMs = 25_000): Promise<void> {
  try {
    await app.start();
  } catch (err) {
    logger.fatal({ err }, 'start-up failed');
    process.exit(1);
  }
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error('shutdown timed out');
      process.exit(1);
    }, graceMs);
    timer.unref();
    app
      .stop()
      .then(() => stopTelemetry())
      .then(() => process.exit(0))
      .catch((err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/** Collects stop functions and runs them in reverse order of registration. */
export function stopStack(): { add(fn: () => Promise<unknown> | unknown): void; run(): Promise<void> } {
  const fns: (() => Promise<unknown> | unknown)[] = [];
  let done: Promise<void> | undefined;
  return {
    add: (fn) => {
      fns.push(fn);
    },
    run: () => {
      done ??= (async () => {
        for (const fn of fns.reverse()) {
          try {
            await fn();
          } catch {
            // keep closing the rest
          }
        }
      })();
      return done;
    },
  };
}
