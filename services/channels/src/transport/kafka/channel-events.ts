import { randomUUID } from 'node:crypto';
import {
  type createKafka,
  type Logger,
  type Publisher,
  runBatchConsumer,
  runConsumer,
  topicName,
  usagePace,
} from '@aigw/common';
import {
  ChannelHealthEvent_Kind,
  ChannelHealthEventSchema,
  EntityChangedEvent_Action,
  EntityChangedEvent_Kind,
  EntityChangedEventSchema,
  UsageEventSchema,
} from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import type { ChannelHealth } from '../../domain/channel-health.ts';
import type { ChannelChanged } from '../../domain/channels-service.ts';

const ACTION = {
  created: EntityChangedEvent_Action.CREATED,
  updated: EntityChangedEvent_Action.UPDATED,
  deleted: EntityChangedEvent_Action.DELETED,
} as const;

/** Publishes EntityChangedEvent{kind: CHANNEL} so the relay refreshes its snapshot. */
export function channelChangePublisher(publisher: Publisher): ChannelChanged {
  return (id, action) =>
    publisher.publish(
      topicName(TOPICS.entityChanged),
      EntityChangedEventSchema,
      {
        eventId: randomUUID(),
        occurredAtMs: Date.now(),
        kind: EntityChangedEvent_Kind.CHANNEL,
        id,
        action: ACTION[action],
      },
      `channel:${id}`,
    );
}

const KIND = {
  [ChannelHealthEvent_Kind.FAILURE]: 'failure',
  [ChannelHealthEvent_Kind.SUCCESS]: 'success',
  [ChannelHealthEvent_Kind.TEST_SLOW]: 'slow',
} as const;

/** Consumes channel-health events (relay traffic and tests) into the automatic status rules. */
export function runHealthConsumer(opts: {
  kafka: ReturnType<typeof createKafka>;
  publisher: Publisher;
  logger: Logger;
  health: ChannelHealth;
}) {
  return runConsumer({
    kafka: opts.kafka,
    groupId: topicName('channels.health'),
    topic: topicName(TOPICS.channelHealth),
    schema: ChannelHealthEventSchema,
    publisher: opts.publisher,
    logger: opts.logger,
    // A new group reads from the start: events published while it joins are not skipped
    // (handling is idempotent by event id, and events of one channel keep their order).
    fromBeginning: true,
    handle: async (ev) => {
      const kind = KIND[ev.kind as keyof typeof KIND];
      if (!kind) return;
      await opts.health.handle({
        eventId: ev.eventId,
        channelId: ev.channelId,
        kind,
        shouldDisable: ev.shouldDisable,
        message: ev.errorMessage || `上游返回 ${ev.statusCode}`,
        responseTimeMs: ev.responseTimeMs,
        keyHash: ev.keyHash,
      });
    },
  });
}

/**
 * Consumes usage events into the channels' used_quota (reference-behaviour.md relay step 9), a
 * partition's batch at a time: the batch's event ids are claimed with one insert, and the quota of
 * the newly claimed ones is added with one $inc per channel. Claiming first means a crash between
 * the two steps can only under-count those events, never count one twice.
 */
export function runUsageConsumer(opts: {
  kafka: ReturnType<typeof createKafka>;
  publisher: Publisher;
  logger: Logger;
  seen: { claim(eventIds: string[]): Promise<Set<string>>; release(eventIds: string[]): Promise<void> };
  addUsedQuota: (channelId: number, quota: number) => Promise<void>;
}) {
  return runBatchConsumer({
    kafka: opts.kafka,
    groupId: topicName('channels.usage'),
    topic: topicName(TOPICS.usage),
    ...usagePace('channels'),
    mergePartitions: true,
    schema: UsageEventSchema,
    publisher: opts.publisher,
    logger: opts.logger,
    fromBeginning: true,
    handleBatch: async (items) => {
      const counted = items.filter((i) => i.event.channelId && i.event.quota > 0);
      const fresh = await opts.seen.claim(counted.map((i) => i.event.eventId));
      const claimed = [...fresh];
      const perChannel = new Map<number, number>();
      for (const { event } of counted) {
        if (!fresh.delete(event.eventId)) continue;
        perChannel.set(event.channelId, (perChannel.get(event.channelId) ?? 0) + event.quota);
      }
      const added = await Promise.allSettled([...perChannel].map(([id, quota]) => opts.addUsedQuota(id, quota)));
      const failed = added.find((r) => r.status === 'rejected');
      if (failed && added.every((r) => r.status === 'rejected')) {
        // Nothing was added: give the claims back so that the retry counts them.
        await opts.seen.release(claimed);
        throw failed.reason;
      }
      if (failed) opts.logger.error({ err: failed.reason }, 'used_quota of some channels not updated; not retried');
    },
  });
}
