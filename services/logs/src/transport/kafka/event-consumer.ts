/**
 * Consumes usage (relay, tasks) and audit (users, billing) events into logs and hourly buckets,
 * a partition's batch at a time (runBatchConsumer: offsets committed after the writes, heartbeats,
 * retries, dead letters, rejoins). One consumer group per topic: a group's members must all
 * subscribe to the same topics, and the two topics carry different messages.
 */

import {
  type ConsumerHandle,
  type createKafka,
  type Logger,
  type Publisher,
  runBatchConsumer,
  topicName,
  usagePace,
} from '@aigw/common';
import { AuditEventSchema, UsageEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import { ingestAudit, ingestUsage } from '../../domain/ingest-events.ts';
import type { LogStore } from '../../domain/log-store.ts';

/**
 * Bytes a fetch brings of one usage partition: 4 MB (kafkajs' default is 1 MB, about 2,860 usage
 * events), so that a batch of a backlog holds up to 10,000 events and shares each user's and
 * scope's documents (a batch's cost: one update per document) among more of them. The audit
 * consumer keeps the default.
 */
export const USAGE_FETCH_BYTES = 4 * 1024 * 1024;

export interface EventConsumers {
  usage: ConsumerHandle;
  audit: ConsumerHandle;
  stop(): Promise<void>;
}

export async function runEventConsumers(opts: {
  kafka: ReturnType<typeof createKafka>;
  publisher: Publisher;
  logger: Logger;
  repo: LogStore;
  flags(): { logConsume: boolean; aggregate: boolean };
  /** Group id prefix (default the prefixed `logs`); the groups are `<prefix>.events` and `<prefix>.audit`. */
  groupPrefix?: string;
  maxBatchSize?: number;
  /** Bytes a fetch brings of one usage partition (default USAGE_FETCH_BYTES). */
  maxBytesPerPartition?: number;
  settings?: Parameters<typeof runBatchConsumer>[0]['settings'];
}): Promise<EventConsumers> {
  const prefix = opts.groupPrefix ?? topicName('logs');
  const common = {
    kafka: opts.kafka,
    publisher: opts.publisher,
    logger: opts.logger,
    // 5,000 rather than 2,000 (or 500): a batch's writes grow with the users and scopes in it, not
    // with its size (measured: 20,000 events drained at 620 events/s in batches of 500, 1,540 in
    // batches of up to 2,000; in-process with a partition's share of 1,000 users, 1,002 events
    // per FerretDB CPU second in batches of 2,000 and 1,558 in batches of 5,000). A batch is at
    // most what one fetch brought (kafkajs: up to 1 MB per partition, about 2,860 usage events;
    // the usage consumer fetches more, USAGE_FETCH_BYTES). Up to 10,000: at 1,000,000 rows, 30,000
    // events took 61.5-105.8 directory updates per 1,000 events against 145.2 with 5,000 from 1 MB
    // fetches, and drained at 1,070 and 939 events/s against 944 and 548 (docs/benchmarks.md).
    maxBatchSize: opts.maxBatchSize ?? 10_000,
    ...(opts.settings ? { settings: opts.settings } : {}),
  };
  // `logs.events` is the group that read both topics before; it keeps its usage offsets.
  const usage = await runBatchConsumer({
    ...common,
    groupId: `${prefix}.events`,
    topic: topicName(TOPICS.usage),
    ...usagePace('logs'),
    // ingestUsage takes several partitions' events at once (each log's offset marks are per partition).
    mergePartitions: true,
    maxBytesPerPartition: opts.maxBytesPerPartition ?? USAGE_FETCH_BYTES,
    schema: UsageEventSchema,
    handleBatch: async (items) => {
      await ingestUsage(opts.repo, items, opts.flags());
    },
  });
  const audit = await runBatchConsumer({
    ...common,
    groupId: `${prefix}.audit`,
    topic: topicName(TOPICS.audit),
    schema: AuditEventSchema,
    handleBatch: async (items) => {
      await ingestAudit(opts.repo, items);
    },
  }).catch(async (err) => {
    await usage.stop();
    throw err;
  });
  return {
    usage,
    audit,
    stop: async () => {
      await Promise.all([usage.stop(), audit.stop()]);
    },
  };
}
