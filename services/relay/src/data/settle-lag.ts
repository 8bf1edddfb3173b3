/**
 * Backpressure from billing's settles (docs/security.md ("Overspend bound")): billing writes its settle backlog
 * to Redis every second with a short TTL; the relay reads it once a second (never per request)
 * and counts settles as behind when the key is missing (billing not measuring: fail safe) or the
 * backlog exceeds the bounds. While behind, every request pre-consumes.
 */
import { type Logger, outageLog, type Redis } from '@aigw/common';

/** Written by billing (services/billing/src/transport/kafka/settle-lag.ts). */
export const SETTLE_LAG_KEY = 'billing:settle-lag';

export function settleLagWatch(opts: {
  redis: Redis;
  logger: Logger;
  /** 0 turns backpressure off (never behind). */
  maxLagMs: number;
  maxLagEvents: number;
  everyMs?: number;
}): { behind(): boolean; stop(): void; check(): Promise<void> } {
  let behind = opts.maxLagMs > 0;
  let warned = false;
  // A Redis outage is told once (a warn line, no stack), and its end once: read every second,
  // it logged a stack trace a second for as long as Redis was away.
  const outage = outageLog(opts.logger, {
    down: 'could not read the settle lag: pre-consuming every request until it is readable (logged once per outage)',
    back: 'settle lag readable again',
  });
  const check = async () => {
    if (opts.maxLagMs <= 0) return;
    try {
      const raw = await opts.redis.get(SETTLE_LAG_KEY);
      const lag = raw ? (JSON.parse(raw) as { events?: number; ms?: number }) : undefined;
      const next = !lag || (lag.ms ?? Infinity) > opts.maxLagMs || (lag.events ?? Infinity) > opts.maxLagEvents;
      if (next !== behind && (next || warned)) {
        opts.logger.warn(
          { lag: lag ?? null },
          next ? 'settles behind: pre-consuming every request' : 'settles caught up',
        );
        warned = next;
      }
      behind = next;
      outage.ok();
    } catch (err) {
      behind = true;
      outage.failed(err);
    }
  };
  const timer = setInterval(() => void check(), opts.everyMs ?? 1_000);
  timer.unref();
  void check();
  return { behind: () => behind, stop: () => clearInterval(timer), check };
}
