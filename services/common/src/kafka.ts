import { deadLetter } from '@aigw/proto/topics';
import {
  create,
  type DescMessage,
  fromBinary,
  type MessageInitShape,
  type MessageShape,
  toBinary,
} from '@bufbuild/protobuf';
import {
  type Admin,
  type Consumer,
  type IHeaders,
  Kafka,
  type KafkaMessage,
  logLevel,
  Partitioners,
  type Producer,
} from 'kafkajs';
import { type ConsumerHealth, type ConsumerSettings, consumerSettings, isConsuming } from './consumer-health.ts';
import type { Logger } from './logger.ts';
import {
  kafkaBatchDuration,
  kafkaBatchesAbandoned,
  kafkaBatchSize,
  kafkaConsumed,
  kafkaConsumerLag,
  kafkaConsumerRejoins,
  kafkaConsumerUp,
  kafkaDeadLetters,
  kafkaOldestUnhandled,
  kafkaProducerErrors,
  producerInFlightAdd,
} from './metrics.ts';
import { consumeSpans, messageTraceHeaders } from './telemetry.ts';

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

/**
 * Runs a consumer of protobuf events a batch at a time (kafkajs eachBatch, offsets resolved by
 * hand). A partition's fetched events are handed over in chunks of `maxBatchSize`; an offset is
 * resolved (and committed within a second) only after handleBatch returned, so what is committed
 * is written. Heartbeats go out while a chunk runs and during retries, so a slow chunk does not
 * lose the group. A failing chunk is retried with backoff; one that keeps failing is halved until
 * the poison events are alone, and those go to the dead-letter topic (undecodable events at once).
 * Errors that look like an unreachable peer or database (network, timeouts, UNAVAILABLE) are
 * retried for as long as they last instead: an outage must not empty a topic into its DLQ.
 *
 * The consumer comes back by itself: a crash (kafkajs CRASH, whatever its `restart`), a rebalance
 * that fails, or a member the coordinator forgot gets a new kafkajs consumer with backoff, forever;
 * so does a consumer out of its group for KAFKA_CONSUMER_REJOIN_MS. health() says whether it is
 * consuming, for /readyz and /healthz (consumer-health.ts).
 */
export async function runBatchConsumer<D extends DescMessage>(opts: BatchConsumerOptions<D>): Promise<ConsumerHandle> {
  const s: ConsumerSettings = { ...consumerSettings(), ...opts.settings };
  const { kafka, groupId, topic, schema, publisher, handleBatch } = opts;
  const log = opts.logger.child({ group: groupId, topic });
  const maxAttempts = Math.max(1, opts.maxAttempts ?? 5);
  const maxBatch = Math.max(1, opts.maxBatchSize ?? 500);
  const dlq = opts.deadLetterTopic ?? deadLetter(topic);
  const fromBeginning = opts.fromBeginning ?? true;
  const labels = { group: groupId, topic };

  let generation = 0;
  let current: Consumer | undefined;
  let stopping = false;
  let stoppedAt = 0;
  let member = false;
  let everJoined = false;
  let leftAt = Date.now();
  let leftFor = 'start';
  let joinedAt = 0;
  let lastProgressMs = 0;
  let assigned: number[] = [];
  let assignedLag = 0;
  let inFlight = 0;
  let restartAttempt = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  /** Producer timestamp of the oldest fetched, unhandled event, per partition. */
  const pendingSince = new Map<number, number>();
  let reported: ConsumerHealth = { state: 'starting', sinceMs: Date.now(), lastProgressMs: 0 };

  const health = (): ConsumerHealth => {
    const now = Date.now();
    let state: ConsumerHealth['state'];
    let since = now;
    if (stopping) {
      state = 'stopped';
      since = stoppedAt;
    } else if (!member) {
      const out = now - leftAt;
      state = out > s.KAFKA_CONSUMER_STALL_MS ? 'stalled' : everJoined ? 'rejoining' : 'starting';
      since = state === 'stalled' ? leftAt + s.KAFKA_CONSUMER_STALL_MS : leftAt;
    } else {
      const clock = Math.max(lastProgressMs, joinedAt);
      const busy = assignedLag > 0 || inFlight > 0;
      state = busy && now - clock > s.KAFKA_CONSUMER_STALL_MS ? 'stalled' : 'consuming';
      since = state === 'stalled' ? clock + s.KAFKA_CONSUMER_STALL_MS : now;
    }
    if (state !== reported.state) {
      // Every change in and out of stalled says why (a consumer must never stop silently).
      if (state === 'stalled')
        log.error(
          {
            why: !member
              ? `out of its group (${leftFor || 'never joined'})`
              : inFlight > 0
                ? 'handler busy'
                : 'lag, no fetch',
            lag: assignedLag,
            inFlight,
            sinceProgressMs: lastProgressMs ? now - lastProgressMs : null,
          },
          'consumer stalled',
        );
      else if (reported.state === 'stalled' && state === 'consuming')
        log.warn({ stalledForMs: now - reported.sinceMs }, 'consumer consuming again');
      reported = { state, sinceMs: since, lastProgressMs };
    }
    reported.lastProgressMs = lastProgressMs;
    kafkaConsumerUp.set({ group: groupId }, isConsuming(reported) ? 1 : 0);
    return { ...reported };
  };

  const leave = (reason: string) => {
    if (!member) return;
    member = false;
    leftAt = Date.now();
    leftFor = reason;
  };

  const scheduleRestart = (reason: string) => {
    if (stopping || restartTimer) return;
    // At most 5 s apart: after a broker outage the consumers are back within seconds of the
    // broker (at 30 s, they came back up to 30 s after it; docs/reliability.md, scenario 4).
    const delay = Math.min(1_000 * 2 ** restartAttempt, 5_000);
    restartAttempt++;
    log.warn({ reason, delayMs: delay, attempt: restartAttempt }, 'consumer restarting');
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      if (stopping) return;
      startConsumer().catch((err) => {
        log.error({ err }, 'consumer could not start; retrying');
        scheduleRestart('start failed');
      });
    }, delay);
  };

  /** Drops the kafkajs consumer (without waiting for a handler that may hang) and starts a new one. */
  const replace = (reason: string) => {
    const old = current;
    generation++;
    current = undefined;
    leave(reason);
    if (old) void withTimeout(old.disconnect(), 10_000).catch(() => undefined);
    scheduleRestart(reason);
  };

  const deadLetterRaw = async (m: KafkaMessage, err: unknown, why: string) => {
    const offset = m.offset;
    log.error({ err, offset, why }, 'event dead-lettered');
    await publisher.publishRaw(dlq, [
      {
        key: m.key?.toString() ?? '',
        value: m.value ?? Buffer.alloc(0),
        headers: { 'x-error': errorText(err), 'x-source-topic': topic, 'x-source-offset': offset },
      },
    ]);
    kafkaConsumed.inc({ topic, result: 'dead_lettered' });
    kafkaDeadLetters.inc({ group: groupId });
  };

  let startingNow = false;
  const startConsumer = async (): Promise<void> => {
    startingNow = true;
    try {
      await startOne();
    } finally {
      startingNow = false;
    }
  };
  const startOne = async (): Promise<void> => {
    const gen = ++generation;
    const mine = () => gen === generation && !stopping;
    const consumer = kafka.consumer({
      groupId,
      sessionTimeout: s.KAFKA_CONSUMER_SESSION_TIMEOUT_MS,
      rebalanceTimeout: Math.max(60_000, s.KAFKA_CONSUMER_SESSION_TIMEOUT_MS),
      heartbeatInterval: Math.min(s.KAFKA_CONSUMER_HEARTBEAT_MS, Math.floor(s.KAFKA_CONSUMER_SESSION_TIMEOUT_MS / 3)),
      // A fetch waits at most 1 s for data (kafkajs' default is 5 s): disconnect() waits for the
      // fetch in flight, so a service with two idle consumers took 9 s to exit on SIGTERM.
      maxWaitTimeInMs: 1_000,
      // Every crash comes back through our own restart (a new consumer, backoff, logged), not
      // kafkajs' in-place restart, which only covers "retriable" errors and left groups empty.
      retry: { retries: 8, initialRetryTime: 100, restartOnFailure: async () => false },
    });
    current = consumer;
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      if (!mine()) return;
      const rejoin = everJoined;
      // Joined again without leaving first: kafkajs rejoined after "not aware of this member".
      if (member) {
        leftFor = 'unknown member';
        leftAt = Date.now();
      }
      member = true;
      everJoined = true;
      joinedAt = Date.now();
      assigned = e.payload.memberAssignment[topic] ?? [];
      for (const p of pendingSince.keys()) if (!assigned.includes(p)) pendingSince.delete(p);
      if (rejoin) {
        kafkaConsumerRejoins.inc({ group: groupId, reason: leftFor });
        log.warn({ reason: leftFor, outMs: joinedAt - leftAt, partitions: assigned }, 'consumer rejoined its group');
      }
      opts.onGroupJoin?.();
    });
    consumer.on(consumer.events.REBALANCING, () => {
      if (mine()) leave('rebalance');
    });
    // Stopped or disconnected underneath us (not by stop()): a new consumer takes over.
    for (const ev of [consumer.events.STOP, consumer.events.DISCONNECT]) {
      consumer.on(ev, () => {
        if (mine() && current === consumer) replace(`consumer ${ev.split('.').pop()}`);
      });
    }
    consumer.on(consumer.events.CRASH, (e) => {
      if (stopping) return;
      // kafkajs disconnects before it reports the crash, so the restart is usually under way.
      log.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed');
      if (!mine()) return;
      leave('crash');
      current = undefined;
      scheduleRestart('crash');
    });
    opts.instrument?.(consumer);
    try {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning });
      await consumer.run({
        partitionsConsumedConcurrently: opts.partitionsConsumedConcurrently ?? 3,
        eachBatchAutoResolve: false,
        autoCommitInterval: 1_000,
        eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
          const alive = () => mine() && isRunning() && !isStale();
          const { partition, messages } = batch;
          if (messages.length === 0) return;
          inFlight++;
          pendingSince.set(partition, Number(messages[0]?.timestamp));
          try {
            for (let i = 0; i < messages.length; i += maxBatch) {
              if (!alive()) return;
              const chunk = messages.slice(i, i + maxBatch);
              const t0 = performance.now();
              const items: { item: BatchItem<D>; raw: KafkaMessage }[] = [];
              for (const m of chunk) {
                try {
                  const event = fromBinary(schema, m.value ?? new Uint8Array());
                  items.push({ item: { event, key: m.key?.toString() ?? '', partition, offset: m.offset }, raw: m });
                } catch (err) {
                  await deadLetterRaw(m, err, 'undecodable');
                }
              }
              const traced = consumeSpans(topic, groupId, partition, chunk);
              let done: boolean;
              try {
                done = await handleChunk(items, { heartbeat, alive });
              } catch (err) {
                traced(err);
                throw err;
              }
              traced();
              if (!done) return;
              const last = chunk[chunk.length - 1] as KafkaMessage;
              resolveOffset(last.offset);
              kafkaBatchSize.observe(labels, items.length);
              kafkaBatchDuration.observe(labels, (performance.now() - t0) / 1000);
              lastProgressMs = Date.now();
              restartAttempt = 0;
              const next = messages[i + maxBatch];
              if (next) pendingSince.set(partition, Number(next.timestamp));
              else pendingSince.delete(partition);
              await commitOffsetsIfNecessary();
              await heartbeat();
            }
          } finally {
            inFlight--;
          }
        },
      });
    } catch (err) {
      if (gen === generation) current = undefined;
      void consumer.disconnect().catch(() => undefined);
      throw err;
    }
    // stop() came while this one was joining.
    if (stopping) await consumer.disconnect();
  };

  /**
   * Hands a chunk over; retries, halves and dead-letters as described above. Returns false when
   * the consumer stopped or lost the partition meanwhile (nothing may be resolved then).
   */
  const handleChunk = async (
    items: { item: BatchItem<D>; raw: KafkaMessage }[],
    ctx: { heartbeat(): Promise<void>; alive(): boolean },
  ): Promise<boolean> => {
    if (items.length === 0) return true;
    let lastErr: unknown;
    for (let attempt = 1; ; attempt++) {
      if (!ctx.alive()) return false;
      try {
        await withHeartbeats(
          () => withBudget(handleBatch(items.map((x) => x.item)), s.KAFKA_CONSUMER_BATCH_BUDGET_MS),
          ctx.heartbeat,
          s.KAFKA_CONSUMER_HEARTBEAT_MS,
        );
        kafkaConsumed.inc({ topic, result: attempt === 1 ? 'ok' : 'retried' }, items.length);
        return true;
      } catch (err) {
        // The group moved on (rebalance, forgotten member): kafkajs rejoins; nothing is resolved.
        if (err instanceof HeartbeatFailed) throw err.cause;
        if (err instanceof OverBudget) {
          // The call may never return: leave it, and let a new consumer fetch the batch again.
          log.error(
            { events: items.length, budgetMs: s.KAFKA_CONSUMER_BATCH_BUDGET_MS, offset: items[0]?.item.offset },
            'batch exceeded its budget; abandoned, the consumer is replaced and the batch fetched again',
          );
          kafkaBatchesAbandoned.inc({ group: groupId });
          replace('batch over budget');
          return false;
        }
        lastErr = err;
        const transient = isTransient(err);
        if (!transient && attempt >= maxAttempts) break;
        if (attempt === 1 || attempt % 10 === 0)
          log.warn({ err, attempt, events: items.length, transient }, 'batch failed; retrying');
        await sleepWithHeartbeats(Math.min(100 * 2 ** attempt, 5_000), ctx.heartbeat, s.KAFKA_CONSUMER_HEARTBEAT_MS);
      }
    }
    if (items.length > 1) {
      const half = Math.ceil(items.length / 2);
      return (await handleChunk(items.slice(0, half), ctx)) && (await handleChunk(items.slice(half), ctx));
    }
    const only = items[0];
    if (only) await deadLetterRaw(only.raw, lastErr, 'handler kept failing');
    return true;
  };

  const lagPartitions = new Set<string>();
  const stopLag = sampleLag();

  /** Every few seconds: lag from committed offsets, the oldest-event age, and the watchdog. */
  function sampleLag(): () => Promise<void> {
    let admin: Admin | undefined;
    let sampling = false;
    const tick = async () => {
      if (sampling || stopping) return;
      sampling = true;
      try {
        admin ??= kafka.admin();
        await admin.connect();
        const [committed, ends] = await Promise.all([
          admin.fetchOffsets({ groupId, topics: [topic] }),
          admin.fetchTopicOffsets(topic),
        ]);
        const byPartition = new Map(
          (committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)] as const),
        );
        let mine = 0;
        for (const e of ends) {
          const c = byPartition.get(e.partition) ?? -1;
          const lag = c >= 0 ? Math.max(0, Number(e.high) - c) : fromBeginning ? Number(e.high) - Number(e.low) : 0;
          kafkaConsumerLag.set({ group: groupId, topic, partition: String(e.partition) }, lag);
          lagPartitions.add(String(e.partition));
          if (assigned.includes(e.partition)) mine += lag;
        }
        assignedLag = member ? mine : 0;
        if (member && mine === 0 && inFlight === 0) lastProgressMs = Date.now();
      } catch (err) {
        log.debug({ err }, 'lag sample failed');
      } finally {
        sampling = false;
      }
      const oldest = Math.min(...pendingSince.values());
      kafkaOldestUnhandled.set(labels, Number.isFinite(oldest) ? Math.max(0, (Date.now() - oldest) / 1000) : 0);
      const h = health();
      // Out of the group too long (a join that never finishes), or a member whose fetch loop
      // died (lag, nothing in flight, no progress): start over with a new consumer.
      const now = Date.now();
      if (stopping || restartTimer || startingNow) return;
      if (!member && now - leftAt > s.KAFKA_CONSUMER_REJOIN_MS) {
        replace('not a member');
      } else if (h.state === 'stalled' && inFlight === 0 && now - h.sinceMs > s.KAFKA_CONSUMER_REJOIN_MS) {
        replace('stalled');
      }
    };
    const timer = setInterval(() => void tick(), s.KAFKA_CONSUMER_LAG_SAMPLE_MS);
    timer.unref();
    return async () => {
      clearInterval(timer);
      await admin?.disconnect().catch(() => undefined);
    };
  }

  try {
    await startConsumer();
  } catch (err) {
    await stopLag();
    throw err;
  }
  health();

  return {
    health,
    async stop() {
      if (stopping) return;
      stopping = true;
      stoppedAt = Date.now();
      if (restartTimer) clearTimeout(restartTimer);
      await stopLag();
      // disconnect() waits for the batch in flight; a handler that hangs must not hang shutdown.
      if (
        current &&
        (await withTimeout(
          current.disconnect().then(() => true),
          15_000,
        )) !== true
      ) {
        log.warn('consumer did not stop within 15 s (a batch still running); leaving it');
      }
      kafkaConsumerUp.remove({ group: groupId });
      kafkaOldestUnhandled.remove(labels);
      for (const partition of lagPartitions) kafkaConsumerLag.remove({ group: groupId, topic, partition });
    },
  };
}

/** Network errors, timeouts and unavailable peers: worth retrying for as long as they last. */
export function isTransient(err: unknown): boolean {
  const e = err as { name?: string; code?: string | number; message?: string } | undefined;
  if (!e) return false;
  if (/^Mongo(Network|ServerSelection|NotConnected|PoolClosed|NetworkTimeout)/.test(e.name ?? '')) return true;
  if (typeof e.code === 'string' && TRANSIENT_CODES.has(e.code)) return true;
  return /ECONNREFUSED|ECONNRESET|ETIMEDOUT|Deadline exceeded|connection .*closed/i.test(e.message ?? '');
}
const TRANSIENT_CODES = new Set([
  'UNAVAILABLE',
  'DEADLINE_EXCEEDED',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
]);

const errorText = (err: unknown) => String(err instanceof Error ? err.message : err);

/** A handler call ran past KAFKA_CONSUMER_BATCH_BUDGET_MS. */
class OverBudget extends Error {}

/** The handler's promise, or OverBudget once `ms` passed (the call itself is left running). */
async function withBudget<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        t = setTimeout(() => reject(new OverBudget(`handler over its ${ms} ms budget`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(t);
  }
}

/** A heartbeat failed while a chunk ran or waited: the group has moved on. */
class HeartbeatFailed {
  constructor(readonly cause: unknown) {}
}

/** Runs fn while sending a heartbeat every `everyMs`; a failed heartbeat is thrown after fn ends. */
async function withHeartbeats<T>(fn: () => Promise<T>, heartbeat: () => Promise<void>, everyMs: number): Promise<T> {
  let hbErr: unknown;
  const timer = setInterval(() => {
    heartbeat().catch((err) => {
      hbErr ??= err;
    });
  }, everyMs);
  let result: T;
  try {
    result = await fn();
  } catch (err) {
    clearInterval(timer);
    throw hbErr ? new HeartbeatFailed(hbErr) : err;
  }
  clearInterval(timer);
  if (hbErr) throw new HeartbeatFailed(hbErr);
  return result;
}

async function sleepWithHeartbeats(ms: number, heartbeat: () => Promise<void>, everyMs: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await sleep(Math.min(everyMs, end - Date.now()));
    try {
      await heartbeat();
    } catch (err) {
      throw new HeartbeatFailed(err);
    }
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let t: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<undefined>((r) => {
      t = setTimeout(() => r(undefined), ms);
    });
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(t);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
