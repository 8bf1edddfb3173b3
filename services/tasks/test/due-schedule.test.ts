/**
 * The Redis poll schedule (data/due-schedule.ts): replicas find due tasks in a sorted set instead
 * of scanning the collection, its claim keeps each task with one replica at a time, a poll that
 * changes nothing writes nothing to Mongo, a wiped schedule is rebuilt from Mongo so that no task
 * is lost, and with Redis failing the pollers fall back to the Mongo lease.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connectRedis, type Redis } from '@aigw/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../deploy/local/stack/in-process.ts';
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
        // Only changes are written (the first answer's details, 25, 50, 75, 99 %, the timeout's
        // FAILURE: at most six), each once; most polls changed nothing and wrote nothing.
        expect(d.polls).toBeGreaterThanOrEqual(1);
        expect(d.polls).toBeLessThanOrEqual(6);
        expect(d.polls).toBeLessThan(s.fake.fetches.get(d.mj_id as string) as number);
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
  it('when a poll finds a task unchanged, then nothing is written to Mongo; a change is written once', async () => {
    const key = `tasks:aigw_tasks_${s.stack.id}:midjourney`;
    const u = await userWithToken(s, { quota: 10_000_000 });
    const before = await walletOf(s, u.userId);
    const r = await mj(s, u.key, '/mj/submit/imagine', { prompt: 'never-finish quiet' });
    expect(r.body.code).toBe(1);
    const mjId = String(r.body.result);
    const col = s.db.collection('mj_tasks');
    // The fake's progress stops at 99 %: from then on every poll answers the same.
    const quiet = await eventually(
      () => col.findOne({ mj_id: mjId }),
      (d) => d?.progress === '99%',
    );
    const polls = quiet?.polls as number;
    const updated = quiet?.updated_at as number;
    const fetchedAt99 = s.fake.fetches.get(mjId) ?? 0;
    const score0 = Number(await redis.zscore(`${key}:due`, String(quiet?._id)));
    await eventually(
      async () => s.fake.fetches.get(mjId) ?? 0,
      (n) => n >= fetchedAt99 + 4,
    );
    const still = await col.findOne({ mj_id: mjId });
    // Four more polls: the same version and update time; only the schedule moved on.
    expect(still?.status).toBe('IN_PROGRESS');
    expect(still?.polls).toBe(polls);
    expect(still?.updated_at).toBe(updated);
    expect(Number(await redis.zscore(`${key}:due`, String(quiet?._id)))).toBeGreaterThan(score0);

    // The timeout (9 s) is a change: written once, refunded once.
    const failed = await eventually(
      () => col.findOne({ mj_id: mjId }),
      (d) => d?.billing === 'refunded',
      20_000,
    );
    expect(failed?.status).toBe('FAILURE');
    expect(failed?.fail_reason).toBe('任务超时');
    expect(failed?.polls).toBe(polls + 1);
    expect(failed?.updated_at).toBeGreaterThan(updated);
    expect(await walletOf(s, u.userId)).toEqual(before);
    await eventually(
      () => logsOf(s, u.userId),
      (l) => l.some((x) => x.type === 6),
    );
    await sleep(1_000);
    const logs = await logsOf(s, u.userId);
    expect(logs.map((l) => [l.type, l.quota]).sort()).toEqual([
      [2, IMAGINE],
      [6, IMAGINE],
    ]);
  });

  it('when Redis fails, then pollers fall back to the Mongo lease: tasks still finish, no task is polled twice at once, each is billed once', async () => {
    const key = `tasks:aigw_tasks_${s.stack.id}:midjourney`;
    // Every replica's claim fails: the schedule key holds a string (Redis answers WRONGTYPE) ...
    await redis.del(`${key}:due`);
    await redis.set(`${key}:due`, 'not a sorted set');
    // ... and one more replica has lost its Redis server altogether (killed after its start).
    const port = await freePort();
    const own: ChildProcess = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    await sleep(300);
    const r2 = await startTasksReplica(s, {
      poller: false,
      env: { REDIS_URL: `redis://127.0.0.1:${port}`, SERVICE_NAME: 'tasks-noredis' },
    });
    own.kill('SIGKILL');
    let polling = true;
    // Rounds of the replica without Redis that ended (none hangs on the dead server).
    let rounds = 0;
    const drive = (async () => {
      while (polling) {
        await r2.pollOnce().catch(() => undefined);
        rounds += 1;
        await sleep(50);
      }
    })();
    try {
      const u = await userWithToken(s, { quota: 10_000_000 });
      const before = await walletOf(s, u.userId);
      const ids: string[] = [];
      const prompts = ['fallback a', 'fallback b', 'fail-me c', 'fail-me d', 'never-finish e', 'never-finish f'];
      for (const prompt of prompts) {
        const r = await mj(s, u.key, '/mj/submit/imagine', { prompt });
        expect(r.body.code).toBe(1);
        ids.push(String(r.body.result));
      }
      const col = s.db.collection('mj_tasks');
      const docs = await eventually(
        () => col.find({ mj_id: { $in: ids } }).toArray(),
        (d) => d.length === 6 && d.every((x) => x.billing === 'settled' || x.billing === 'refunded'),
        30_000,
      );
      const byPrompt = new Map(docs.map((d) => [d.prompt as string, d]));
      expect(prompts.map((p) => byPrompt.get(p)?.status)).toEqual([
        'SUCCESS',
        'SUCCESS',
        'FAILURE',
        'FAILURE',
        'FAILURE',
        'FAILURE',
      ]);
      const w = await eventually(
        () => walletOf(s, u.userId),
        (x) => x.quota === before.quota - 2 * IMAGINE,
      );
      expect(w).toEqual({ quota: before.quota - 2 * IMAGINE, used: before.used + 2 * IMAGINE });
      await eventually(
        () => logsOf(s, u.userId),
        (l) => l.filter((x) => x.type === 6).length >= 4,
      );
      await sleep(1_000);
      const logs = await logsOf(s, u.userId);
      expect(logs.filter((l) => l.type === 2)).toHaveLength(6);
      expect(logs.filter((l) => l.type === 6)).toHaveLength(4);
      const owners = new Set<string>();
      for (const d of docs) {
        for (const o of (d.pollers as string[]) ?? []) owners.add(o.replace(/-[0-9a-f-]{36}$/, ''));
        expect(d.polls).toBeLessThanOrEqual(6);
        expect(d.lease_owner).toBe('');
      }
      // The replica without any Redis kept ending its rounds (each claim fails after ioredis's
      // retries, then it scans); whether it or the stack's replica won a task's lease varies.
      expect(rounds).toBeGreaterThanOrEqual(3);
      console.log('fallback test: writers', [...owners], 'rounds of the replica without Redis', rounds);
      for (const id of ids) {
        // The Mongo lease keeps a task with one replica: about once per interval, never twice at once.
        const times = s.fake.fetchTimes.get(id) ?? [];
        const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
        expect(Math.min(...gaps, 1_000)).toBeGreaterThanOrEqual(100);
      }
    } finally {
      polling = false;
      await drive;
      await r2.stop();
      own.kill('SIGKILL');
      // Redis is back: the schedule is rebuilt from Mongo at the next tick.
      await redis.del(`${key}:due`, `${key}:built`);
    }
  });
});
