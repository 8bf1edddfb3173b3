/**
 * The Redis poll schedule (data/due-schedule.ts): replicas find due tasks in a sorted set instead
 * of scanning the collection, the Mongo lease still keeps each task with one replica at a time,
 * and a wiped schedule is rebuilt from Mongo so that no task is lost.
 */
import { connectRedis, type Redis } from '@aigw/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  drawingReady,
  eventually,
  logsOf,
  mj,
  setOption,
  startTasksReplica,
  startTasksStack,
  type TasksStack,
  userWithToken,
  walletOf,
} from './tasks-harness.ts';

const IMAGINE = 50_000;

let s: TasksStack;
let redis: Redis;

beforeAll(async () => {
  // Tasks that never finish upstream time out after 9 s (refunded then).
  s = await startTasksStack('mj_imagine', { TASKS_TIMEOUT_MS: '9000' });
  redis = await connectRedis(s.stack.env.REDIS_URL as string);
  await setOption(s, 'DrawingEnabled', 'true');
  const probe = await userWithToken(s);
  await drawingReady(s, probe.key);
});

afterAll(async () => {
  await redis?.quit();
  await s?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the Redis poll schedule', () => {
  it('when three replicas poll from the schedule and Redis loses it, then polls stop until the rebuild, no task is polled twice at once, and each is refunded once', async () => {
    const key = `tasks:aigw_tasks_${s.stack.id}:midjourney`;
    // The stack's replica polls on its timer; two more poll whenever the test says, both at once.
    const r2 = await startTasksReplica(s, { poller: false });
    const r3 = await startTasksReplica(s, { poller: false });
    let polling = true;
    const drive = (async () => {
      while (polling) {
        await Promise.all([r2.pollOnce(), r3.pollOnce()]);
        await sleep(50);
      }
    })();
    try {
      const u = await userWithToken(s, { quota: 10_000_000 });
      const before = await walletOf(s, u.userId);
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const r = await mj(s, u.key, '/mj/submit/imagine', { prompt: `never-finish ${i}` });
        expect(r.body.code).toBe(1);
        ids.push(String(r.body.result));
      }
      const docs = await s.db
        .collection('mj_tasks')
        .find({ mj_id: { $in: ids } })
        .toArray();
      const members = docs.map((d) => String(d._id)).sort();
      // The submits put every task in the schedule.
      const inSet = async () => (await redis.zrange(`${key}:due`, 0, -1)).filter((m) => members.includes(m)).sort();
      expect(await inSet()).toEqual(members);
      const fetched = async () => ids.map((id) => s.fake.fetches.get(id) ?? 0);
      await eventually(fetched, (f) => f.every((n) => n >= 2));

      // Redis loses the schedule but the rebuild marker stays: nothing finds the tasks any more
      // (no replica scans the collection). A round in flight may put its tasks back once: wipe again.
      await redis.del(`${key}:due`);
      await sleep(1_000);
      await redis.del(`${key}:due`);
      await sleep(300);
      const frozen = await fetched();
      await sleep(1_500);
      expect(await fetched()).toEqual(frozen);
      expect(await inSet()).toEqual([]);

      // The marker goes too (a new, empty Redis): the next tick rebuilds from Mongo and polls resume.
      await redis.del(`${key}:built`);
      await eventually(inSet, (m) => m.length === members.length);
      await eventually(fetched, (f) => f.every((n, i) => n > (frozen[i] as number)));

      // The timeout refunds each task once; every answer fetched was applied once.
      const w = await eventually(
        () => walletOf(s, u.userId),
        (x) => x.quota === before.quota,
        30_000,
      );
      expect(w).toEqual(before);
      await eventually(
        () => logsOf(s, u.userId),
        (l) => l.filter((x) => x.type === 6).length >= 6,
      );
      await sleep(1_000);
      const logs = await logsOf(s, u.userId);
      expect(logs.filter((l) => l.type === 2).map((l) => l.quota)).toEqual(Array(6).fill(IMAGINE));
      expect(logs.filter((l) => l.type === 6).map((l) => l.quota)).toEqual(Array(6).fill(IMAGINE));
      const after = await s.db
        .collection('mj_tasks')
        .find({ mj_id: { $in: ids } })
        .toArray();
      const owners = new Set<string>();
      for (const d of after) {
        expect(d.status).toBe('FAILURE');
        expect(d.billing).toBe('refunded');
        // The timeout's poll is applied without an upstream answer counted twice: polls = fetches.
        expect(d.polls).toBe(s.fake.fetches.get(d.mj_id as string));
        for (const o of (d.pollers as string[]) ?? []) owners.add(o);
      }
      expect(owners.size).toBeGreaterThanOrEqual(2);
      for (const id of ids) {
        // About once per poll interval (300 ms), never twice at once.
        const times = s.fake.fetchTimes.get(id) ?? [];
        const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
        expect(Math.min(...gaps, 1_000)).toBeGreaterThanOrEqual(100);
      }
      // Final tasks left the schedule and the billing set.
      expect(await inSet()).toEqual([]);
      const open = await redis.smembers(`${key}:billing`);
      expect(open.filter((m) => members.includes(m))).toEqual([]);
    } finally {
      polling = false;
      await drive;
      await r2.stop();
      await r3.stop();
    }
  });
});
