import type { KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.ts';
import { type ChunkContext, chunkHandler, isTransient, type RawItem } from './chunk.ts';
import { partitionLag } from './lag-sampler.ts';
import { healthState, joinGroup, leaveGroup, newMembership, stallReason, watchdogReason } from './membership.ts';

const log = createLogger('kafka-consumer-test', 'silent');

describe('batch consumer membership', () => {
  it('when a consumer has not joined yet, then it is starting, and stalled once out longer than the stall time', () => {
    const m = newMembership(1_000);
    expect(healthState(m, 500, 1_200)).toEqual({ state: 'starting', sinceMs: 1_000 });
    expect(healthState(m, 500, 1_600)).toEqual({ state: 'stalled', sinceMs: 1_500 });
    expect(stallReason(m)).toBe('out of its group (start)');
  });

  it('when a member leaves and comes back, then it is rejoining meanwhile and the join says it is a rejoin', () => {
    const m = newMembership(0);
    expect(joinGroup(m, [0, 1], 10)).toBe(false);
    m.pendingSince.set(1, 5);
    leaveGroup(m, 'rebalance', 20);
    leaveGroup(m, 'crash', 25);
    expect(m.leftFor).toBe('rebalance');
    expect(healthState(m, 500, 30).state).toBe('rejoining');
    expect(joinGroup(m, [0], 40)).toBe(true);
    expect(m.pendingSince.has(1)).toBe(false);
    // Joined again without leaving: kafkajs rejoined after "not aware of this member".
    joinGroup(m, [0], 50);
    expect([m.leftFor, m.leftAt]).toEqual(['unknown member', 50]);
  });

  it('when a member has work and makes no progress, then it is stalled; idle, it is consuming', () => {
    const m = newMembership(0);
    joinGroup(m, [0], 100);
    expect(healthState(m, 500, 10_000)).toEqual({ state: 'consuming', sinceMs: 10_000 });
    m.assignedLag = 3;
    expect(healthState(m, 500, 10_000)).toEqual({ state: 'stalled', sinceMs: 600 });
    expect(stallReason(m)).toBe('lag, no fetch');
    m.inFlight = 1;
    expect(stallReason(m)).toBe('handler busy');
    m.stopping = true;
    m.stoppedAt = 9_000;
    expect(healthState(m, 500, 10_000)).toEqual({ state: 'stopped', sinceMs: 9_000 });
  });

  it('when the watchdog looks, then it replaces a consumer out of its group or stalled idle past the rejoin time', () => {
    const m = newMembership(0);
    expect(watchdogReason(m, healthState(m, 500, 900), 1_000, 900)).toBeUndefined();
    expect(watchdogReason(m, healthState(m, 500, 1_001), 1_000, 1_001)).toBe('not a member');
    joinGroup(m, [0], 2_000);
    m.assignedLag = 1;
    expect(watchdogReason(m, healthState(m, 500, 3_600), 1_000, 3_600)).toBe('stalled');
    m.inFlight = 1;
    expect(watchdogReason(m, healthState(m, 500, 3_600), 1_000, 3_600)).toBeUndefined();
  });

  it('when lag is computed, then a partition without a commit counts whole only when reading from the beginning', () => {
    expect(partitionLag(7, 10, 0, true)).toBe(3);
    expect(partitionLag(12, 10, 0, true)).toBe(0);
    expect(partitionLag(-1, 10, 4, true)).toBe(6);
    expect(partitionLag(-1, 10, 4, false)).toBe(0);
  });
});

describe('batch consumer chunks', () => {
  const raw = (offset: number): KafkaMessage =>
    ({ offset: String(offset), key: Buffer.from(`k${offset}`), value: Buffer.alloc(0) }) as unknown as KafkaMessage;
  const items = (n: number): RawItem<never>[] =>
    Array.from({ length: n }, (_, i) => ({
      item: { event: {} as never, key: `k${i}`, partition: 0, offset: String(i) },
      raw: raw(i),
    }));
  const ctx: ChunkContext = { heartbeat: async () => undefined, alive: () => true };

  it('when one event of a chunk keeps failing, then the chunk is halved until it is alone and only it is dead-lettered', async () => {
    const handled: string[][] = [];
    const dead: string[] = [];
    const handle = chunkHandler<never>({
      handleBatch: async (batch) => {
        const offsets = batch.map((b) => b.offset);
        handled.push(offsets);
        if (offsets.includes('5')) throw new Error('poison');
      },
      topic: 't',
      groupId: 'g',
      log,
      maxAttempts: 1,
      budgetMs: 5_000,
      heartbeatMs: 1_000,
      deadLetter: async (m, err, why) => {
        dead.push(`${m.offset}:${(err as Error).message}:${why}`);
      },
      abandon: () => undefined,
    });
    expect(await handle(items(8), ctx)).toBe(true);
    expect(dead).toEqual(['5:poison:handler kept failing']);
    // Every other event was handed over (and written) once in a passing call.
    const passed = handled.filter((b) => !b.includes('5')).flat();
    expect(passed.sort()).toEqual(['0', '1', '2', '3', '4', '6', '7']);
  });

  it('when the consumer is no longer alive, then nothing is handled and nothing may be resolved', async () => {
    let calls = 0;
    const handle = chunkHandler<never>({
      handleBatch: async () => {
        calls++;
      },
      topic: 't',
      groupId: 'g',
      log,
      maxAttempts: 1,
      budgetMs: 5_000,
      heartbeatMs: 1_000,
      deadLetter: async () => undefined,
      abandon: () => undefined,
    });
    expect(await handle(items(2), { ...ctx, alive: () => false })).toBe(false);
    expect(calls).toBe(0);
  });

  it('when a handler runs over its budget, then the batch is abandoned and the consumer replaced', async () => {
    const abandoned: string[] = [];
    const handle = chunkHandler<never>({
      handleBatch: () => new Promise(() => undefined),
      topic: 't',
      groupId: 'g',
      log,
      maxAttempts: 5,
      budgetMs: 20,
      heartbeatMs: 1_000,
      deadLetter: async () => undefined,
      abandon: (reason) => abandoned.push(reason),
    });
    expect(await handle(items(3), ctx)).toBe(false);
    expect(abandoned).toEqual(['batch over budget']);
  });

  it('when an error looks like an outage, then it is transient (retried for as long as it lasts)', () => {
    expect(isTransient(Object.assign(new Error('x'), { code: 'UNAVAILABLE' }))).toBe(true);
    expect(isTransient({ name: 'MongoNetworkError', message: 'x' })).toBe(true);
    expect(isTransient(new Error('connect ECONNREFUSED 127.0.0.1:1'))).toBe(true);
    expect(isTransient(new Error('duplicate key'))).toBe(false);
    expect(isTransient(undefined)).toBe(false);
  });
});
