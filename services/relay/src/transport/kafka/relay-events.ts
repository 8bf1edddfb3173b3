/**
 * The relay's events: one UsageEvent per request and a ChannelHealthEvent per failed attempt.
 * Usage events are batched (100 ms or 1,000 events per send) so that the hot
 * path never waits for Kafka; stop() flushes what is left before the producer disconnects.
 *
 * While Kafka does not take them (a broker down or unreachable), usage events wait in memory and
 * their send is retried for as long as that lasts (backoff up to 5 s), never dropped: the buffer
 * holds at most `maxBuffered` events (RELAY_USAGE_BUFFER_MAX). Once it is full, full() says so and
 * the relay refuses new requests (503) until Kafka takes the backlog: a request the relay answered
 * is always one it can bill. When the broker is back the backlog goes out in batches of
 * `maxBatch`, in order (one send at a time keeps each user's events in order).
 *
 * With a spool (RELAY_USAGE_SPOOL_DIR, data/usage-spool.ts) every event is also appended to a file
 * until Kafka acknowledges it: what a killed process had not sent is sent by the next one, and
 * stop() leaves what Kafka would not take on disk instead of dropping it.
 */

import { type Logger, type Publisher, registry, reportProducerQueue, topicName } from '@aigw/common';
import { LogType } from '@aigw/proto/common/v1/common';
import { ChannelHealthEvent_Kind, ChannelHealthEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { Gauge } from 'prom-client';
import type { SpoolSegment, UsageSpool } from '../../data/usage-spool.ts';
import type { HealthRecord, UsageRecord } from '../../domain/relay-request.ts';
import { encodeUsageEvent, ProtoWriter, type UsageEventFields } from './usage-encoder.ts';

export interface RelayEvents {
  /** Queues the usage event; `headers` carry the request's trace (W3C traceparent) to the consumers. */
  usage(rec: UsageRecord, headers?: Record<string, string>): void;
  /** Queues the release of a wallet slice, behind the usage events queued before it (same key). */
  sliceRelease(userId: number, sliceId: string): void;
  health(rec: HealthRecord): void;
  /** Usage events not yet acknowledged by Kafka (queued and in the send in flight). */
  buffered(): number;
  /** The buffer is full: new requests must be refused until Kafka takes the backlog. */
  full(): boolean;
  /** Sends everything queued. */
  flush(): Promise<void>;
  /** Flushes (waiting at most `ms`, default 15 s, for Kafka), then stops. */
  stop(ms?: number): Promise<void>;
}

/** Every live instance's buffer, reported by one gauge (tests create several in one process). */
const live = new Set<() => number>();
let gauge = false;
function trackBuffer(buffered: () => number): () => void {
  if (!gauge) {
    gauge = true;
    new Gauge({
      name: 'relay_usage_events_buffered',
      help: 'Usage events waiting for Kafka (queued and in the send in flight).',
      registers: [registry],
      collect() {
        let n = 0;
        for (const f of live) n += f();
        this.set(n);
      },
    });
  }
  live.add(buffered);
  return () => live.delete(buffered);
}

const ROUND = (n: number) => Math.round(n * 1e6) / 1e6;

/** The UsageEvent of a finished request. */
export function usageEvent(rec: UsageRecord, now = Date.now()): UsageEventFields {
  const p = rec.price;
  const u = rec.usage;
  // Token-kind ratios are recorded only where such tokens were billed (the log shows what applied).
  const r = p?.kind === 'ratio' ? p : undefined;
  return {
    eventId: rec.requestId,
    occurredAtMs: now,
    requestId: rec.requestId,
    userId: rec.caller.user.id,
    username: rec.caller.user.username,
    tokenId: rec.caller.token?.id ?? 0,
    tokenName: rec.caller.token?.name ?? '',
    modelName: rec.model,
    upstreamModelName: rec.upstreamModel,
    channelId: rec.channelId,
    channelsTried: rec.channelsTried,
    promptTokens: rec.usage.promptTokens,
    completionTokens: rec.usage.completionTokens,
    quota: rec.quota,
    useTimeMs: rec.useTimeMs,
    firstTokenMs: rec.firstTokenMs,
    isStream: rec.isStream,
    type: rec.type,
    content: rec.type === LogType.CONSUME ? contentOf(rec) : rec.errorMessage,
    group: rec.caller.group,
    ratios: {
      modelRatio: r ? ROUND(r.modelRatio) : 0,
      completionRatio: r ? ROUND(r.completionRatio) : 0,
      groupRatio: ROUND(rec.groupRatio),
      modelPrice: p?.kind === 'call' ? p.price : 0,
      audioRatio: r && (u.audioInputTokens || u.audioOutputTokens) ? ROUND(r.audioRatio) : 0,
      audioCompletionRatio: r && u.audioOutputTokens ? ROUND(r.audioCompletionRatio) : 0,
      cacheRatio: r && u.cachedTokens ? ROUND(r.cacheRatio) : 0,
      cacheCreationRatio: r && u.cacheCreationTokens ? ROUND(r.cacheCreationRatio) : 0,
      imageRatio: r && u.imageInputTokens ? ROUND(r.imageRatio) : 0,
    },
    ip: rec.caller.ip,
    statusCode: rec.statusCode,
    error: rec.type === LogType.ERROR,
    errorMessage: rec.errorMessage,
    other: hasKeys(rec.other) ? JSON.stringify(rec.other) : '',
    cachedTokens: u.cachedTokens ?? 0,
    audioInputTokens: u.audioInputTokens ?? 0,
    audioOutputTokens: u.audioOutputTokens ?? 0,
    cacheCreationTokens: u.cacheCreationTokens ?? 0,
    imageInputTokens: u.imageInputTokens ?? 0,
    walletSlice: rec.walletSlice ?? '',
    sliceRelease: false,
  };
}

/**
 * The release of a wallet slice (domain/wallet-slices.ts): on the user's key, like the usage events
 * of the requests drawn from it, so billing reads it after all of them. Its request id is the slice's.
 */
export function sliceReleaseEvent(userId: number, sliceId: string, now = Date.now()): UsageEventFields {
  return {
    eventId: `${sliceId}:release`,
    occurredAtMs: now,
    requestId: sliceId,
    userId,
    username: '',
    tokenId: 0,
    tokenName: '',
    modelName: '',
    upstreamModelName: '',
    channelId: 0,
    channelsTried: [],
    promptTokens: 0,
    completionTokens: 0,
    quota: 0,
    useTimeMs: 0,
    firstTokenMs: 0,
    isStream: false,
    type: LogType.UNSPECIFIED,
    content: '',
    group: '',
    ip: '',
    statusCode: 0,
    error: false,
    errorMessage: '',
    other: '',
    cachedTokens: 0,
    audioInputTokens: 0,
    audioOutputTokens: 0,
    cacheCreationTokens: 0,
    imageInputTokens: 0,
    walletSlice: sliceId,
    sliceRelease: true,
  };
}

function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

function contentOf(rec: UsageRecord): string {
  const p = rec.price;
  if (p?.kind === 'call') return `模型价格 ${p.price}，分组倍率 ${ROUND(rec.groupRatio)}`;
  if (p?.kind === 'ratio')
    return `模型倍率 ${ROUND(p.modelRatio)}，补全倍率 ${ROUND(p.completionRatio)}，分组倍率 ${ROUND(rec.groupRatio)}`;
  return '';
}

/** A usage event waiting for Kafka (`seg`: its place in the spool, when there is one). */
type Queued = { key: string; value: Buffer; headers?: Record<string, string>; seg?: SpoolSegment };

/**
 * Publishes a batch of usage events, retried with backoff (up to 5 s) until Kafka takes it or
 * `giveUpAt()` has passed (set by stop()); acknowledged events leave the spool. False when it gave up.
 */
async function publishUsageBatch(
  out: { publisher: Publisher; topic: string; logger: Logger; spool: UsageSpool | undefined },
  batch: Queued[],
  buffered: () => number,
  giveUpAt: () => number,
): Promise<boolean> {
  const { publisher, topic, logger, spool } = out;
  for (let attempt = 1; ; attempt++) {
    try {
      await publisher.publishRaw(topic, spool ? batch.map(({ seg: _s, ...m }) => m) : batch);
      if (spool) spool.acked(batch.filter((m) => m.seg).map((m) => m.seg as SpoolSegment));
      if (attempt > 1)
        logger.warn({ events: batch.length, attempt, buffered: buffered() }, 'usage events published again');
      return true;
    } catch (err) {
      if (Date.now() >= giveUpAt()) {
        if (spool)
          logger.error(
            { err, events: buffered() },
            'usage events could not be published before shutdown; left in the spool for the next start',
          );
        else logger.error({ err, events: buffered() }, 'usage events could not be published before shutdown; lost');
        return false;
      }
      if (attempt === 1 || attempt % 10 === 0)
        logger.warn({ err, attempt, buffered: buffered() }, 'usage events not published; retrying');
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 5_000)));
    }
  }
}

/** The ChannelHealthEvent of a failed attempt (its id: request, channel and key, once per attempt). */
export function healthEvent(rec: HealthRecord): MessageInitShape<typeof ChannelHealthEventSchema> {
  return {
    eventId: rec.keyHash ? `${rec.requestId}:${rec.channelId}:${rec.keyHash}` : `${rec.requestId}:${rec.channelId}`,
    occurredAtMs: Date.now(),
    channelId: rec.channelId,
    kind: ChannelHealthEvent_Kind.FAILURE,
    statusCode: rec.statusCode,
    errorMessage: rec.message.slice(0, 500),
    shouldDisable: rec.shouldDisable,
    model: rec.model,
    responseTimeMs: rec.responseTimeMs,
    requestId: rec.requestId,
    keyHash: rec.keyHash,
  };
}

export function relayEvents(
  publisher: Publisher,
  logger: Logger,
  opts: { lingerMs?: number; maxBatch?: number; maxBuffered?: number; spool?: UsageSpool } = {},
): RelayEvents {
  const lingerMs = opts.lingerMs ?? 100;
  const maxBatch = opts.maxBatch ?? 1000;
  const maxBuffered = Math.max(maxBatch, opts.maxBuffered ?? 100_000);
  const usageTopic = topicName(TOPICS.usage);
  const healthTopic = topicName(TOPICS.channelHealth);
  const spool = opts.spool;
  let queue: Queued[] = [];
  let timer: NodeJS.Timeout | undefined;
  // Events of one batch are encoded back to back into one buffer (views per message).
  const writer = new ProtoWriter();
  /** Events of the send in flight (taken from the queue, not acknowledged yet). */
  let sendingCount = 0;
  let running = false;
  let sender: Promise<void> = Promise.resolve();
  /** After this (Date.now()), a send that keeps failing gives up (set by stop()). */
  let giveUpAt = Number.POSITIVE_INFINITY;
  let wasFull = false;
  const buffered = () => queue.length + sendingCount;
  const untrack = trackBuffer(buffered);
  // Events batched here and not acknowledged yet count in kafka_producer_queue_size.
  const unreport = reportProducerQueue(buffered);
  // What an earlier process with this spool left unacknowledged goes out first.
  for (const { msg, seg } of spool?.recover() ?? []) queue.push({ ...msg, seg });

  const sendWithRetry = (batch: Queued[]) =>
    publishUsageBatch({ publisher, topic: usageTopic, logger, spool }, batch, buffered, () => giveUpAt);

  // One sender at a time keeps per-user order (same key, same partition). Full batches (a
  // backlog after an outage) go back to back; what is left of a batch waits for its linger.
  const kick = (): Promise<void> => {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (running || queue.length === 0) return sender;
    running = true;
    sender = (async () => {
      try {
        while (queue.length > 0) {
          const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
          queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch);
          if (queue.length === 0) writer.reset();
          sendingCount = batch.length;
          const sent = await sendWithRetry(batch);
          sendingCount = 0;
          if (!sent) {
            queue = [];
            return;
          }
          if (queue.length < maxBatch) break;
        }
      } finally {
        running = false;
        if (queue.length > 0 && !timer) timer = setTimeout(() => void kick(), lingerMs);
        if (wasFull && buffered() < maxBuffered) {
          wasFull = false;
          logger.warn({ buffered: buffered() }, 'usage buffer has room again: serving');
        }
      }
    })();
    return sender;
  };

  if (queue.length > 0) void kick();

  const enqueue = (ev: UsageEventFields, headers?: Record<string, string>) => {
    const value = encodeUsageEvent(writer, ev);
    const msg: Queued = headers ? { key: String(ev.userId), value, headers } : { key: String(ev.userId), value };
    // On disk before the hot path goes on: a kill from here on does not lose the charge.
    if (spool) msg.seg = spool.append(msg);
    queue.push(msg);
    if (queue.length >= maxBatch) void kick();
    else if (!timer && !running) {
      timer = setTimeout(() => void kick(), lingerMs);
    }
  };

  return {
    usage(rec, headers) {
      enqueue(usageEvent(rec), headers);
    },
    sliceRelease(userId, sliceId) {
      enqueue(sliceReleaseEvent(userId, sliceId));
    },
    buffered,
    full() {
      const full = buffered() >= maxBuffered;
      if (full && !wasFull) {
        wasFull = true;
        logger.error({ buffered: buffered() }, 'usage buffer full (Kafka not taking events): refusing requests');
      }
      return full;
    },
    health(rec) {
      publisher
        .publish(healthTopic, ChannelHealthEventSchema, healthEvent(rec), String(rec.channelId))
        .catch((err) => logger.warn({ err, channelId: rec.channelId }, 'channel health event not published'));
    },
    flush: async () => {
      // Bounded: a sender that keeps failing returns once stop() set its deadline.
      while (queue.length > 0 || running) await kick();
    },
    async stop(ms = 15_000) {
      giveUpAt = Date.now() + ms;
      while (queue.length > 0 || running) await kick();
      spool?.close();
      untrack();
      unreport();
    },
  };
}
