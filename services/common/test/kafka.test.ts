import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import {
  createKafka,
  createLogger,
  createPublisher,
  ensureTopics,
  type Publisher,
  registry,
  runBatchConsumer,
  runConsumer,
} from '@aigw/common';
import { UsageEventSchema } from '@aigw/proto/events/v1/events';
import { deadLetter } from '@aigw/proto/topics';
import { eventually } from '@aigw/testkit';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const logger = createLogger('kafka-test', 'silent');

/** A client, a publisher and a topic of the test's own (with its dead-letter topic). */
async function freshTopic(name: string, partitions = 1) {
  const kafka = createKafka(process.env.KAFKA_BROKERS!.split(','), `kafka-${name}-test`, logger);
  const publisher = await createPublisher(kafka);
  const topic = `test.${name}.${randomUUID()}`;
  await ensureTopics(kafka, [topic, deadLetter(topic)], partitions);
  return { kafka, publisher, topic };
}

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
      await eventually(
        () => received.length,
        (n) => n === 1,
        { timeoutMs: 30_000, intervalMs: 50, what: 'the event consumed' },
      );
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
    // Idle long-polls: a first fetch came back empty after its wait and the next one started.
    await eventually(
      () => fetchStarted,
      (n) => n >= 2,
      { timeoutMs: 30_000, intervalMs: 50, what: 'the consumer long-polling' },
    );
    // stop() comes right as the next long-poll starts.
    const seen = fetchStarted;
    await eventually(
      () => fetchStarted,
      (n) => n > seen,
      { timeoutMs: 30_000, intervalMs: 50, what: 'the next fetch started' },
    );
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
      await eventually(
        () => ({ handled: handled.length, dead: dead.length }),
        (n) => n.handled === 1 && n.dead === 1,
        { timeoutMs: 30_000, intervalMs: 50, what: 'one event handled and one dead-lettered' },
      );
      expect(handled).toEqual(['fine']);
      expect(dead).toEqual([{ id: 'poison', error: 'cannot process' }]);
    } finally {
      await consumer.stop();
      await dlqConsumer.disconnect();
    }
  });
});

describe('runBatchConsumer', () => {
  it('when a batch keeps failing because of one event, then the batch is split, only that event is dead-lettered, and the rest is handled', async () => {
    const { kafka, publisher, topic } = await freshTopic('split');
    const ids = Array.from({ length: 40 }, (_, i) => (i === 23 ? 'poison' : `ok-${i}`));
    // Published before the consumer starts, in one send: they arrive as one batch.
    await publisher.publishRaw(
      topic,
      ids.map((eventId) => ({
        key: '1',
        value: Buffer.from(toBinary(UsageEventSchema, create(UsageEventSchema, { eventId }))),
      })),
    );
    const done = new Set<string>();
    const sizes: number[] = [];
    const consumer = await runBatchConsumer({
      kafka,
      groupId: `g-${randomUUID()}`,
      topic,
      schema: UsageEventSchema,
      logger,
      publisher,
      maxAttempts: 2,
      handleBatch: async (items) => {
        sizes.push(items.length);
        if (items.some((i) => i.event.eventId === 'poison')) throw new Error('cannot process');
        for (const i of items) done.add(i.event.eventId);
      },
    });
    const dead: string[] = [];
    const dlqConsumer = kafka.consumer({ groupId: `g-${randomUUID()}` });
    await dlqConsumer.connect();
    await dlqConsumer.subscribe({ topic: deadLetter(topic), fromBeginning: true });
    await dlqConsumer.run({
      eachMessage: async ({ message }) => {
        dead.push(fromBinary(UsageEventSchema, message.value!).eventId);
      },
    });
    try {
      await eventually(
        () => ({ done: done.size, dead: dead.length }),
        (n) => n.done === 39 && n.dead === 1,
        { timeoutMs: 60_000, intervalMs: 50, what: '39 events done and one dead-lettered' },
      );
      expect(dead).toEqual(['poison']);
      expect([...done].sort()).toEqual(ids.filter((i) => i !== 'poison').sort());
      expect(sizes[0]).toBe(40);
      expect(Math.min(...sizes)).toBe(1);
    } finally {
      await consumer.stop();
      await dlqConsumer.disconnect();
      await publisher.disconnect();
    }
  }, 90_000);
});

describe('runBatchConsumer pace', () => {
  it('when a partition is busy, then a paced consumer takes it in fewer, larger batches than one fetching at once', async () => {
    const { kafka, publisher, topic } = await freshTopic('pace');
    const seen = { paced: [] as number[], eager: [] as number[] };
    const start = (name: 'paced' | 'eager') =>
      runBatchConsumer({
        kafka,
        groupId: `g-${randomUUID()}`,
        topic,
        schema: UsageEventSchema,
        logger,
        publisher,
        fromBeginning: true,
        ...(name === 'paced' ? { pace: { ms: 200, minRate: 50 } } : {}),
        handleBatch: async (items) => {
          seen[name].push(items.length);
        },
      });
    const consumers = await Promise.all([start('paced'), start('eager')]);
    try {
      // About 200 events a second for 1.5 s, a few at a time.
      const total = 300;
      for (let i = 0; i < total; i += 3) {
        await publisher.publishRaw(
          topic,
          [0, 1, 2].map((k) => ({
            key: '1',
            value: Buffer.from(toBinary(UsageEventSchema, create(UsageEventSchema, { eventId: `e-${i + k}` }))),
          })),
        );
        await new Promise((r) => setTimeout(r, 15));
      }
      const sum = (l: number[]) => l.reduce((a, b) => a + b, 0);
      await eventually(
        () => [sum(seen.paced), sum(seen.eager)],
        ([p, e]) => p === total && e === total,
        { timeoutMs: 30_000, intervalMs: 50, what: 'both consumers took every event' },
      );
      // The eager consumer fetched again after each batch; the paced one at most every 200 ms.
      expect(seen.paced.length).toBeLessThan(seen.eager.length / 2);
      expect(total / seen.paced.length).toBeGreaterThanOrEqual(10);
    } finally {
      await Promise.all(consumers.map((c) => c.stop()));
      await publisher.disconnect();
    }
  }, 60_000);
});

describe('runBatchConsumer merged partitions', () => {
  it('when several partitions bring events in one fetch, then a merging consumer hands them to one call, and a poison event fails only its own partition', async () => {
    const { kafka, publisher, topic } = await freshTopic('merge', 3);
    // Published before the consumers start: one fetch brings all three partitions.
    const ids = Array.from({ length: 30 }, (_, i) => (i === 17 ? 'poison' : `e-${i}`));
    await publisher.publishRaw(
      topic,
      ids.map((eventId, i) => ({
        key: `k${i % 6}`,
        value: Buffer.from(toBinary(UsageEventSchema, create(UsageEventSchema, { eventId }))),
      })),
    );
    const calls = { merged: [] as number[][], apart: [] as number[][] };
    const done = { merged: new Set<string>(), apart: new Set<string>() };
    const start = (name: 'merged' | 'apart') =>
      runBatchConsumer({
        kafka,
        groupId: `g-${randomUUID()}`,
        topic,
        schema: UsageEventSchema,
        logger,
        publisher,
        maxAttempts: 1,
        fromBeginning: true,
        deadLetterTopic: `${deadLetter(topic)}.${name}`,
        ...(name === 'merged' ? { mergePartitions: true } : {}),
        handleBatch: async (items) => {
          calls[name].push([...new Set(items.map((i) => i.partition))]);
          if (items.some((i) => i.event.eventId === 'poison')) throw new Error('cannot process');
          for (const i of items) done[name].add(i.event.eventId);
        },
      });
    await ensureTopics(kafka, [`${deadLetter(topic)}.merged`, `${deadLetter(topic)}.apart`], 1);
    const consumers = await Promise.all([start('merged'), start('apart')]);
    try {
      await eventually(
        () => [done.merged.size, done.apart.size],
        ([m, a]) => m === 29 && a === 29,
        { timeoutMs: 30_000, intervalMs: 50, what: 'both consumers handled every event but the poison one' },
      );
      // The first call of the merging consumer held all three partitions; the other's one each.
      expect(calls.merged[0]).toHaveLength(3);
      expect(Math.max(...calls.apart.map((c) => c.length))).toBe(1);
      expect([...done.merged].sort()).toEqual(ids.filter((i) => i !== 'poison').sort());
    } finally {
      await Promise.all(consumers.map((c) => c.stop()));
      await publisher.disconnect();
    }
  }, 60_000);
});

describe('runBatchConsumer budget', () => {
  it('when a handler call never returns (a write the driver waits on forever), then it is abandoned after its budget, the consumer is replaced and the batch handled again', async () => {
    const { kafka, publisher, topic } = await freshTopic('budget');
    const groupId = `g-${randomUUID()}`;
    const abandoned = async () =>
      (await registry.getSingleMetric('kafka_consumer_batches_abandoned_total')?.get())?.values.find(
        (v) => v.labels.group === groupId,
      )?.value ?? 0;
    await publisher.publishRaw(
      topic,
      ['a', 'b', 'c'].map((eventId) => ({
        key: '1',
        value: Buffer.from(toBinary(UsageEventSchema, create(UsageEventSchema, { eventId }))),
      })),
    );
    let calls = 0;
    const done = new Set<string>();
    const started = Date.now();
    const consumer = await runBatchConsumer({
      kafka,
      groupId,
      topic,
      schema: UsageEventSchema,
      logger,
      publisher,
      settings: { KAFKA_CONSUMER_BATCH_BUDGET_MS: 1_500 },
      handleBatch: async (items) => {
        calls++;
        if (calls === 1) await new Promise(() => {}); // hangs for good
        for (const i of items) done.add(i.event.eventId);
      },
    });
    try {
      await eventually(
        () => done.size,
        (n) => n === 3,
        { timeoutMs: 30_000, intervalMs: 50, what: 'the three events handled by the replacing consumer' },
      );
      // Budget 1.5 s, then a new consumer joins (1 s back-off) and fetches from the committed offset.
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(calls).toBe(2);
      expect(await abandoned()).toBe(1);
      expect(consumer.health().state).toBe('consuming');
    } finally {
      await consumer.stop();
      await publisher.disconnect();
    }
  }, 60_000);
});

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
      // A second of idleness is the scenario itself (timers armed per unit of time), not a wait.
      await new Promise((r) => setTimeout(r, 1_000));
      hook.disable();
      // Unpatched: about 1,000 per broker connection in this second. Patched: a handful.
      expect(timeouts).toBeLessThan(50);
    } finally {
      await publisher.disconnect();
    }
  });
});

interface Enc {
  buffer: Buffer;
  writeVarInt(v: number): Enc;
  writeVarLong(v: unknown): Enc;
  writeInt8(v: number): Enc;
}
// A constructor type, not an interface with a construct signature (Biome 2.3.9 panics on those).
type EncoderClass = (new (
  size?: number,
) => Enc) & {
  sizeOfVarInt(v: number): number;
  sizeOfVarLong(v: unknown): number;
};

describe('kafkajs encoder (patches/kafkajs@2.2.4.patch)', () => {
  // kafkajs has no exports map: its protocol modules are reachable by path.
  const req = createRequire(import.meta.url);
  const Encoder = req('kafkajs/src/protocol/encoder') as EncoderClass;
  const Long = req('kafkajs/src/utils/long') as { fromNumber(n: number): unknown };
  const group = req('kafkajs/src/producer/groupMessagesPerPartition') as (a: {
    topic: string;
    partitionMetadata: unknown[];
    messages: { key: string }[];
    partitioner: (a: { message: { key: string } }) => number;
  }) => Record<string, { key: string }[]>;

  /** The protocol's varlong: zigzag over 64 bits, then 7 bits per byte, low bits first. */
  const reference = (v: bigint): Buffer => {
    let z = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
    const out: number[] = [];
    while (z >= 0x80n) {
      out.push(Number(z & 0x7fn) | 0x80);
      z >>= 7n;
    }
    out.push(Number(z));
    return Buffer.from(out);
  };

  it('when varints and varlongs are written (the small-number fast path and the Long path), then the bytes are the protocol’s', () => {
    const values = [
      0,
      1,
      -1,
      63,
      -64,
      64,
      300,
      -300,
      2 ** 30 - 1,
      -(2 ** 30),
      2 ** 30,
      -(2 ** 30) - 1,
      2 ** 31 - 1,
      -(2 ** 31),
    ];
    for (let i = 0; i < 500; i++) values.push(Math.round((Math.random() - 0.5) * 2 ** (1 + (i % 52))));
    for (const v of values) {
      const want = reference(BigInt(v));
      expect(new Encoder().writeVarLong(v).buffer, `varlong ${v}`).toEqual(want);
      expect(new Encoder().writeVarLong(Long.fromNumber(v)).buffer, `Long ${v}`).toEqual(want);
      expect(Encoder.sizeOfVarLong(v), `size ${v}`).toBe(want.length);
      if (v >= -(2 ** 31) && v < 2 ** 31) {
        expect(new Encoder().writeVarInt(v).buffer, `varint ${v}`).toEqual(want);
        expect(Encoder.sizeOfVarInt(v)).toBe(want.length);
      }
    }
    // Pooled (unzeroed) buffers: only what was written comes out, also after growing.
    const e = new Encoder(2);
    for (let i = 0; i < 100; i++) e.writeVarInt(i * 1000).writeInt8(7);
    const expected = Buffer.concat(
      Array.from({ length: 100 }, (_, i) => Buffer.concat([reference(BigInt(i * 1000)), Buffer.from([7])])),
    );
    expect(e.buffer).toEqual(expected);
  });

  it('when a batch is grouped per partition, then each partition keeps its messages in order', () => {
    const messages = Array.from({ length: 200 }, (_, i) => ({ key: String(i) }));
    const byPartition = group({
      topic: 't',
      partitionMetadata: [{}, {}, {}],
      messages,
      partitioner: ({ message }) => Number(message.key) % 3,
    });
    expect(Object.keys(byPartition)).toEqual(['0', '1', '2']);
    for (const p of [0, 1, 2])
      expect(byPartition[String(p)]?.map((m) => m.key)).toEqual(
        messages.filter((_, i) => i % 3 === p).map((m) => m.key),
      );
    expect(group({ topic: 't', partitionMetadata: [], messages, partitioner: () => 0 })).toEqual({});
  });
});
