// Proves that provideInfra() gives real servers: a MongoDB-wire server that enforces unique
// indexes, a Kafka broker that delivers a produced message to a consumer group, and Redis.
import { Redis } from 'ioredis';
import { type Consumer, Kafka, type KafkaMessage, logLevel, Partitioners, type Producer } from 'kafkajs';
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Infra, infraEnv, infraFromEnv, parseInfraOutput, provideInfra, uniqueName } from '../src/index.ts';

let infra: Infra;

beforeAll(async () => {
  infra = await provideInfra();
});

afterAll(async () => {
  await infra?.stop();
});

describe('provideInfra', () => {
  it('returns URLs for all three servers', () => {
    expect(['env', 'testcontainers', 'local']).toContain(infra.source);
    expect(infra.mongoUrl).toMatch(/^mongodb:\/\//);
    expect(infra.kafkaBrokers.length).toBeGreaterThan(0);
    expect(infra.redisUrl).toMatch(/^redis:\/\//);
    if (infra.source === 'local') {
      expect(infra.mongoUrl).toBe('mongodb://127.0.0.1:27027/');
      expect(infra.kafkaBrokers).toEqual(['127.0.0.1:9094']);
      expect(infra.redisUrl).toBe('redis://127.0.0.1:6390');
    }
  });

  it('is memoized per process', async () => {
    expect(await provideInfra()).toBe(await provideInfra());
  });

  it('reads the environment only when all three variables are set', () => {
    expect(infraFromEnv({ MONGO_URL: 'mongodb://h:1/', KAFKA_BROKERS: 'a:1' })).toBeUndefined();
    const env = infraFromEnv({ MONGO_URL: 'mongodb://h:1/', KAFKA_BROKERS: 'a:1, b:2', REDIS_URL: 'redis://r:3' });
    expect(env?.source).toBe('env');
    expect(env?.kafkaBrokers).toEqual(['a:1', 'b:2']);
    expect(infraEnv(env as Infra)).toEqual({
      MONGO_URL: 'mongodb://h:1/',
      KAFKA_BROKERS: 'a:1,b:2',
      REDIS_URL: 'redis://r:3',
    });
  });

  it('parses the three lines of infra.sh', () => {
    const parsed = parseInfraOutput(
      'MONGO_URL=mongodb://127.0.0.1:27027/\nKAFKA_BROKERS=127.0.0.1:9094\nREDIS_URL=redis://127.0.0.1:6390\n',
    );
    expect(parsed).toEqual({
      mongoUrl: 'mongodb://127.0.0.1:27027/',
      kafkaBrokers: ['127.0.0.1:9094'],
      redisUrl: 'redis://127.0.0.1:6390',
    });
    expect(() => parseInfraOutput('MONGO_URL=x\n')).toThrow(/KAFKA_BROKERS, REDIS_URL/);
  });
});

describe('uniqueName', () => {
  it('gives distinct names valid for databases, topics and groups', () => {
    const names = new Set(Array.from({ length: 1000 }, () => uniqueName('Billing Test/Quota')));
    expect(names.size).toBe(1000);
    for (const n of names) {
      expect(n).toMatch(/^billing_test_quota_[a-z0-9]+_[a-z0-9]{6}$/);
      expect(n.length).toBeLessThanOrEqual(63);
    }
    expect(uniqueName('x'.repeat(200)).length).toBeLessThanOrEqual(63);
    expect(uniqueName('')).toMatch(/^t_/);
  });
});

describe('MongoDB-compatible server (mongoose)', () => {
  const dbName = uniqueName('infra_mongo');
  let conn: mongoose.Connection;

  beforeAll(async () => {
    conn = await mongoose.createConnection(infra.mongoUrl, { dbName, serverSelectionTimeoutMS: 10_000 }).asPromise();
  });

  afterAll(async () => {
    await conn?.dropDatabase();
    await conn?.close();
  });

  it('enforces a unique index, inserts and finds', async () => {
    const User = conn.model(
      'User',
      new mongoose.Schema({
        email: { type: String, required: true, unique: true },
        quota: { type: Number, default: 0 },
      }),
    );
    await User.init(); // builds the unique index
    const indexes = await User.collection.indexes();
    expect(indexes.find((i) => i.key.email === 1)?.unique).toBe(true);

    await User.create({ email: 'a@example.com', quota: 10 });
    await expect(User.create({ email: 'a@example.com', quota: 20 })).rejects.toMatchObject({ code: 11000 });
    await expect(User.create({ email: 'a@example.com' })).rejects.toThrow(/E11000/);

    const found = await User.find({ email: 'a@example.com' }).lean();
    expect(found).toHaveLength(1);
    expect(found[0]?.quota).toBe(10);
  });
});

describe('Kafka (kafkajs)', () => {
  let kafka: Kafka;
  let producer: Producer;
  const consumers: Consumer[] = [];

  beforeAll(async () => {
    kafka = new Kafka({ clientId: 'infra-test', brokers: infra.kafkaBrokers, logLevel: logLevel.NOTHING });
    producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
  });

  afterAll(async () => {
    await Promise.allSettled(consumers.map((c) => c.disconnect()));
    await producer?.disconnect();
  });

  /** Subscribes a fresh consumer group to `topic` and resolves with its first message. */
  async function firstMessage(topic: string): Promise<KafkaMessage> {
    const consumer = kafka.consumer({
      groupId: uniqueName('infra_group'),
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
      maxWaitTimeInMs: 500,
    });
    consumers.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    return new Promise<KafkaMessage>((resolve, reject) => {
      consumer
        .run({
          eachMessage: async ({ message }) => {
            resolve(message);
          },
        })
        .catch(reject);
    });
  }

  it('delivers a produced message to a consumer on a fresh topic', async () => {
    const topic = uniqueName('infra_topic');
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true })).toBe(true);
    } finally {
      await admin.disconnect();
    }
    const received = firstMessage(topic);
    await producer.send({ topic, messages: [{ key: 'k1', value: JSON.stringify({ hello: 'kafka' }) }] });
    const message = await received;
    expect(message.key?.toString()).toBe('k1');
    expect(JSON.parse(message.value?.toString() ?? 'null')).toEqual({ hello: 'kafka' });
  });

  it('creates topics on first use (auto.create.topics.enable) with 3 partitions', async () => {
    const topic = uniqueName('infra_auto');
    await producer.send({ topic, messages: [{ value: 'auto' }] });
    const admin = kafka.admin();
    await admin.connect();
    try {
      const meta = await admin.fetchTopicMetadata({ topics: [topic] });
      const partitions = meta.topics[0]?.partitions.length ?? 0;
      expect(partitions).toBeGreaterThanOrEqual(1);
      if (infra.source === 'local') expect(partitions).toBe(3); // num.partitions in server.properties
    } finally {
      await admin.disconnect();
    }
    expect((await firstMessage(topic)).value?.toString()).toBe('auto');
  });
});

describe('Redis (ioredis)', () => {
  let redis: Redis;
  const prefix = `${uniqueName('infra_redis')}:`;

  beforeAll(() => {
    redis = new Redis(infra.redisUrl, { keyPrefix: prefix, maxRetriesPerRequest: 3 });
  });

  afterAll(async () => {
    await redis?.del('greeting', 'counter');
    redis?.disconnect();
  });

  it('SET / GET / INCR', async () => {
    expect(await redis.set('greeting', 'hello', 'EX', 60)).toBe('OK');
    expect(await redis.get('greeting')).toBe('hello');
    expect(await redis.incr('counter')).toBe(1);
    expect(await redis.incrby('counter', 41)).toBe(42);
    expect(await redis.ttl('greeting')).toBeGreaterThan(0);
  });
});
