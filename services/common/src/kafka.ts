import { create, type DescMessage, type MessageInitShape, type MessageShape, toBinary } from '@bufbuild/protobuf';
import { type Consumer, type IHeaders, Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import { z } from 'zod';
import type { ConsumerHealth, ConsumerSettings } from './consumer-health.ts';
import type { Pace } from './kafka-consumer/pace.ts';
import { runBatchConsumer } from './kafka-consumer/run.ts';
import type { Logger } from './logger.ts';
import { kafkaProducerErrors, producerInFlightAdd } from './metrics.ts';
import { messageTraceHeaders } from './telemetry.ts';

/**
 * The real name of a topic: `KAFKA_TOPIC_PREFIX` + base. Tests give each in-process stack its own
 * prefix so stacks never read each other's events; production leaves it empty. Always go through
 * this when producing or consuming, and for consumer group ids too: stacks sharing one group
 * steal each other's partitions.
 */
export function topicName(base: string): string {
  return (process.env.KAFKA_TOPIC_PREFIX ?? '') + base;
}

/** Creates a kafkajs client whose own logs go to our logger at warn and above. */
export function createKafka(brokers: string[], clientId: string, logger: Logger): Kafka {
  return new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.WARN,
    retry: { retries: 8, initialRetryTime: 100 },
    logCreator:
      () =>
      ({ level, log }) => {
        const { message, ...rest } = log;
        // Producer retries are bounded on purpose (a request must not wait forever for Kafka);
        // idempotence still holds per producer session, so this warning is noise.
        if (message.startsWith('Limiting retries for the idempotent producer')) return;
        if (level <= logLevel.ERROR) logger.error(rest, `kafka: ${message}`);
        else logger.warn(rest, `kafka: ${message}`);
      },
  });
}

/**
 * Creates topics that do not exist yet (idempotent). A broker that has just started can answer
 * that it does not host a partition it is still creating (UNKNOWN_TOPIC_OR_PARTITION) or that its
 * coordinator is loading: such retriable answers are tried again, up to about 10 s.
 */
export async function ensureTopics(kafka: Kafka, topics: string[], numPartitions = 3): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await createMissingTopics(kafka, topics, numPartitions);
      return;
    } catch (err) {
      if (attempt >= 8 || !retriableKafkaError(err)) throw err;
      await sleep(250 * attempt);
    }
  }
}

async function createMissingTopics(kafka: Kafka, topics: string[], numPartitions: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({ topic, numPartitions, replicationFactor: 1 })),
      });
    }
  } finally {
    await admin.disconnect();
  }
}

/** A Kafka error the broker marks retriable (kafkajs: `retriable`), or its retries running out on one. */
function retriableKafkaError(err: unknown): boolean {
  const e = err as { retriable?: boolean; name?: string; originalError?: { retriable?: boolean } };
  return e?.retriable === true || (e?.name === 'KafkaJSNumberOfRetriesExceeded' && e.originalError?.retriable === true);
}

/** Publishes protobuf events: idempotent producer, acks from all in-sync replicas. */
export interface Publisher {
  publish<D extends DescMessage>(
    topic: string,
    schema: D,
    message: MessageInitShape<D>,
    key: string,
    headers?: IHeaders,
  ): Promise<void>;
  publishRaw(topic: string, messages: { key: string; value: Buffer; headers?: IHeaders }[]): Promise<void>;
  disconnect(): Promise<void>;
}

export async function createPublisher(kafka: Kafka): Promise<Publisher> {
  const producer: Producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 5,
    allowAutoTopicCreation: true,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  const publishRaw: Publisher['publishRaw'] = async (topic, messages) => {
    producerInFlightAdd(messages.length);
    try {
      await producer.send({ topic, acks: -1, messages });
    } catch (err) {
      kafkaProducerErrors.inc({ topic });
      throw err;
    } finally {
      producerInFlightAdd(-messages.length);
    }
  };
  return {
    async publish(topic, schema, message, key, headers) {
      const value = Buffer.from(toBinary(schema, create(schema, message)));
      // The request that caused the event continues in its consumers' traces.
      const h = headers ?? messageTraceHeaders(topic);
      await publishRaw(topic, [{ key, value, ...(h ? { headers: h } : {}) }]);
    },
    publishRaw,
    disconnect: () => producer.disconnect(),
  };
}

export interface ConsumerOptions<D extends DescMessage> {
  kafka: Kafka;
  groupId: string;
  topic: string;
  schema: D;
  logger: Logger;
  /** Where messages go after `maxAttempts` failures; defaults to deadLetter(topic). */
  publisher: Publisher;
  deadLetterTopic?: string;
  maxAttempts?: number;
  fromBeginning?: boolean;
  /** Called each time the consumer (re)joins its group, e.g. to catch up on what it missed. */
  onGroupJoin?: () => void;
  /** Sees each kafkajs consumer before it connects (its instrumentation events: metrics, tests). */
  instrument?: (consumer: Consumer) => void;
  /** Overrides of the KAFKA_CONSUMER_* settings (tests: short session timeouts and stall times). */
  settings?: Partial<ConsumerSettings>;
  /** Partitions handled at the same time (default 3). */
  partitionsConsumedConcurrently?: number;
  handle(event: MessageShape<D>, meta: { key: string; partition: number; offset: string }): Promise<void>;
}

/** One event of a batch, with where it came from. */
export interface BatchItem<D extends DescMessage> {
  event: MessageShape<D>;
  key: string;
  partition: number;
  offset: string;
}

export interface BatchConsumerOptions<D extends DescMessage> extends Omit<ConsumerOptions<D>, 'handle'> {
  /** Handles one partition's events in offset order; idempotent; throwing retries the batch with backoff, and a batch that keeps failing is split to isolate poison events, which go to the dead-letter topic. */
  handleBatch(items: BatchItem<D>[]): Promise<void>;
  /** Largest batch handed to handleBatch (default 500). */
  maxBatchSize?: number;
  /**
   * The most a fetch brings of one partition, in bytes (kafkajs' default, 1 MB, when unset): a
   * batch is at most one fetch, so a consumer whose batch cost is per document, not per event
   * (the logs'), takes more per fetch.
   */
  maxBytesPerPartition?: number;
  /** Larger batches when busy (see kafka-consumer/pace.ts); none when unset. */
  pace?: Pace;
  /**
   * Partitions' batches that arrive together go to handleBatch as one call (kafka-consumer/merge.ts):
   * only for a handler that takes events of several partitions at once.
   */
  mergePartitions?: boolean;
}

const usagePaceSchema = z.object({
  KAFKA_USAGE_PACE_MS: z.coerce.number().int().min(0).max(5_000).optional(),
  KAFKA_USAGE_PACE_RATE: z.coerce.number().min(1).default(50),
});

/**
 * Each usage consumer's own pace when KAFKA_USAGE_PACE_MS is unset (ms). Billing's settle moves
 * wallets and frees holds, so it waits least; the logs' lists and the channels' used quota can
 * wait a second (the log lag stays under 2 s at 1,000 req/s).
 */
export const USAGE_PACE_MS = { billing: 500, logs: 1_000, channels: 1_000 } as const;

/**
 * The pace of a usage topic consumer (billing's settle, the logs, the channels' used quota): a
 * partition that brings `KAFKA_USAGE_PACE_RATE` events per second or more (50) is fetched at most
 * every `KAFKA_USAGE_PACE_MS` (default per consumer, USAGE_PACE_MS; 0 turns it off). A batch's
 * store writes grow with the users and scopes in it, not with its size: at 500 req/s, fetching
 * again at once gave batches of about 10 events per partition and cost the store 1.5 ms of CPU
 * per request; a pace of 250 ms 0.8, of 1 s 0.4 (docs/benchmarks.md). The price is up to that
 * wait added to the settle and log lags under load; a quiet partition is consumed at once.
 */
export function usagePace(
  consumer: keyof typeof USAGE_PACE_MS,
  env: Record<string, string | undefined> = process.env,
): { pace: Pace } {
  const clean = Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('KAFKA_USAGE_PACE_') && v));
  const s = usagePaceSchema.parse(clean);
  return { pace: { ms: s.KAFKA_USAGE_PACE_MS ?? USAGE_PACE_MS[consumer], minRate: s.KAFKA_USAGE_PACE_RATE } };
}

export interface ConsumerHandle {
  stop(): Promise<void>;
  /** consuming / stalled / stopped, for readiness and liveness */
  health(): ConsumerHealth;
}

/**
 * Runs a consumer of protobuf events one at a time: runBatchConsumer with batches of one, so a
 * failing event is retried alone and then dead-lettered. Handlers must be idempotent.
 */
export async function runConsumer<D extends DescMessage>(opts: ConsumerOptions<D>): Promise<ConsumerHandle> {
  const { handle, ...rest } = opts;
  return runBatchConsumer({
    ...rest,
    maxBatchSize: 1,
    handleBatch: async (items) => {
      for (const it of items) await handle(it.event, { key: it.key, partition: it.partition, offset: it.offset });
    },
  });
}

export { isTransient } from './kafka-consumer/chunk.ts';
export { runBatchConsumer };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
