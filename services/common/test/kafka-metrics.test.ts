/**
 * The Kafka client metrics against the real broker: kafka_consumer_dead_letters_total by group
 * when an event is given up on, kafka_producer_errors_total by topic when a send fails, and
 * kafka_producer_queue_size counting what a service reports as queued.
 */
import { randomUUID } from 'node:crypto';
import {
  createKafka,
  createLogger,
  createPublisher,
  ensureTopics,
  type Publisher,
  registry,
  reportProducerQueue,
  runConsumer,
} from '@aigw/common';
import { UsageEventSchema } from '@aigw/proto/events/v1/events';
import { deadLetter } from '@aigw/proto/topics';
import { eventually } from '@aigw/testkit';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const logger = createLogger('kafka-metrics-test', 'silent');

/** The value of one series in the registry's exposition text. */
async function value(name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await registry.metrics();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe('Kafka client metrics', () => {
  let kafka: Kafka;
  let publisher: Publisher;
  beforeAll(async () => {
    kafka = createKafka(process.env.KAFKA_BROKERS!.split(','), 'kafka-metrics-test', logger);
    publisher = await createPublisher(kafka);
  });
  afterAll(async () => {
    await publisher?.disconnect();
  });

  it('when a consumer gives up on an event, then its group counts one dead letter', async () => {
    const topic = `test.dlqm.${randomUUID()}`;
    const groupId = `g-${randomUUID()}`;
    await ensureTopics(kafka, [topic, deadLetter(topic)], 1);
    const handled: string[] = [];
    const consumer = await runConsumer({
      kafka,
      groupId,
      topic,
      schema: UsageEventSchema,
      logger,
      publisher,
      maxAttempts: 2,
      handle: async (e) => {
        if (e.eventId === 'poison') throw new Error('cannot process');
        handled.push(e.eventId);
      },
    });
    try {
      await publisher.publish(topic, UsageEventSchema, { eventId: 'poison' }, '1');
      await publisher.publish(topic, UsageEventSchema, { eventId: 'fine' }, '1');
      await eventually(
        () => handled.length,
        (n) => n === 1,
        { timeoutMs: 30_000, what: 'the healthy event handled' },
      );
      expect(handled).toEqual(['fine']);
      expect(await value('kafka_consumer_dead_letters_total', { group: groupId })).toBe(1);
    } finally {
      await consumer.stop();
    }
  });

  it('when a send fails, then the topic counts a producer error; queued events show in the queue size', async () => {
    const stop = reportProducerQueue(() => 7);
    try {
      expect(await value('kafka_producer_queue_size')).toBe(7);
    } finally {
      stop();
    }
    expect(await value('kafka_producer_queue_size')).toBe(0);
    // A topic name Kafka refuses (illegal characters): the send fails after the client's retries.
    const bad = `bad topic ${randomUUID()}`;
    await expect(publisher.publishRaw(bad, [{ key: 'k', value: Buffer.from('x') }])).rejects.toThrow();
    expect(await value('kafka_producer_errors_total', { topic: bad })).toBe(1);
    expect(await value('kafka_producer_queue_size')).toBe(0);
  });
});
