/**
 * The relay's events: one UsageEvent per request and a ChannelHealthEvent per failed attempt.
 * Usage events are batched (100 ms or 1,000 events per send) so that the hot
 * path never waits for Kafka; stop() flushes what is left before the producer disconnects.
 */

import { type Logger, type Publisher, topicName } from '@aigw/common';
import { ChannelHealthEvent_Kind, ChannelHealthEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import type { HealthRecord, UsageRecord } from '../../domain/relay-request.ts';
import { encodeUsageEvent, ProtoWriter, type UsageEventFields } from './usage-encoder.ts';

export interface RelayEvents {
  usage(rec: UsageRecord): void;
  health(rec: HealthRecord): void;
  /** Sends everything queued. */
  flush(): Promise<void>;
  stop(): Promise<void>;
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
    content: rec.type === 2 ? contentOf(rec) : rec.errorMessage,
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
    error: rec.type === 5,
    errorMessage: rec.errorMessage,
    other: hasKeys(rec.other) ? JSON.stringify(rec.other) : '',
    cachedTokens: u.cachedTokens ?? 0,
    audioInputTokens: u.audioInputTokens ?? 0,
    audioOutputTokens: u.audioOutputTokens ?? 0,
    cacheCreationTokens: u.cacheCreationTokens ?? 0,
    imageInputTokens: u.imageInputTokens ?? 0,
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

export function relayEvents(
  publisher: Publisher,
  logger: Logger,
  opts: { lingerMs?: number; maxBatch?: number } = {},
): RelayEvents {
  const lingerMs = opts.lingerMs ?? 100;
  const maxBatch = opts.maxBatch ?? 1000;
  const usageTopic = topicName(TOPICS.usage);
  const healthTopic = topicName(TOPICS.channelHealth);
  let queue: { key: string; value: Buffer }[] = [];
  let timer: NodeJS.Timeout | undefined;
  // Events of one batch are encoded back to back into one buffer (views per message).
  const writer = new ProtoWriter();
  let sending: Promise<void> = Promise.resolve();

  const send = (): Promise<void> => {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (queue.length === 0) return sending;
    const batch = queue;
    queue = [];
    writer.reset();
    // One send at a time keeps per-user order (same key, same partition).
    sending = sending.then(() => sendWithRetry(batch));
    return sending;
  };
  const sendWithRetry = async (batch: { key: string; value: Buffer }[]) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await publisher.publishRaw(usageTopic, batch);
        return;
      } catch (err) {
        if (attempt >= 10) {
          logger.error({ err, events: batch.length }, 'usage events could not be published');
          return;
        }
        await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 5_000)));
      }
    }
  };

  return {
    usage(rec) {
      const ev = usageEvent(rec);
      queue.push({ key: String(ev.userId), value: encodeUsageEvent(writer, ev) });
      if (queue.length >= maxBatch) void send();
      else if (!timer) {
        timer = setTimeout(() => void send(), lingerMs);
      }
    },
    health(rec) {
      publisher
        .publish(
          healthTopic,
          ChannelHealthEventSchema,
          {
            eventId: rec.keyHash
              ? `${rec.requestId}:${rec.channelId}:${rec.keyHash}`
              : `${rec.requestId}:${rec.channelId}`,
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
          },
          String(rec.channelId),
        )
        .catch((err) => logger.warn({ err, channelId: rec.channelId }, 'channel health event not published'));
    },
    flush: () => send(),
    stop: async () => {
      await send();
    },
  };
}
