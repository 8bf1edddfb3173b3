/**
 * The Redis poll schedule (data/due-schedule.ts): replicas find due tasks in a sorted set instead
 * of scanning the collection, its claim keeps each task with one replica at a time, a poll that
 * changes nothing writes nothing to Mongo, a wiped schedule is rebuilt from Mongo so that no task
 * is lost, and with Redis failing the pollers fall back to the Mongo lease.
 */
import { connectRedis, type Redis } from '@aigw/common';
import { privateRedis } from '@aigw/local-stack/stack';
import { eventually } from '@aigw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  drawingReady,
  logsOf,
  mj,
  setOption,
  settledLogs,
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
  // Tasks that never finish upstream time out after 9 s (refunded then). The stack's own tasks
  // service does not poll: each test starts the replicas that poll, so that who polls when is the
  // test's to say.
  s = await startTasksStack('mj_imagine', { TASKS_TIMEOUT_MS: '9000', TASKS_POLLER: 'false' });
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

type Replica = Awaited<ReturnType<typeof startTasksReplica>>;

/**
 * Poll rounds driven by the test, every 50 ms until stopped: in each round the replicas `who()`
 * names (read at each round) poll all at once, a different one first each round (the first to
 * reach Redis claims what is due). No round is in flight once stop() resolved.
 */
function drive(who: () => Replica[]) {
  let on = true;
  let rounds = 0;
  const running = (async () => {
    while (on) {
      const group = who();
      const k = rounds % Math.max(1, group.length);
      await Promise.all([...group.slice(k), ...group.slice(0, k)].map((r) => r.pollOnce()));
      rounds += 1;
      await sleep(50);
    }
  })();
  return {
    stop: async () => {
      on = false;
      await running;
    },
  };
}

describe('the Redis poll schedule', () => {
  it('when three replicas poll from the schedule and Redis loses it, then polls stop until the rebuild, no task is polled twice at once, and each is refunded once', async () => {
    const key = `tasks:aigw_tasks_${s.stack.id}:midjourney`;
    // Three replicas whose rounds the test drives (named, to tell their writes apart).
    const named = (name: string) => startTasksReplica(s, { poller: false, env: { SERVICE_NAME: name } });
    const [r1, r2, r3] = [await named('tasks-r1'), await named('tasks-r2'), await named('tasks-r3')] as [
      Replica,
      Replica,
      Replica,
    ];
    let group: Replica[] = [r1];
    let driver = drive(() => group);
    try {
      const u = await userWithToken(s, { quota: 10_000_000 });
      const before = await walletOf(s, u.userId);
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const r = await mj(s, u.key, '/mj/submit/imagine', { prompt: `never-finish ${i}` });
        expect(r.body.code).toBe(1);
        ids.push(String(r.body.result));
      }
      const col = s.db.collection('mj_tasks');
      const tasks = () => col.find({ mj_id: { $in: ids } }).toArray();
      const members = (await tasks()).map((d) => String(d._id)).sort();
      // The submits put every task in the schedule.
      const inSet = async () => (await redis.zrange(`${key}:due`, 0, -1)).filter((m) => members.includes(m)).sort();
      expect(await inSet()).toEqual(members);
      const fetched = async () => ids.map((id) => s.fake.fetches.get(id) ?? 0);

      // r1 alone first: each task's first change (the fake's progress moves every 300 ms) is r1's.
      await eventually(tasks, (d) => d.length === 6 && d.every((x) => x.polls >= 1), {
        what: 'a first change of every task written (by r1)',
      });
      // Then all three at once until every task is at 99 %: from there only the timeout changes it.
      group = [r1, r2, r3];
      await eventually(tasks, (d) => d.every((x) => x.progress === '99%' && !x.final), {
        what: 'every task at 99 %',
      });

      // Redis loses the schedule but the rebuild marker stays: nothing finds the tasks any more (no
      // replica scans the collection). No round is in flight across the wipe (the driver stopped).
      await driver.stop();
      const frozen = await fetched();
      await redis.del(`${key}:due`);
      driver = drive(() => group);
      // The positive signal that the replicas went on polling from the schedule: a marker task of
      // another user, submitted after the wipe, polled twice. Its second poll came at least one
      // poll interval after the wipe, when the tasks would have been due again.
      const other = await userWithToken(s, { quota: 10_000_000 });
      const sub = await mj(s, other.key, '/mj/submit/imagine', { prompt: 'never-finish marker' });
      expect(sub.body.code).toBe(1);
      const marker = String(sub.body.result);
      await eventually(
        async () => s.fake.fetches.get(marker) ?? 0,
        (n) => n >= 2,
        { what: 'the marker task polled twice' },
      );
      expect(await fetched()).toEqual(frozen);
      expect(await inSet()).toEqual([]);

      // The marker goes too (a new, empty Redis): the next tick rebuilds from Mongo and polls
      // resume. From now on r2 and r3 poll, so the timeouts are theirs to write.
      group = [r2, r3];
      await redis.del(`${key}:built`);
      await eventually(inSet, (m) => m.length === members.length, { what: 'the schedule rebuilt' });
      await eventually(fetched, (f) => f.every((n, i) => n > (frozen[i] as number)), { what: 'polls resumed' });

      // The timeout refunds each task once; every answer fetched was applied once.
      const w = await eventually(
        () => walletOf(s, u.userId),
        (x) => x.quota === before.quota,
        { timeoutMs: 30_000, what: 'every task refunded' },
      );
      expect(w).toEqual(before);
      await eventually(
        () => logsOf(s, u.userId),
        (l) => l.filter((x) => x.type === 6).length >= 6,
        { what: 'six refunds logged' },
      );
      // Counted once billing is done and the logs are past a marker: a duplicate would be there.
      const logs = await settledLogs(s, u.userId);
      expect(logs.filter((l) => l.type === 2).map((l) => l.quota)).toEqual(Array(6).fill(IMAGINE));
      expect(logs.filter((l) => l.type === 6).map((l) => l.quota)).toEqual(Array(6).fill(IMAGINE));
      const after = await tasks();
      for (const d of after) {
        expect(d.status).toBe('FAILURE');
        expect(d.billing).toBe('refunded');
        // Only changes are written (the first answer's details, 25, 50, 75, 99 %, the timeout's
        // FAILURE: at most six), each once; most polls changed nothing and wrote nothing.
        expect(d.polls).toBeGreaterThanOrEqual(1);
        expect(d.polls).toBeLessThanOrEqual(6);
        expect(d.polls).toBeLessThan(s.fake.fetches.get(d.mj_id as string) as number);
        // More than one replica wrote each task: r1 its first change, r2 or r3 its timeout.
        const writers = ((d.pollers as string[]) ?? []).map((o) => o.replace(/-[0-9a-f-]{36}$/, ''));
        expect(writers).toContain('tasks-r1');
        expect(writers.some((w) => w === 'tasks-r2' || w === 'tasks-r3')).toBe(true);
      }
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
      await driver.stop();
      await r1.stop();
      await r2.stop();
      await r3.stop();
    }
  });

  it('when a poll finds a task unchanged, then nothing is written to Mongo; a change is written once', async () => {
    const key = `tasks:aigw_tasks_${s.stack.id}:midjourney`;
    // One replica polling on its own timer.
    const r1 = await startTasksReplica(s);
    try {
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
      // Counted once billing is done and the logs are past a marker: a duplicate would be there.
      const logs = await settledLogs(s, u.userId);
      expect(logs.map((l) => [l.type, l.quota]).sort()).toEqual([
        [2, IMAGINE],
        [6, IMAGINE],
      ]);
    } finally {
      await r1.stop();
    }
  });

  it('when Redis fails, then pollers fall back to the Mongo lease: tasks still finish, no task is polled twice at once, each is billed once', async () => {
    const key = `tasks:aigw_tasks_${s.stack.id}:midjourney`;
    // Every replica's claim fails: the schedule key holds a string (Redis answers WRONGTYPE) ...
    await redis.del(`${key}:due`);
    await redis.set(`${key}:due`, 'not a sorted set');
    // One replica polls on its own timer with that Redis ...
    const r1 = await startTasksReplica(s);
    // ... and one more replica has lost its Redis server altogether (killed after its start).
    const own = await privateRedis();
    const r2 = await startTasksReplica(s, {
      poller: false,
      env: { REDIS_URL: own.url, SERVICE_NAME: 'tasks-noredis' },
    });
    await own.kill();
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
      // Counted once billing is done and the logs are past a marker: a duplicate would be there.
      const logs = await settledLogs(s, u.userId);
      expect(logs.filter((l) => l.type === 2)).toHaveLength(6);
      expect(logs.filter((l) => l.type === 6)).toHaveLength(4);
      const owners = new Set<string>();
      for (const d of docs) {
        for (const o of (d.pollers as string[]) ?? []) owners.add(o.replace(/-[0-9a-f-]{36}$/, ''));
        expect(d.polls).toBeLessThanOrEqual(6);
        expect(d.lease_owner).toBe('');
      }
      // The replica without any Redis kept ending its rounds (each claim fails after ioredis's
      // retries, then it scans); whether it or the replica on its timer won a task's lease varies.
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
      await r1.stop();
      await own.kill();
      // Redis is back: the schedule is rebuilt from Mongo at the next tick.
      await redis.del(`${key}:due`, `${key}:built`);
    }
  });
});
