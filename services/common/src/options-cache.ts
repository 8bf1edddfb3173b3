import { randomUUID } from 'node:crypto';
import { OptionChangedEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import type { Kafka } from 'kafkajs';
import type { ConsumerHealth } from './consumer-health.ts';
import { type Publisher, runConsumer, topicName } from './kafka.ts';
import type { Logger } from './logger.ts';
import { type OptionAccessors, optionAccessors } from './option-catalogue.ts';

/** What the cache needs from the users service's OptionsService client. */
export interface OptionsSource {
  listOptions(req: {
    includeSecrets: boolean;
  }): Promise<{ options: { key: string; value: string }[]; version: number }>;
  listOptionChanges(req: {
    sinceVersion: number;
  }): Promise<{ options: { key: string; value: string }[]; version: number }>;
}

/**
 * An in-memory copy of the system options, kept current by option-changed events. Its accessors
 * take catalogue keys only and fall back to the catalogue's defaults (option-catalogue.ts).
 */
export interface OptionsCache extends OptionAccessors {
  all(): Record<string, string>;
  readonly version: number;
  /** Applies one change at once (the owner calls this for its own writes). */
  apply(key: string, value: string, version: number): void;
  onChange(listener: (key: string, value: string) => void): void;
  /** The change consumer's health (consumerRegistry: readiness and liveness). */
  health(): ConsumerHealth;
  stop(): Promise<void>;
}

/**
 * Loads every option from the users service, then follows `aigw.option-changed.v1` with a consumer
 * group of its own (every replica sees every change, within a second) and catches up every
 * `resyncMs` through ListOptionChanges in case an event was missed.
 */
export async function createOptionsCache(opts: {
  source: OptionsSource;
  kafka: Kafka;
  publisher: Publisher;
  logger: Logger;
  service: string;
  resyncMs?: number;
}): Promise<OptionsCache> {
  const values = new Map<string, string>();
  const listeners: ((key: string, value: string) => void)[] = [];
  let version = 0;

  const apply = (key: string, value: string, v: number) => {
    const changed = values.get(key) !== value;
    values.set(key, value);
    version = Math.max(version, v);
    if (changed) for (const l of listeners) l(key, value);
  };

  const first = await retryUnavailable(() => opts.source.listOptions({ includeSecrets: true }), opts.logger);
  for (const o of first.options) values.set(o.key, o.value);
  version = first.version;

  const catchUp = () =>
    opts.source
      .listOptionChanges({ sinceVersion: version })
      .then((res) => {
        for (const o of res.options) apply(o.key, o.value, res.version);
        version = Math.max(version, res.version);
      })
      .catch((err) => opts.logger.warn({ err }, 'options resync failed'));

  const consumer = await runConsumer({
    kafka: opts.kafka,
    groupId: `${opts.service}.options.${randomUUID()}`,
    topic: topicName(TOPICS.optionChanged),
    schema: OptionChangedEventSchema,
    logger: opts.logger,
    publisher: opts.publisher,
    fromBeginning: false,
    // A change published while the group was joining is not delivered (new group, latest offset).
    onGroupJoin: () => void catchUp(),
    handle: async (event) => apply(event.key, event.value, event.version),
  });

  const resync = setInterval(() => void catchUp(), opts.resyncMs ?? 30_000);
  resync.unref();

  return {
    ...optionAccessors((key) => values.get(key)),
    all: () => Object.fromEntries(values),
    get version() {
      return version;
    },
    apply,
    onChange: (l) => {
      listeners.push(l);
    },
    health: () => consumer.health(),
    stop: async () => {
      clearInterval(resync);
      await consumer.stop();
    },
  };
}

/**
 * Retries a call while its peer is not up yet (services start in any order in a cluster): every
 * 500 ms for up to `totalMs`, then gives up with the last error.
 */
export async function retryUnavailable<T>(call: () => Promise<T>, logger: Logger, totalMs = 60_000): Promise<T> {
  const until = Date.now() + totalMs;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if ((code !== 'UNAVAILABLE' && code !== 'DEADLINE_EXCEEDED') || Date.now() > until) throw err;
      logger.info({ code }, 'peer not ready, retrying');
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
