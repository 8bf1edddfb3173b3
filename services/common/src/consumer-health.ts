/**
 * Consumer health for probes: the settings that decide when a Kafka consumer counts as stalled,
 * and a per-service registry that turns its consumers' health into /readyz and /healthz checks.
 * A consumer that is not consuming (stalled with lag, or out of its group for too long) makes the
 * service not ready at once and, after a grace period, not live, so an orchestrator restarts it.
 */
import { z } from 'zod';
import type { ReadinessCheck } from './http.ts';

/** What a running consumer reports (see runBatchConsumer). */
export interface ConsumerHealth {
  state: 'starting' | 'consuming' | 'rejoining' | 'stalled' | 'stopped';
  /** Since when (epoch ms) the consumer is in this state. */
  sinceMs: number;
  /** Last time (epoch ms) it handled a batch or found nothing left to handle; 0 before either. */
  lastProgressMs: number;
}

const settingsSchema = z.object({
  /** Group session timeout: a member that sends no heartbeat for this long is removed. */
  KAFKA_CONSUMER_SESSION_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(30_000),
  KAFKA_CONSUMER_HEARTBEAT_MS: z.coerce.number().int().min(100).default(3_000),
  /** Lag with no progress for this long, or out of the group this long: stalled (not ready). */
  KAFKA_CONSUMER_STALL_MS: z.coerce.number().int().min(1_000).default(30_000),
  /** Not ready for this long: not live either (the orchestrator restarts the process). */
  KAFKA_CONSUMER_LIVENESS_GRACE_MS: z.coerce.number().int().min(0).default(120_000),
  /** Out of the group this long: the kafkajs consumer is dropped and a new one joins. */
  KAFKA_CONSUMER_REJOIN_MS: z.coerce.number().int().min(1_000).default(60_000),
  /**
   * One handler call longer than this (a write that never returns: the driver has no socket
   * timeout) is abandoned: logged, the kafkajs consumer replaced, and the batch fetched again from
   * the committed offset by the new one (handlers are idempotent). Below the liveness grace, so the
   * consumer recovers by itself before the orchestrator restarts the process.
   */
  KAFKA_CONSUMER_BATCH_BUDGET_MS: z.coerce.number().int().min(100).default(60_000),
  /** How often committed offsets are compared with high watermarks (lag metrics, stall check). */
  KAFKA_CONSUMER_LAG_SAMPLE_MS: z.coerce.number().int().min(100).default(5_000),
});

export type ConsumerSettings = z.infer<typeof settingsSchema>;

/** The consumer settings from the environment (defaults above), parsed once. */
export function consumerSettings(env: Record<string, string | undefined> = process.env): ConsumerSettings {
  const clean = Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('KAFKA_CONSUMER_') && v));
  return settingsSchema.parse(clean);
}

/** Ready unless stalled or stopped (starting and rejoining are ready until they become stalled). */
export function isConsuming(h: ConsumerHealth): boolean {
  return h.state !== 'stalled' && h.state !== 'stopped';
}

/** Anything with a health report: a consumer handle, an options cache's consumer. */
export interface HasHealth {
  health(): ConsumerHealth;
}

/**
 * The consumers of one service, for its probes. Tests run several services in one process, so
 * each service keeps its own registry rather than a process-wide one.
 */
export function consumerRegistry(
  settings: Pick<ConsumerSettings, 'KAFKA_CONSUMER_LIVENESS_GRACE_MS'> = consumerSettings(),
) {
  const consumers = new Map<string, HasHealth>();
  const failing = (): [string, ConsumerHealth][] =>
    [...consumers]
      .map(([name, c]) => [name, c.health()] as [string, ConsumerHealth])
      .filter(([, h]) => !isConsuming(h));
  const describe = (bad: [string, ConsumerHealth][]) =>
    bad.map(([name, h]) => `${name} ${h.state} for ${Math.round((Date.now() - h.sinceMs) / 1000)}s`).join(', ');

  return {
    /** Watches a consumer under a name (shown in the probe's answer). */
    add(name: string, consumer: HasHealth): void {
      consumers.set(name, consumer);
    },
    /** For /readyz: fails while any consumer is stalled or stopped. */
    readiness: (async () => {
      const bad = failing();
      if (bad.length > 0) throw new Error(`consumers not consuming: ${describe(bad)}`);
    }) satisfies ReadinessCheck,
    /** For /healthz: fails once a consumer has not been consuming for the grace period. */
    liveness: (async () => {
      const now = Date.now();
      const bad = failing().filter(
        ([, h]) => h.state === 'stalled' && now - h.sinceMs >= settings.KAFKA_CONSUMER_LIVENESS_GRACE_MS,
      );
      if (bad.length > 0) throw new Error(`consumers stalled past the grace period: ${describe(bad)}`);
    }) satisfies ReadinessCheck,
    /**
     * Calls `alert` once each time a consumer becomes stalled (again only after it consumed in
     * between), looking every `everyMs`; returns the stop. Admin alerts (AdminWebhookUrl) use it.
     */
    onStall(alert: (name: string, health: ConsumerHealth) => void, everyMs = 5_000): () => void {
      const stalled = new Set<string>();
      const timer = setInterval(() => {
        for (const [name, c] of consumers) {
          const h = c.health();
          if (h.state === 'consuming') stalled.delete(name);
          else if (h.state === 'stalled' && !stalled.has(name)) {
            stalled.add(name);
            alert(name, h);
          }
        }
      }, everyMs);
      timer.unref();
      return () => clearInterval(timer);
    },
    /** Every consumer's health, by name. */
    snapshot: (): Record<string, ConsumerHealth> =>
      Object.fromEntries([...consumers].map(([name, c]) => [name, c.health()])),
  };
}

export type ConsumerRegistry = ReturnType<typeof consumerRegistry>;
