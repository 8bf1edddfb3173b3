/**
 * Cache invalidation: every relay replica follows aigw.entity-changed.v1 with a consumer group
 * of its own (each sees every event) and drops or reloads what changed.
 */
import { randomUUID } from 'node:crypto';
import { type createKafka, type Logger, type Publisher, runConsumer, topicName } from '@aigw/common';
import { EntityChangedEvent_Kind, EntityChangedEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';

export interface EntityHandlers {
  token(key: string, id: number, userId: number): void;
  user(id: number): void;
  channel(): void;
}

export function followEntityChanges(opts: {
  kafka: ReturnType<typeof createKafka>;
  publisher: Publisher;
  logger: Logger;
  handlers: EntityHandlers;
}) {
  return runConsumer({
    kafka: opts.kafka,
    groupId: `relay.entities.${randomUUID()}`,
    topic: topicName(TOPICS.entityChanged),
    schema: EntityChangedEventSchema,
    logger: opts.logger,
    publisher: opts.publisher,
    fromBeginning: false,
    maxAttempts: 1,
    handle: async (ev) => {
      switch (ev.kind) {
        case EntityChangedEvent_Kind.TOKEN:
          opts.handlers.token(ev.key, ev.id, ev.userId);
          break;
        case EntityChangedEvent_Kind.USER:
          opts.handlers.user(ev.id || ev.userId);
          break;
        case EntityChangedEvent_Kind.CHANNEL:
          opts.handlers.channel();
          break;
        default:
          break;
      }
    },
  });
}
