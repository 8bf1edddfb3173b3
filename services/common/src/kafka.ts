import { deadLetter } from '@aigw/proto/topics';
import {
  create,
  type DescMessage,
  fromBinary,
  type MessageInitShape,
  type MessageShape,
  toBinary,
} from '@bufbuild/protobuf';
import { type Consumer, type IHeaders, Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import type { Logger } from './logger.ts';
import { kafkaConsumed } from './metrics.ts';

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

/** Creates topics that do not exist yet (idempotent). */
export async function ensureTopics(kafka: Kafka, topics: string[], numPartitions = 3): Promise<void> {
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
    await producer.send({ topic, acks: -1, messages });
  };
  return {
    async publish(topic, schema, message, key, headers) {
      const value = Buffer.from(toBinary(schema, create(schema, message)));
      await publishRaw(topic, [{ key, value, ...(headers ? { headers } : {}) }]);
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
  /** Sees the kafkajs consumer before it connects (its instrumentation events: metrics, tests). */
  instrument?: (consumer: Consumer) => void;
  handle(event: MessageShape<D>, meta: { key: string; partition: number; offset: string }): Promise<void>;
}

/**
 * Runs a consumer of protobuf events. A failing message is retried with backoff; after the last
 * attempt it is copied to the dead-letter topic (with the error in a header) and skipped, so one bad
 * event never blocks a partition. Handlers must be idempotent: delivery is at least once.
 */
export async function runConsumer<D extends DescMessage>(opts: ConsumerOptions<D>): Promise<{ stop(): Promise<void> }> {
  const { kafka, groupId, topic, schema, logger, publisher, handle } = opts;
  const maxAttempts = opts.maxAttempts ?? 5;
  const dlq = opts.deadLetterTopic ?? deadLetter(topic);
  // A fetch waits at most 1 s for data (kafkajs' default is 5 s): disconnect() waits for the
  // fetch in flight, so a service with two idle consumers took 9 s to exit on SIGTERM. A fetch
  // still returns as soon as a message arrives; idle, it costs one small request a second.
  const consumer: Consumer = kafka.consumer({
    groupId,
    sessionTimeout: 30_000,
    heartbeatInterval: 3_000,
    maxWaitTimeInMs: 1_000,
  });
  if (opts.onGroupJoin) consumer.on(consumer.events.GROUP_JOIN, opts.onGroupJoin);
  opts.instrument?.(consumer);
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: opts.fromBeginning ?? true });
  await consumer.run({
    partitionsConsumedConcurrently: 3,
    eachMessage: async ({ message, partition }) => {
      const key = message.key?.toString() ?? '';
      const meta = { key, partition, offset: message.offset };
      let lastErr: unknown;
      for (let attempt = 1; attempt <= maxAttempts; attempt++) {
        try {
          const event = fromBinary(schema, message.value ?? new Uint8Array());
          await handle(event, meta);
          kafkaConsumed.inc({ topic, result: attempt === 1 ? 'ok' : 'retried' });
          return;
        } catch (err) {
          lastErr = err;
          if (attempt < maxAttempts) await sleep(Math.min(50 * 2 ** attempt, 2_000));
        }
      }
      logger.error({ err: lastErr, topic, ...meta }, 'event dead-lettered');
      await publisher.publishRaw(dlq, [
        {
          key,
          value: message.value ?? Buffer.alloc(0),
          headers: { 'x-error': String(lastErr instanceof Error ? lastErr.message : lastErr), 'x-source-topic': topic },
        },
      ]);
      kafkaConsumed.inc({ topic, result: 'dead_lettered' });
    },
  });
  return { stop: () => consumer.disconnect() };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A consumer's liveness, for readiness checks. */
export interface ConsumerHandle {
  stop(): Promise<void>;
  health(): {
    state: 'starting' | 'consuming' | 'rejoining' | 'stalled' | 'stopped';
    sinceMs: number;
    lastProgressMs: number;
  };
}

/** One decoded event of a batch, with where it came from. */
export interface BatchItem<D extends DescMessage> {
  event: MessageShape<D>;
  key: string;
  partition: number;
  offset: string;
}

export interface BatchConsumerOptions<D extends DescMessage> extends Omit<ConsumerOptions<D>, 'handle'> {
  /** One partition's events in offset order; must be idempotent; throwing retries the batch. */
  handleBatch(items: BatchItem<D>[]): Promise<void>;
  maxBatchSize?: number;
}

/**
 * Runs a consumer that hands events over in batches (interim version, replaced by the pipeline
 * branch): offsets are resolved only after `handleBatch` returned, heartbeats keep the member in
 * its group while a batch runs. A batch that keeps failing is retried item by item; an item that
 * still fails is dead-lettered like runConsumer does.
 */
export async function runBatchConsumer<D extends DescMessage>(opts: BatchConsumerOptions<D>): Promise<ConsumerHandle> {
  const { kafka, groupId, topic, schema, logger, publisher } = opts;
  const maxAttempts = opts.maxAttempts ?? 5;
  const maxBatch = opts.maxBatchSize ?? 500;
  const dlq = opts.deadLetterTopic ?? deadLetter(topic);
  const consumer: Consumer = kafka.consumer({
    groupId,
    sessionTimeout: 30_000,
    heartbeatInterval: 3_000,
    maxWaitTimeInMs: 1_000,
  });
  let state: ReturnType<ConsumerHandle['health']>['state'] = 'starting';
  let since = Date.now();
  let lastProgress = Date.now();
  const enter = (s: typeof state) => {
    if (s !== state) {
      state = s;
      since = Date.now();
    }
  };
  consumer.on(consumer.events.GROUP_JOIN, () => {
    enter('consuming');
    opts.onGroupJoin?.();
  });
  consumer.on(consumer.events.REBALANCING, () => enter('rejoining'));
  consumer.on(consumer.events.CRASH, () => enter('stalled'));
  consumer.on(consumer.events.FETCH, () => {
    lastProgress = Date.now();
  });
  opts.instrument?.(consumer);
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: opts.fromBeginning ?? true });

  const attempt = async (items: BatchItem<D>[], heartbeat: () => Promise<void>): Promise<unknown> => {
    let lastErr: unknown;
    for (let i = 1; i <= maxAttempts; i++) {
      const beat = setInterval(() => void heartbeat().catch(() => undefined), 1_000);
      try {
        await opts.handleBatch(items);
        return undefined;
      } catch (err) {
        lastErr = err;
        if (i < maxAttempts) await sleep(Math.min(50 * 2 ** i, 2_000));
      } finally {
        clearInterval(beat);
      }
    }
    return lastErr ?? new Error('batch failed');
  };

  await consumer.run({
    partitionsConsumedConcurrently: 3,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
      const messages = batch.messages;
      for (let start = 0; start < messages.length; start += maxBatch) {
        if (!isRunning() || isStale()) return;
        const chunk = messages.slice(start, start + maxBatch);
        const items: BatchItem<D>[] = [];
        const poison: { message: (typeof chunk)[number]; err: unknown }[] = [];
        for (const message of chunk) {
          try {
            items.push({
              event: fromBinary(schema, message.value ?? new Uint8Array()),
              key: message.key?.toString() ?? '',
              partition: batch.partition,
              offset: message.offset,
            });
          } catch (err) {
            poison.push({ message, err });
          }
        }
        const failure = items.length > 0 ? await attempt(items, heartbeat) : undefined;
        if (failure) {
          // Find the failing events one by one; the others are handled (idempotently) again.
          for (const item of items) {
            const err = await attempt([item], heartbeat);
            if (err)
              poison.push({ message: chunk.find((m) => m.offset === item.offset) as (typeof chunk)[number], err });
          }
        }
        for (const { message, err } of poison) {
          logger.error({ err, topic, partition: batch.partition, offset: message.offset }, 'event dead-lettered');
          await publisher.publishRaw(dlq, [
            {
              key: message.key?.toString() ?? '',
              value: message.value ?? Buffer.alloc(0),
              headers: { 'x-error': String(err instanceof Error ? err.message : err), 'x-source-topic': topic },
            },
          ]);
        }
        kafkaConsumed.inc({ topic, result: 'ok' }, items.length);
        resolveOffset((chunk[chunk.length - 1] as (typeof chunk)[number]).offset);
        await heartbeat();
        lastProgress = Date.now();
      }
    },
  });
  return {
    async stop() {
      await consumer.disconnect();
      enter('stopped');
    },
    health: () => ({ state, sinceMs: since, lastProgressMs: lastProgress }),
  };
}
