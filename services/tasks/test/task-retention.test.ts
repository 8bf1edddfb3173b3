/**
 * Retention of task records (data/task-retention.ts, option TaskRetentionDays) against the
 * MongoDB-compatible server: finished and billed tasks older than the kept days go with their
 * final records, recent ones and ones still running or owed a settle stay, and the console's
 * lists (the TasksService handlers) answer the tasks kept.
 */
import { connectMongo, createLogger } from '@aigw/common';
import { uniqueName } from '@aigw/local-stack';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AsyncTaskRepository, asyncTaskRepository } from '../src/data/async-task-repository.ts';
import type { BillingState } from '../src/data/leased-tasks.ts';
import { type MjTaskRepository, mjTaskRepository } from '../src/data/mj-task-repository.ts';
import { ensureRetentionIndexes, taskKeptFrom, taskRetention } from '../src/data/task-retention.ts';
import { tasksHandlers } from '../src/transport/grpc/tasks-handlers.ts';

const DAY = 86_400;
/** "Now": 27 Nov 2026 15:00 UTC. */
const NOW = Date.UTC(2026, 10, 27, 15) / 1000;
const logger = createLogger('tasks-retention-test', 'silent');

let conn: Connection;
let mj: MjTaskRepository;
let tasks: AsyncTaskRepository;

const shared = (n: number, createdAt: number, final: boolean, billing: BillingState) => ({
  user_id: 7,
  username: 'u7',
  token_id: 1,
  token_name: 't',
  group: 'default',
  channel_id: 3,
  status: final ? 'SUCCESS' : 'IN_PROGRESS',
  fail_reason: '',
  submitted_ms: createdAt * 1000,
  quota: 100,
  model: 'm',
  model_price: 0.1,
  group_ratio: 1,
  request_id: `r-${n}`,
  billing,
  final,
  notify_hook: '',
  next_poll_at: 0,
  progress: final ? '100%' : '10%',
  created_at: createdAt,
  submit_time: createdAt * 1000,
  start_time: 0,
  finish_time: 0,
  properties: '{}',
});

/** Per collection: [age in days, final, billing, kept with 3 days of retention]. */
const CASES: [number, boolean, BillingState, boolean][] = [
  [10, true, 'settled', false],
  [5, true, 'refunded', false],
  [3.8, true, 'settled', false], // the day before the first kept day
  [10, true, 'settle', true], // its settle is still owed
  [10, false, 'held', true], // still polled
  [3.5, true, 'settled', true], // 00:00 UTC three days back is kept
  [0.1, true, 'refunded', true],
];

beforeAll(async () => {
  conn = await connectMongo(process.env.MONGO_URL as string, uniqueName('tasks_retention'));
  mj = mjTaskRepository(conn);
  tasks = asyncTaskRepository(conn);
  await mj.init();
  await tasks.init();
  await ensureRetentionIndexes(conn);
  for (const [i, [age, final, billing]] of CASES.entries()) {
    const at = Math.floor(NOW - age * DAY);
    const m = await mj.insert({
      ...shared(i, at, final, billing),
      action: 'IMAGINE',
      mj_id: `mj-${i}`,
      code: 1,
      image_url: '',
      prompt: 'p',
      prompt_en: 'p',
      description: '',
      state: '',
      custom_id: '',
      buttons: '[]',
    });
    const a = await tasks.insert({
      ...shared(100 + i, at, final, billing),
      platform: 'suno',
      action: 'MUSIC',
      task_id: `t-${i}`,
      data: '[]',
    });
    if (final) {
      await conn.collection('mj_tasks_finals').insertOne({ _id: m._id, set: {}, by: 'test', at: 0 } as never);
      await conn.collection('tasks_finals').insertOne({ _id: a._id, set: {}, by: 'test', at: 0 } as never);
    }
  }
});

afterAll(async () => {
  await conn?.db?.dropDatabase().catch(() => undefined);
  await conn?.close();
});

describe('task retention', () => {
  it('when the days are 0 or not set, then nothing is kept from a time', () => {
    expect(taskKeptFrom(0, NOW)).toBe(0);
    expect(taskKeptFrom(Number.NaN, NOW)).toBe(0);
    expect(taskKeptFrom(3, NOW)).toBe(Date.UTC(2026, 10, 24) / 1000);
  });

  it('when tasks are kept 3 days, then finished and billed older ones go with their final records, the rest stay, and the lists answer the rest', async () => {
    const ids = async (name: string) =>
      (await conn.collection(name).find({}).sort({ _id: 1 }).toArray()).map((d) => d._id as unknown as number);
    const mjBefore = await ids('mj_tasks');
    const asyncBefore = await ids('tasks');
    // Forever (the default) deletes nothing.
    expect(await taskRetention(conn, logger, () => 0).run(NOW)).toEqual({ deleted: {} });

    const r = await taskRetention(conn, logger, () => 3).run(NOW);
    const gone = CASES.filter((c) => !c[3]).length;
    expect(r.deleted).toEqual({ mj_tasks: gone, tasks: gone });
    const kept = (before: number[]) => before.filter((_, i) => CASES[i]?.[3]);
    expect(await ids('mj_tasks')).toEqual(kept(mjBefore));
    expect(await ids('tasks')).toEqual(kept(asyncBefore));
    // Final records only of tasks that are still stored.
    for (const [name, before] of [
      ['mj_tasks', mjBefore],
      ['tasks', asyncBefore],
    ] as const) {
      const finals = await ids(`${name}_finals`);
      expect(finals).toEqual(kept(before).filter((_, i) => CASES.filter((c) => c[3])[i]?.[1]));
    }
    // The console's lists (/api/mj, /api/task) count and show the kept tasks, newest first.
    const h = tasksHandlers({ mj, tasks });
    const all = { page: { page: 1, pageSize: 100 }, mjId: '', taskId: '', platform: '', status: '' };
    const mjList = await h.listMjTasks(all as never, {} as never);
    expect(Number(mjList.page?.total)).toBe(CASES.length - gone);
    expect(mjList.items?.map((t) => t.mjId)).toEqual(
      CASES.map((c, i) => (c[3] ? `mj-${i}` : null))
        .filter(Boolean)
        .reverse(),
    );
    const list = await h.listTasks(all as never, {} as never);
    expect(Number(list.page?.total)).toBe(CASES.length - gone);
    // A second pass has nothing left to do.
    expect((await taskRetention(conn, logger, () => 3).run(NOW)).deleted).toEqual({ mj_tasks: 0, tasks: 0 });
  });
});
