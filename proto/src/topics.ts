/**
 * Kafka topic names of the platform's events (see proto/events/v1/events.proto).
 *
 * | topic                    | message              | record key                 |
 * |--------------------------|----------------------|----------------------------|
 * | `aigw.usage.v1`          | `UsageEvent`         | user id (decimal)          |
 * | `aigw.channel-health.v1` | `ChannelHealthEvent` | channel id (decimal)       |
 * | `aigw.audit.v1`          | `AuditEvent`         | user id (decimal)          |
 * | `aigw.option-changed.v1` | `OptionChangedEvent` | option key                 |
 * | `aigw.entity-changed.v1` | `EntityChangedEvent` | `<kind>:<id>`              |
 *
 * Values are the protobuf binary encoding of the message.
 */
export const TOPICS = {
  usage: 'aigw.usage.v1',
  channelHealth: 'aigw.channel-health.v1',
  audit: 'aigw.audit.v1',
  optionChanged: 'aigw.option-changed.v1',
  entityChanged: 'aigw.entity-changed.v1',
} as const;

/** One of the topic names in {@link TOPICS}. */
export type Topic = (typeof TOPICS)[keyof typeof TOPICS];

/** Suffix of dead-letter topics. */
export const DEAD_LETTER_SUFFIX = '.dlq';

/**
 * The dead-letter topic of `topic`: where a consumer parks a record it could not process after
 * its retries (same key and value, plus headers describing the failure).
 *
 * @example deadLetter(TOPICS.usage) // 'aigw.usage.v1.dlq'
 */
export function deadLetter(topic: string): string {
  return `${topic}${DEAD_LETTER_SUFFIX}`;
}
