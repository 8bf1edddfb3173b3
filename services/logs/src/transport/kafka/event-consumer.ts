/**
 * Consumes usage (relay, tasks) and audit (users, billing) events into logs, a batch at a time:
 * one lookup of already-seen event ids and one id allocation per batch keep up with the relay's
 * rate. Delivery is at least once; the unique event id makes a replay change nothing. A record
 * that cannot be decoded goes to the topic's dead-letter topic and is skipped.
 */

import { type createKafka, kafkaConsumed, type Logger, type Publisher, topicName } from '@aigw/common';
import { AuditEventSchema, UsageEventSchema } from '@aigw/proto/events/v1/events';
import { deadLetter, TOPICS } from '@aigw/proto/topics';
import { fromBinary } from '@bufbuild/protobuf';
import type { LogRepository } from '../../data/log-repository.ts';
import { logFromAudit, logFromUsage, type NewLog } from '../../domain/log-record.ts';

export async function runEventConsumer(opts: {
  kafka: ReturnType<typeof createKafka>;
  publisher: Publisher;
  logger: Logger;
  repo: LogRepository;
  flags(): { logConsume: boolean; aggregate: boolean };
  groupId?: string;
}): Promise<{ stop(): Promise<void> }> {
  const usageTopic = topicName(TOPICS.usage);
  const auditTopic = topicName(TOPICS.audit);
  const consumer = opts.kafka.consumer({
    // Prefixed like the topics: stacks (or environments) sharing a cluster must not share a group.
    groupId: opts.groupId ?? topicName('logs.events'),
    sessionTimeout: 30_000,
    heartbeatInterval: 3_000,
    maxWaitTimeInMs: 100,
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [usageTopic, auditTopic], fromBeginning: true });
  await consumer.run({
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: 2,
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
      const docs: NewLog[] = [];
      const flags = opts.flags();
      for (const m of batch.messages) {
        try {
          const value = m.value ?? Buffer.alloc(0);
          docs.push(
            batch.topic === usageTopic
              ? logFromUsage(fromBinary(UsageEventSchema, value), flags)
              : logFromAudit(fromBinary(AuditEventSchema, value)),
          );
        } catch (err) {
          opts.logger.error({ err, topic: batch.topic, offset: m.offset }, 'undecodable event dead-lettered');
          await opts.publisher.publishRaw(deadLetter(batch.topic), [
            {
              key: m.key?.toString() ?? '',
              value: m.value ?? Buffer.alloc(0),
              headers: { 'x-error': String(err), 'x-source-topic': batch.topic },
            },
          ]);
          kafkaConsumed.inc({ topic: batch.topic, result: 'dead_lettered' });
        }
      }
      if (!isRunning() || isStale()) return;
      // Throws on a database failure: kafkajs retries the batch (nothing is resolved yet).
      await opts.repo.insert(docs);
      const last = batch.messages.at(-1);
      if (last) resolveOffset(last.offset);
      kafkaConsumed.inc({ topic: batch.topic, result: 'ok' }, docs.length);
      await heartbeat();
    },
  });
  return { stop: () => consumer.disconnect() };
}
