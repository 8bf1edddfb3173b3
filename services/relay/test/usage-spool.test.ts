/**
 * The relay's durable usage spool (issue 23: answered requests are always billed): a process that
 * queued usage events and was killed with SIGKILL before its linger sent them leaves them in its
 * spool directory, and the next relay with that directory publishes every one of them to Kafka.
 * Real Kafka, a real child process, a real kill.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createKafka, createLogger, createPublisher, ensureTopics, topicName } from '@aigw/common';
import { UsageEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import { eventually } from '@aigw/testkit';
import { fromBinary } from '@bufbuild/protobuf';
import { afterAll, describe, expect, it } from 'vitest';
import { openUsageSpool, readFrames } from '../src/data/usage-spool.ts';
import { relayEvents } from '../src/transport/kafka/relay-events.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const dir = mkdtempSync(join(tmpdir(), 'aigw-spool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the writer until it kills itself; resolves with the signal that ended it. */
function killedWriter(env: Record<string, string>): Promise<NodeJS.Signals | null> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'services/relay/test/fakes/spool-writer.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.once('error', fail);
    child.once('exit', (_code, signal) => done(signal));
  });
}

describe('usage spool', () => {
  it('when a relay is killed with usage events it had not sent, then the next relay on its spool publishes every one of them', async () => {
    const prefix = `spool${randomBytes(4).toString('hex')}`;
    const topicPrefix = `${prefix}.`;
    const count = 300;
    const signal = await killedWriter({
      KAFKA_TOPIC_PREFIX: topicPrefix,
      SPOOL_DIR: dir,
      COUNT: String(count),
      REQUEST_PREFIX: prefix,
    });
    expect(signal).toBe('SIGKILL');
    // The killed process left its events on disk (and its lock, which names a dead process).
    const segs = readdirSync(dir).filter((f) => f.endsWith('.seg'));
    expect(segs.length).toBeGreaterThan(0);
    expect(existsSync(join(dir, 'owner.lock'))).toBe(true);

    const logger = createLogger('usage-spool-test');
    const kafka = createKafka((process.env.KAFKA_BROKERS as string).split(','), 'usage-spool-test', logger);
    const saved = process.env.KAFKA_TOPIC_PREFIX;
    process.env.KAFKA_TOPIC_PREFIX = topicPrefix;
    const topic = topicName(TOPICS.usage);
    await ensureTopics(kafka, [topic]);
    const publisher = await createPublisher(kafka);
    const events = relayEvents(publisher, logger, { spool: openUsageSpool(dir, logger) });
    process.env.KAFKA_TOPIC_PREFIX = saved;

    const seen = new Map<string, number>();
    const consumer = kafka.consumer({ groupId: `${prefix}-check` });
    try {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          const ev = fromBinary(UsageEventSchema, message.value as Buffer);
          seen.set(ev.requestId, ev.quota);
        },
      });
      await events.flush();
      await eventually(
        async () => seen.size,
        (n) => n >= count,
        { timeoutMs: 30_000, what: `all ${count} usage events on ${topic}` },
      );
      for (let i = 0; i < count; i++) expect(seen.get(`${prefix}-${i}`)).toBe(30 + i);
      // Acknowledged segments are removed; the lock is this process's now.
      await eventually(
        async () => readdirSync(dir).filter((f) => f.endsWith('.seg')).length,
        (n) => n === 0,
      );
    } finally {
      await events.stop(1_000);
      await consumer.disconnect();
      await publisher.disconnect();
    }
    expect(existsSync(join(dir, 'owner.lock'))).toBe(false);
  });

  it('when a frame was cut short by a kill, then the frames before it are read; a directory a live process holds is refused', () => {
    const logger = createLogger('usage-spool-test');
    const own = mkdtempSync(join(tmpdir(), 'aigw-spool-cut-'));
    try {
      const spool = openUsageSpool(own, logger);
      spool.append({ key: '1', value: Buffer.from([1, 2, 3]), headers: { traceparent: 't' } });
      const seg = spool.append({ key: '2', value: Buffer.from([4, 5]) });
      spool.close();
      const whole = readFileSync(seg.file);
      writeFileSync(seg.file, whole.subarray(0, whole.length - 1));
      expect(readFrames(readFileSync(seg.file))).toEqual([
        { key: '1', value: Buffer.from([1, 2, 3]), headers: { traceparent: 't' } },
      ]);
      // The parent of this test process is alive: its lock is not taken over.
      writeFileSync(join(own, 'owner.lock'), String(process.ppid));
      expect(() => openUsageSpool(own, logger)).toThrow(/give each relay its own RELAY_USAGE_SPOOL_DIR/);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
});
