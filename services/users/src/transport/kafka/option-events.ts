import { randomUUID } from 'node:crypto';
import { type Publisher, topicName } from '@aigw/common';
import { OptionChangedEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import type { OptionChangePublisher } from '../../domain/options-service.ts';

/** Publishes option changes, keyed by option key so per-key order holds. */
export function optionChangePublisher(publisher: Publisher): OptionChangePublisher {
  return (key, value, version) =>
    publisher.publish(
      topicName(TOPICS.optionChanged),
      OptionChangedEventSchema,
      { eventId: randomUUID(), occurredAtMs: Date.now(), key, value, version },
      key,
    );
}
