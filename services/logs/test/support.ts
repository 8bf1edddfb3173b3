/**
 * Shared pieces of the logs pipeline tests: usage events published the way the relay publishes
 * them (its hand-written encoder, batches of 1,000 per send, keyed by user), and the sums the
 * logs and hourly buckets must end up with.
 */
import {
  connectMongo,
  createKafka,
  createLogger,
  createPublisher,
  ensureTopics,
  type Publisher,
  topicName,
} from '@aigw/common';
import { uniqueName } from '@aigw/local-stack';
import { UsageEventSchema } from '@aigw/proto/events/v1/events';
import { deadLetter, TOPICS } from '@aigw/proto/topics';
import { create } from '@bufbuild/protobuf';
import type { Connection } from 'mongoose';
import { encodeUsageEvent, ProtoWriter } from '../../relay/src/transport/kafka/usage-encoder.ts';
import { type LogRepository, logRepository } from '../src/data/log-repository.ts';
import { logRows } from '../src/data/log-rows.ts';
import { bucketsOfDay, type DayBucketDoc } from '../src/domain/day-buckets.ts';
import { bucketKey } from '../src/domain/log-record.ts';

type Kafka = ReturnType<typeof createKafka>;

export const logger = createLogger('logs-pipeline-test', process.env.TEST_LOG_LEVEL ?? 'silent');

export interface TestUsage {
  eventId: string;
  userId: number;
  modelName: string;
  promptTokens: number;
  completionTokens: number;
  quota: number;
  occurredAtMs: number;
}

/** `n` consumption events over `users` users, three models and `spanMs` (two hours). */
export function usageEvents(
  run: string,
  n: number,
  users = 200,
  startMs = Date.UTC(2026, 10, 20, 8, 30),
  spanMs = 2 * 3600_000,
): TestUsage[] {
  return Array.from({ length: n }, (_, i) => ({
    eventId: `${run}-${i}`,
    userId: 1_000 + (i % users),
    modelName: ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet'][i % 3] as string,
    promptTokens: 10 + (i % 7),
    completionTokens: 5 + (i % 11),
    quota: 100 + (i % 13),
    occurredAtMs: startMs + i * Math.floor(spanMs / n),
  }));
}

/** Publishes through the real producer with the relay's encoder, 1,000 events per send. */
export async function publishUsage(publisher: Publisher, events: TestUsage[]): Promise<void> {
  for (let i = 0; i < events.length; i += 1_000) {
    const writer = new ProtoWriter();
    const batch = events.slice(i, i + 1_000).map((e) => {
      const full = create(UsageEventSchema, {
        ...e,
        requestId: e.eventId,
        username: `user${e.userId}`,
        tokenId: 1,
        // Token names and channels as a deployment has them (the lists keep a scope per value).
        tokenName: e.userId % 3 ? 'default' : `t${e.userId}`,
        channelId: 1 + (e.userId % 4),
        type: 2,
        group: 'default',
        useTimeMs: 1200,
      });
      return { key: String(e.userId), value: encodeUsageEvent(writer, full) };
    });
    await publisher.publishRaw(topicName(TOPICS.usage), batch);
  }
}

/** Expected bucket sums: (user, model, hour) -> token_used, count, quota. */
export function expectedBuckets(
  events: TestUsage[],
): Map<string, { token_used: number; count: number; quota: number }> {
  const out = new Map<string, { token_used: number; count: number; quota: number }>();
  for (const e of events) {
    const key = bucketKey(e.userId, e.modelName, Math.floor(e.occurredAtMs / 1000));
    const b = out.get(key) ?? { token_used: 0, count: 0, quota: 0 };
    b.token_used += e.promptTokens + e.completionTokens;
    b.count += 1;
    b.quota += e.quota;
    out.set(key, b);
  }
  return out;
}

/** Expected sums of everyone's buckets: (0, model, hour). */
export function expectedEveryone(
  events: TestUsage[],
): Map<string, { token_used: number; count: number; quota: number }> {
  return expectedBuckets(events.map((e) => ({ ...e, userId: 0 })));
}

/**
 * What the database holds: logs of every partition (count, distinct request ids) and the
 * dashboard's sums per (user, model, hour): the day documents (`b|<user>|<day>`) expanded, and
 * older buckets (`<user>:<model>:<hour>`) added.
 */
export async function stored(conn: Connection) {
  const logs = await logRows(conn).scan({});
  const docs = await conn
    .collection<DayBucketDoc & { token_used: number; count: number; quota: number }>('quota_data')
    .find({})
    .toArray();
  const sums = new Map<string, { token_used: number; count: number; quota: number }>();
  const add = (key: string, b: { token_used: number; count: number; quota: number }) => {
    const s = sums.get(key) ?? { token_used: 0, count: 0, quota: 0 };
    sums.set(key, { token_used: s.token_used + b.token_used, count: s.count + b.count, quota: s.quota + b.quota });
  };
  for (const d of docs) {
    if (/^\d+:/.test(d._id)) add(d._id, d);
    else if (d._id.startsWith('b|')) for (const b of bucketsOfDay(d, 0, Number.MAX_SAFE_INTEGER)) add(b.key, b);
  }
  const of = (re: RegExp) => new Map([...sums].filter(([k]) => re.test(k)));
  return {
    count: logs.length,
    requestIds: new Set(logs.map((l) => l.request_id as string)).size,
    // Users' sums (`<user>:<model>:<hour>`), and everyone's (user 0, per model and hour).
    buckets: of(/^[1-9]\d*:/),
    everyone: of(/^0:/),
  };
}

/** A fresh topic prefix and database for one test: topics, a publisher, the repository. */
export async function isolated(name: string): Promise<{
  kafka: Kafka;
  publisher: Publisher;
  conn: Connection;
  repo: LogRepository;
  close(): Promise<void>;
}> {
  const id = uniqueName(name);
  process.env.KAFKA_TOPIC_PREFIX = `${id}.`;
  const kafka = createKafka(process.env.KAFKA_BROKERS!.split(','), id, logger);
  const usage = topicName(TOPICS.usage);
  const audit = topicName(TOPICS.audit);
  await ensureTopics(kafka, [usage, audit, deadLetter(usage), deadLetter(audit)]);
  const publisher = await createPublisher(kafka);
  const conn = await connectMongo(process.env.MONGO_URL!, id);
  const repo = logRepository(conn);
  await repo.ensureIndexes();
  return {
    kafka,
    publisher,
    conn,
    repo,
    close: async () => {
      await publisher.disconnect();
      await conn.dropDatabase().catch(() => undefined);
      await conn.close();
    },
  };
}

/** Waits until the group committed everything the topic holds; resolves with the time it took. */
export async function drained(kafka: Kafka, groupId: string, topic: string, timeoutMs: number): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  const t0 = Date.now();
  try {
    for (;;) {
      const [ends, committed] = await Promise.all([
        admin.fetchTopicOffsets(topic),
        admin.fetchOffsets({ groupId, topics: [topic] }),
      ]);
      const c = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
      if (ends.every((e) => (c.get(e.partition) ?? -1) >= Number(e.high))) return Date.now() - t0;
      if (Date.now() - t0 > timeoutMs) {
        throw new Error(`group ${groupId} not drained after ${timeoutMs} ms: ${JSON.stringify({ ends, committed })}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await admin.disconnect();
  }
}
