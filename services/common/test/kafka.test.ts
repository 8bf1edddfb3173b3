import { randomUUID } from 'node:crypto';
import { createKafka, createLogger, createPublisher, ensureTopics, type Publisher, runConsumer } from '@aigw/common';
import { UsageEventSchema } from '@aigw/proto/events/v1/events';
import { deadLetter } from '@aigw/proto/topics';
import { fromBinary } from '@bufbuild/protobuf';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const logger = createLogger('kafka-test', 'silent');

describe('Kafka publisher and consumer with protobuf events', () => {
  let kafka: Kafka;
  let publisher: Publisher;
  beforeAll(async () => {
    kafka = createKafka(process.env.KAFKA_BROKERS!.split(','), 'kafka-test', logger);
    publisher = await createPublisher(kafka);
  });
  afterAll(async () => {
    await publisher?.disconnect();
  });

  it('when a usage event is published, then a consumer decodes the same event', async () => {
    const topic = `test.usage.${randomUUID()}`;
    await ensureTopics(kafka, [topic], 1);
    const received: { id: string; model: string; quota: number; key: string }[] = [];
    const consumer = await runConsumer({
      kafka,
      groupId: `g-${randomUUID()}`,
      topic,
      schema: UsageEventSchema,
      logger,
      publisher,
      handle: async (e, meta) => {
        received.push({ id: e.eventId, model: e.modelName, quota: e.quota, key: meta.key });
      },
    });
    try {
      await publisher.publish(
        topic,
        UsageEventSchema,
        { eventId: 'ev-1', userId: 7, modelName: 'gpt-4o', quota: 1234 },
        '7',
      );
      await until(() => received.length === 1);
      expect(received[0]).toEqual({ id: 'ev-1', model: 'gpt-4o', quota: 1234, key: '7' });
    } finally {
      await consumer.stop();
    }
  });

  it('when an idle consumer is stopped, then it does not wait out a 5 s fetch long-poll', async () => {
    const topic = `test.idle.${randomUUID()}`;
    await ensureTopics(kafka, [topic], 1);
    let fetchStarted = 0;
    const consumer = await runConsumer({
      kafka,
      groupId: `g-${randomUUID()}`,
      topic,
      schema: UsageEventSchema,
      logger,
      publisher,
      handle: async () => undefined,
      instrument: (c) => {
        c.on(c.events.FETCH_START, () => {
          fetchStarted += 1;
        });
      },
    });
    // Idle long-polls by now; stop() comes right as the next one starts.
    await new Promise((r) => setTimeout(r, 1_500));
    const seen = fetchStarted;
    await until(() => fetchStarted > seen);
    const t0 = performance.now();
    await consumer.stop();
    // kafkajs' default fetch wait (5 s) made this about 5 s per consumer; 1 s of wait plus the
    // group leave stays well under 3 s.
    expect(performance.now() - t0).toBeLessThan(3_000);
  });

  it('when a handler keeps failing, then the event goes to the dead-letter topic and the partition moves on', async () => {
    const topic = `test.dlq.${randomUUID()}`;
    await ensureTopics(kafka, [topic, deadLetter(topic)], 1);
    const handled: string[] = [];
    const consumer = await runConsumer({
      kafka,
      groupId: `g-${randomUUID()}`,
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
    const dead: { id: string; error: string }[] = [];
    const dlqConsumer = kafka.consumer({ groupId: `g-${randomUUID()}` });
    await dlqConsumer.connect();
    await dlqConsumer.subscribe({ topic: deadLetter(topic), fromBeginning: true });
    await dlqConsumer.run({
      eachMessage: async ({ message }) => {
        dead.push({
          id: fromBinary(UsageEventSchema, message.value!).eventId,
          error: message.headers?.['x-error']?.toString() ?? '',
        });
      },
    });
    try {
      await publisher.publish(topic, UsageEventSchema, { eventId: 'poison' }, '1');
      await publisher.publish(topic, UsageEventSchema, { eventId: 'fine' }, '1');
      await until(() => handled.length === 1 && dead.length === 1);
      expect(handled).toEqual(['fine']);
      expect(dead).toEqual([{ id: 'poison', error: 'cannot process' }]);
    } finally {
      await consumer.stop();
      await dlqConsumer.disconnect();
    }
  });
});

async function until(cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('kafkajs idle connections (patches/kafkajs@2.2.4.patch)', () => {
  it('when a connected producer sits idle, then it does not re-arm a timer every millisecond', async () => {
    const { createHook } = await import('node:async_hooks');
    const kafka = createKafka(process.env.KAFKA_BROKERS!.split(','), 'kafka-idle-test', logger);
    const publisher = await createPublisher(kafka);
    try {
      // One publish opens the broker connections whose request queues used to spin.
      const topic = `test.idle.${randomUUID()}`;
      await ensureTopics(kafka, [topic], 1);
      await publisher.publish(topic, UsageEventSchema, { eventId: 'idle-1' }, '1');
      let timeouts = 0;
      const hook = createHook({
        init(_id, type) {
          if (type === 'Timeout') timeouts++;
        },
      }).enable();
      await new Promise((r) => setTimeout(r, 1_000));
      hook.disable();
      // Unpatched: about 1,000 per broker connection in this second. Patched: a handful.
      expect(timeouts).toBeLessThan(50);
    } finally {
      await publisher.disconnect();
    }
  });
});
