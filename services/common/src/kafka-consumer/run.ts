import { deadLetter as deadLetterTopic } from '@aigw/proto/topics';
import type { DescMessage } from '@bufbuild/protobuf';
import type { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import { type ConsumerSettings, consumerSettings } from '../consumer-health.ts';
import type { BatchConsumerOptions, ConsumerHandle } from '../kafka.ts';
import type { Logger } from '../logger.ts';
import { kafkaBatchDuration, kafkaBatchSize, kafkaConsumerRejoins, kafkaConsumerUp } from '../metrics.ts';
import { consumeSpans } from '../telemetry.ts';
import { withTimeout } from './budget.ts';
import { type ChunkContext, chunkHandler, type DeadLetter, deadLetterer, decodeChunk, type RawItem } from './chunk.ts';
import { healthReporter } from './health-report.ts';
import { startLagSampler } from './lag-sampler.ts';
import { joinGroup, leaveGroup, type Membership, newMembership, watchdogReason } from './membership.ts';
import { mergedCalls } from './merge.ts';
import { paceDelay } from './pace.ts';

/** One batch consumer's running state: its membership, its current kafkajs consumer, its restarts. */
interface Run<D extends DescMessage> {
  opts: BatchConsumerOptions<D>;
  s: ConsumerSettings;
  log: Logger;
  maxBatch: number;
  fromBeginning: boolean;
  m: Membership;
  /** Bumped for each kafkajs consumer: events of an older one are ignored. */
  generation: number;
  current?: Consumer;
  restartAttempt: number;
  restartTimer?: NodeJS.Timeout;
  startingNow: boolean;
  deadLetter: DeadLetter;
  handleChunk(items: RawItem<D>[], ctx: ChunkContext): Promise<boolean>;
  /** Per partition: when its last batch began (performance.now()), for the pace. */
  batchStarts: Map<number, number>;
}

/**
 * Runs a consumer of protobuf events a batch at a time (kafkajs eachBatch, offsets resolved by
 * hand). A partition's fetched events are handed over in chunks of `maxBatchSize`; an offset is
 * resolved (and committed within a second) only after handleBatch returned, so what is committed
 * is written. Heartbeats go out while a chunk runs and during retries, so a slow chunk does not
 * lose the group. A failing chunk is retried with backoff; one that keeps failing is halved until
 * the poison events are alone, and those go to the dead-letter topic (undecodable events at once).
 * Errors that look like an unreachable peer or database (network, timeouts, UNAVAILABLE) are
 * retried for as long as they last instead: an outage must not empty a topic into its DLQ
 * (chunk.ts).
 *
 * The consumer comes back by itself: a crash (kafkajs CRASH, whatever its `restart`), a rebalance
 * that fails, or a member the coordinator forgot gets a new kafkajs consumer with backoff, forever;
 * so does a consumer out of its group for KAFKA_CONSUMER_REJOIN_MS (the watchdog, membership.ts).
 * health() says whether it is consuming, for /readyz and /healthz (consumer-health.ts).
 */
export async function runBatchConsumer<D extends DescMessage>(opts: BatchConsumerOptions<D>): Promise<ConsumerHandle> {
  const run = newRun(opts);
  const { groupId, topic } = opts;
  const health = healthReporter({ membership: run.m, stallMs: run.s.KAFKA_CONSUMER_STALL_MS, groupId, log: run.log });
  const lag = startLagSampler({
    kafka: opts.kafka,
    groupId,
    topic,
    fromBeginning: run.fromBeginning,
    membership: run.m,
    everyMs: run.s.KAFKA_CONSUMER_LAG_SAMPLE_MS,
    log: run.log,
    afterSample: () => watchdog(run, health),
  });
  try {
    await startConsumer(run);
  } catch (err) {
    await lag.stop();
    throw err;
  }
  health();

  return {
    health,
    async stop() {
      if (run.m.stopping) return;
      run.m.stopping = true;
      run.m.stoppedAt = Date.now();
      if (run.restartTimer) clearTimeout(run.restartTimer);
      await lag.stop();
      await disconnectCurrent(run);
      kafkaConsumerUp.remove({ group: groupId });
      lag.removeGauges();
    },
  };
}

function newRun<D extends DescMessage>(opts: BatchConsumerOptions<D>): Run<D> {
  const s: ConsumerSettings = { ...consumerSettings(), ...opts.settings };
  const { groupId, topic } = opts;
  const log = opts.logger.child({ group: groupId, topic });
  const deadLetter = deadLetterer({
    publisher: opts.publisher,
    dlq: opts.deadLetterTopic ?? deadLetterTopic(topic),
    topic,
    groupId,
    log,
  });
  const run: Run<D> = {
    opts,
    s,
    log,
    maxBatch: Math.max(1, opts.maxBatchSize ?? 500),
    fromBeginning: opts.fromBeginning ?? true,
    m: newMembership(Date.now()),
    generation: 0,
    restartAttempt: 0,
    startingNow: false,
    batchStarts: new Map(),
    deadLetter,
    handleChunk: chunkHandler({
      handleBatch: opts.mergePartitions ? mergedCalls(opts.handleBatch) : opts.handleBatch,
      topic,
      groupId,
      log,
      maxAttempts: Math.max(1, opts.maxAttempts ?? 5),
      budgetMs: s.KAFKA_CONSUMER_BATCH_BUDGET_MS,
      heartbeatMs: s.KAFKA_CONSUMER_HEARTBEAT_MS,
      deadLetter,
      abandon: (reason) => replace(run, reason),
    }),
  };
  return run;
}

/** After each lag sample: health, then a new consumer when the watchdog says so. */
function watchdog<D extends DescMessage>(run: Run<D>, health: () => ReturnType<ConsumerHandle['health']>): void {
  const h = health();
  if (run.m.stopping || run.restartTimer || run.startingNow) return;
  const reason = watchdogReason(run.m, h, run.s.KAFKA_CONSUMER_REJOIN_MS, Date.now());
  if (reason) replace(run, reason);
}

/** disconnect() waits for the batch in flight; a handler that hangs must not hang shutdown. */
async function disconnectCurrent<D extends DescMessage>(run: Run<D>): Promise<void> {
  const current = run.current;
  if (!current) return;
  if (
    (await withTimeout(
      current.disconnect().then(() => true),
      15_000,
    )) !== true
  ) {
    run.log.warn('consumer did not stop within 15 s (a batch still running); leaving it');
  }
}

function scheduleRestart<D extends DescMessage>(run: Run<D>, reason: string): void {
  if (run.m.stopping || run.restartTimer) return;
  // At most 5 s apart: after a broker outage the consumers are back within seconds of the
  // broker (at 30 s, they came back up to 30 s after it; docs/reliability.md, scenario 4).
  const delay = Math.min(1_000 * 2 ** run.restartAttempt, 5_000);
  run.restartAttempt++;
  run.log.warn({ reason, delayMs: delay, attempt: run.restartAttempt }, 'consumer restarting');
  run.restartTimer = setTimeout(() => {
    run.restartTimer = undefined;
    if (run.m.stopping) return;
    startConsumer(run).catch((err) => {
      run.log.error({ err }, 'consumer could not start; retrying');
      scheduleRestart(run, 'start failed');
    });
  }, delay);
}

/** Drops the kafkajs consumer (without waiting for a handler that may hang) and starts a new one. */
function replace<D extends DescMessage>(run: Run<D>, reason: string): void {
  const old = run.current;
  run.generation++;
  run.current = undefined;
  leaveGroup(run.m, reason, Date.now());
  if (old) void withTimeout(old.disconnect(), 10_000).catch(() => undefined);
  scheduleRestart(run, reason);
}

async function startConsumer<D extends DescMessage>(run: Run<D>): Promise<void> {
  run.startingNow = true;
  try {
    await startOne(run);
  } finally {
    run.startingNow = false;
  }
}

/** A new kafkajs consumer: joins the group, subscribes and runs eachBatch. */
async function startOne<D extends DescMessage>(run: Run<D>): Promise<void> {
  const gen = ++run.generation;
  const mine = () => gen === run.generation && !run.m.stopping;
  const consumer = newKafkaConsumer(run);
  run.current = consumer;
  watchGroup(run, consumer, mine);
  run.opts.instrument?.(consumer);
  try {
    await consumer.connect();
    await consumer.subscribe({ topic: run.opts.topic, fromBeginning: run.fromBeginning });
    await consumer.run({
      partitionsConsumedConcurrently: run.opts.partitionsConsumedConcurrently ?? 3,
      eachBatchAutoResolve: false,
      autoCommitInterval: 1_000,
      eachBatch: (payload) => eachBatch(run, payload, mine),
    });
  } catch (err) {
    if (gen === run.generation) run.current = undefined;
    void consumer.disconnect().catch(() => undefined);
    throw err;
  }
  // stop() came while this one was joining.
  if (run.m.stopping) await consumer.disconnect();
}

function newKafkaConsumer<D extends DescMessage>(run: Run<D>): Consumer {
  const { s } = run;
  return run.opts.kafka.consumer({
    groupId: run.opts.groupId,
    sessionTimeout: s.KAFKA_CONSUMER_SESSION_TIMEOUT_MS,
    rebalanceTimeout: Math.max(60_000, s.KAFKA_CONSUMER_SESSION_TIMEOUT_MS),
    heartbeatInterval: Math.min(s.KAFKA_CONSUMER_HEARTBEAT_MS, Math.floor(s.KAFKA_CONSUMER_SESSION_TIMEOUT_MS / 3)),
    // A fetch waits at most 1 s for data (kafkajs' default is 5 s): disconnect() waits for the
    // fetch in flight, so a service with two idle consumers took 9 s to exit on SIGTERM.
    maxWaitTimeInMs: 1_000,
    ...(run.opts.maxBytesPerPartition
      ? {
          maxBytesPerPartition: run.opts.maxBytesPerPartition,
          // A fetch's whole answer (kafkajs' default 10 MB) holds at least four partitions' worth.
          maxBytes: Math.max(10 * 1024 * 1024, 4 * run.opts.maxBytesPerPartition),
        }
      : {}),
    // Every crash comes back through our own restart (a new consumer, backoff, logged), not
    // kafkajs' in-place restart, which only covers "retriable" errors and left groups empty.
    retry: { retries: 8, initialRetryTime: 100, restartOnFailure: async () => false },
  });
}

/** Group membership from the consumer's events; a stop, disconnect or crash not ours starts a new one. */
function watchGroup<D extends DescMessage>(run: Run<D>, consumer: Consumer, mine: () => boolean): void {
  const { groupId, topic } = run.opts;
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    if (!mine()) return;
    const rejoin = joinGroup(run.m, e.payload.memberAssignment[topic] ?? [], Date.now());
    if (rejoin) {
      kafkaConsumerRejoins.inc({ group: groupId, reason: run.m.leftFor });
      run.log.warn(
        { reason: run.m.leftFor, outMs: run.m.joinedAt - run.m.leftAt, partitions: run.m.assigned },
        'consumer rejoined its group',
      );
    }
    run.opts.onGroupJoin?.();
  });
  consumer.on(consumer.events.REBALANCING, () => {
    if (mine()) leaveGroup(run.m, 'rebalance', Date.now());
  });
  // Stopped or disconnected underneath us (not by stop()): a new consumer takes over.
  for (const ev of [consumer.events.STOP, consumer.events.DISCONNECT]) {
    consumer.on(ev, () => {
      if (mine() && run.current === consumer) replace(run, `consumer ${ev.split('.').pop()}`);
    });
  }
  consumer.on(consumer.events.CRASH, (e) => {
    if (run.m.stopping) return;
    // kafkajs disconnects before it reports the crash, so the restart is usually under way.
    run.log.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed');
    if (!mine()) return;
    leaveGroup(run.m, 'crash', Date.now());
    run.current = undefined;
    scheduleRestart(run, 'crash');
  });
}

/** One partition's fetched messages, handed over chunk by chunk; each offset resolved once written. */
async function eachBatch<D extends DescMessage>(
  run: Run<D>,
  { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }: EachBatchPayload,
  mine: () => boolean,
): Promise<void> {
  const alive = () => mine() && isRunning() && !isStale();
  const { partition, messages } = batch;
  if (messages.length === 0) return;
  const { m } = run;
  const start = performance.now();
  const prevStart = run.batchStarts.get(partition);
  run.batchStarts.set(partition, start);
  m.inFlight++;
  m.pendingSince.set(partition, Number(messages[0]?.timestamp));
  try {
    for (let i = 0; i < messages.length; i += run.maxBatch) {
      if (!alive()) return;
      const chunk = messages.slice(i, i + run.maxBatch);
      if (!(await runChunk(run, partition, chunk, { heartbeat, alive }))) return;
      resolveOffset((chunk[chunk.length - 1] as KafkaMessage).offset);
      const next = messages[i + run.maxBatch];
      if (next) m.pendingSince.set(partition, Number(next.timestamp));
      else m.pendingSince.delete(partition);
      await commitOffsetsIfNecessary();
      await heartbeat();
    }
    const wait = run.opts.pace ? paceDelay(run.opts.pace, prevStart, start, performance.now(), messages.length) : 0;
    if (wait > 0 && alive()) await sleep(wait);
  } finally {
    m.inFlight--;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Decodes and handles one chunk, traced and measured; false when nothing may be resolved. */
async function runChunk<D extends DescMessage>(
  run: Run<D>,
  partition: number,
  chunk: KafkaMessage[],
  ctx: ChunkContext,
): Promise<boolean> {
  const { groupId, topic, schema } = run.opts;
  const t0 = performance.now();
  const items = await decodeChunk(schema, partition, chunk, run.deadLetter);
  const traced = consumeSpans(topic, groupId, partition, chunk);
  let done: boolean;
  try {
    done = await run.handleChunk(items, ctx);
  } catch (err) {
    traced(err);
    throw err;
  }
  traced();
  if (!done) return false;
  const labels = { group: groupId, topic };
  kafkaBatchSize.observe(labels, items.length);
  kafkaBatchDuration.observe(labels, (performance.now() - t0) / 1000);
  run.m.lastProgressMs = Date.now();
  run.restartAttempt = 0;
  return true;
}
