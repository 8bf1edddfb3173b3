/**
 * Consumer health against a real Kafka broker: a consumer that stops making progress turns its
 * service's /readyz (and after the grace period /healthz) to 503, and back to 200 once it
 * recovers; a consumer whose kafkajs client goes away underneath comes back by itself.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  adminAlerts,
  type ConsumerHandle,
  consumerRegistry,
  createKafka,
  createLogger,
  createOpsApp,
  createPublisher,
  ensureTopics,
  listen,
  type Publisher,
  runBatchConsumer,
  stallNotification,
} from '@aigw/common';
import { UsageEventSchema } from '@aigw/proto/events/v1/events';
import { eventually } from '@aigw/testkit';
import type { Consumer, Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const logger = createLogger('consumer-health-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const fast = {
  KAFKA_CONSUMER_STALL_MS: 3_000,
  KAFKA_CONSUMER_LIVENESS_GRACE_MS: 3_000,
  KAFKA_CONSUMER_LAG_SAMPLE_MS: 500,
  KAFKA_CONSUMER_HEARTBEAT_MS: 1_000,
};

let kafka: Kafka;
let publisher: Publisher;
beforeAll(async () => {
  kafka = createKafka(process.env.KAFKA_BROKERS!.split(','), 'consumer-health-test', logger);
  publisher = await createPublisher(kafka);
});
afterAll(async () => {
  await publisher?.disconnect();
});

describe('consumer health', () => {
  it('when a consumer stops making progress, then /readyz and after the grace /healthz fail, the admins get one signed alert, and both pass again once it recovers', async () => {
    const topic = `test.health.${randomUUID()}`;
    await ensureTopics(kafka, [topic], 1);
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const handled: string[] = [];
    const consumer = await runBatchConsumer({
      kafka,
      groupId: `g-${randomUUID()}`,
      topic,
      schema: UsageEventSchema,
      logger,
      publisher,
      settings: fast,
      handleBatch: async (items) => {
        await gate;
        handled.push(...items.map((i) => i.event.eventId));
      },
    });
    const consumers = consumerRegistry(fast);
    consumers.add('usage', consumer);
    const ops = await listen(
      createOpsApp({ consumers: consumers.readiness }, { consumers: consumers.liveness }),
      0,
      '127.0.0.1',
    );
    const probe = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${ops.port}${path}`);
      return { status: res.status, body: (await res.json()) as { checks?: Record<string, string> } };
    };
    // The admins' webhook (AdminWebhookUrl): a local receiver keeping what it got.
    const alerts: { body: string; signature: string }[] = [];
    const hook = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        alerts.push({ body, signature: String(req.headers['x-webhook-signature'] ?? '') });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/alert`;
    const alert = adminAlerts(
      { text: (key: string) => (key === 'AdminWebhookUrl' ? hookUrl : 'alert-secret') },
      { allowPrivate: true },
      logger,
    );
    const stopAlerts = consumers.onStall((name, h) => alert(stallNotification('test', name, h)), 100);
    try {
      expect((await probe('/readyz')).status).toBe(200);
      for (const id of ['a', 'b', 'c']) await publisher.publish(topic, UsageEventSchema, { eventId: id }, '1');

      // The handler is stuck: lag and no progress for longer than the stall time.
      const notReady = await eventually(
        () => probe('/readyz'),
        (r) => r.status === 503,
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      expect(notReady.body.checks?.consumers).toMatch(/usage stalled/);
      expect(consumer.health().state).toBe('stalled');
      expect((await probe('/healthz')).status).toBe(200);
      await eventually(
        () => probe('/healthz'),
        (r) => r.status === 503,
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      // One alert for the stall (still stalled after the grace: not one per look), signed.
      await eventually(
        async () => alerts.length,
        (n) => n >= 1,
        { what: 'the admin alert' },
      );
      expect(alerts).toHaveLength(1);
      const sent = JSON.parse(alerts[0]?.body ?? '{}') as { type: string; content: string };
      expect(sent.type).toBe('consumer_stalled');
      expect(sent.content).toContain('服务 test 的 Kafka 消费者 usage');
      expect(alerts[0]?.signature).toBe(
        createHmac('sha256', 'alert-secret')
          .update(alerts[0]?.body ?? '')
          .digest('hex'),
      );

      release();
      await eventually(
        () => probe('/readyz'),
        (r) => r.status === 200,
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      expect((await probe('/healthz')).status).toBe(200);
      // The first batch may have held only 'a'; the rest follows.
      await eventually(
        async () => handled.length,
        (n) => n >= 3,
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      expect(handled).toEqual(['a', 'b', 'c']);
      expect(consumer.health().state).toBe('consuming');
    } finally {
      release();
      stopAlerts();
      await consumer.stop();
      await ops.close();
      await new Promise((r) => hook.close(r));
    }
    expect(consumer.health().state).toBe('stopped');
  }, 90_000);

  it('when the kafkajs consumer disconnects underneath, then a new one joins the group and consumes what follows', async () => {
    const topic = `test.rejoin.${randomUUID()}`;
    await ensureTopics(kafka, [topic], 1);
    const clients: Consumer[] = [];
    const handled = new Map<string, number>();
    let consumer: ConsumerHandle | undefined;
    try {
      consumer = await runBatchConsumer({
        kafka,
        groupId: `g-${randomUUID()}`,
        topic,
        schema: UsageEventSchema,
        logger,
        publisher,
        settings: fast,
        instrument: (c) => {
          clients.push(c);
        },
        handleBatch: async (items) => {
          for (const i of items) handled.set(i.event.eventId, (handled.get(i.event.eventId) ?? 0) + 1);
        },
      });
      await publisher.publish(topic, UsageEventSchema, { eventId: 'before' }, '1');
      await eventually(
        async () => handled.has('before'),
        (v) => v,
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      await clients[0]?.disconnect();
      await eventually(
        async () => clients.length,
        (n) => n >= 2,
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      await publisher.publish(topic, UsageEventSchema, { eventId: 'after' }, '1');
      await eventually(
        async () => handled.has('after'),
        (v) => v,
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      expect(consumer.health().state).toBe('consuming');
      expect(handled.get('after')).toBe(1);
    } finally {
      await consumer?.stop();
    }
  }, 90_000);
});
