import { create, fromBinary, ScalarType, toBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { file_billing_v1_billing } from '../gen/billing/v1/billing_pb.ts';
import { file_channels_v1_channels } from '../gen/channels/v1/channels_pb.ts';
import { file_common_v1_common } from '../gen/common/v1/common_pb.ts';
import { file_events_v1_events, UsageEventSchema } from '../gen/events/v1/events_pb.ts';
import { file_logs_v1_logs } from '../gen/logs/v1/logs_pb.ts';
import { file_relay_v1_relay } from '../gen/relay/v1/relay_pb.ts';
import { file_tasks_v1_tasks } from '../gen/tasks/v1/tasks_pb.ts';
import { file_users_v1_users } from '../gen/users/v1/users_pb.ts';
import { deadLetter, TOPICS } from './topics.ts';

const files = [
  file_common_v1_common,
  file_users_v1_users,
  file_channels_v1_channels,
  file_billing_v1_billing,
  file_relay_v1_relay,
  file_logs_v1_logs,
  file_tasks_v1_tasks,
  file_events_v1_events,
];

const int64Types = new Set([
  ScalarType.INT64,
  ScalarType.UINT64,
  ScalarType.SINT64,
  ScalarType.FIXED64,
  ScalarType.SFIXED64,
]);

describe('contracts', () => {
  it('expose no bigint fields (64-bit values are whole-number doubles)', () => {
    const offenders: string[] = [];
    for (const file of files) {
      for (const message of file.messages) {
        for (const field of message.fields) {
          const scalar = field.fieldKind === 'scalar' || field.fieldKind === 'list' ? field.scalar : undefined;
          if (scalar !== undefined && int64Types.has(scalar)) offenders.push(`${message.typeName}.${field.name}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('round-trip a usage event with quotas and ids up to 2^53 as numbers', () => {
    const event = create(UsageEventSchema, {
      eventId: 'req-1',
      occurredAtMs: 1_760_000_000_123,
      userId: 42,
      quota: Number.MAX_SAFE_INTEGER,
      channelsTried: [3, 7],
      ratios: { modelRatio: 1.25, groupRatio: 1 },
    });
    const back = fromBinary(UsageEventSchema, toBinary(UsageEventSchema, event));
    expect(back.quota).toBe(Number.MAX_SAFE_INTEGER);
    expect(back.occurredAtMs).toBe(1_760_000_000_123);
    expect(back.channelsTried).toEqual([3, 7]);
    expect(back.ratios?.modelRatio).toBe(1.25);
  });

  it('name topics and their dead letters', () => {
    expect(TOPICS.usage).toBe('aigw.usage.v1');
    expect(Object.values(TOPICS).every((t) => /^aigw\.[a-z-]+\.v1$/.test(t))).toBe(true);
    expect(deadLetter(TOPICS.channelHealth)).toBe('aigw.channel-health.v1.dlq');
  });
});
