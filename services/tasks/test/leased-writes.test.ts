/**
 * A poll round that overran its lease (data/leased-tasks.ts): its write of a non-final poll result
 * must not undo a final transition that another replica made meanwhile. Found in review: with the
 * Redis claim, a changed poll was written by bare `_id`, so a round whose write landed after the
 * task had finished put its status back to IN_PROGRESS (final and billed, shown as running).
 */
import { connectMongo } from '@aigw/common';
import { uniqueName } from '@aigw/local-stack';
import type { Collection, Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FinalRecord, type LeasedTask, leaseOps } from '../src/data/leased-tasks.ts';

interface Task extends LeasedTask {
  progress: string;
}

let conn: Connection;
let col: Collection<Task>;
let finals: Collection<FinalRecord>;

beforeAll(async () => {
  conn = await connectMongo(process.env.MONGO_URL as string, uniqueName('tasks_leased_writes'));
  col = conn.collection<Task>('tasks') as unknown as Collection<Task>;
  finals = conn.collection<FinalRecord>('tasks_finals') as unknown as Collection<FinalRecord>;
});
afterAll(async () => {
  await conn?.db?.dropDatabase().catch(() => undefined);
  await conn?.close();
});

const task = (id: number): Task => ({
  _id: id,
  id,
  user_id: 1,
  username: 'u',
  token_id: 1,
  token_name: 't',
  group: 'default',
  channel_id: 1,
  status: 'IN_PROGRESS',
  fail_reason: '',
  submitted_ms: Date.now(),
  quota: 100,
  model: 'mj_imagine',
  model_price: 0.1,
  group_ratio: 1,
  request_id: `r-${id}`,
  billing: 'held',
  final: false,
  notify_hook: '',
  lease_until: 0,
  lease_owner: '',
  next_poll_at: 0,
  polls: 0,
  updated_at: 0,
  progress: '10%',
});

describe('a poll round that overran its lease', () => {
  it('when its non-final write lands after another replica finished the task, then the task stays final with its final status', async () => {
    const ops = leaseOps(col, finals);
    await col.insertMany([task(1), task(2)] as never[]);
    const [t1, t2] = (await col.find({ _id: { $in: [1, 2] } }).toArray()) as Task[];
    // Replica A: both tasks finished (SUCCESS, settle).
    for (const t of [t1, t2] as Task[]) {
      const won = await ops.finish(
        { task: t, fields: { status: 'SUCCESS', progress: '100%' }, nextPollAt: 0, finish: 'settle' },
        'a',
      );
      expect(won).toBe(true);
    }
    // Replica B's round read the tasks before that and writes "still running" late, one by one
    // and in bulk, its Redis claim still looking valid.
    const lease = { redis: true as const, until: Date.now() + 60_000 };
    const stale = (t: Task) => ({
      task: t,
      fields: { status: 'IN_PROGRESS', progress: '50%' },
      nextPollAt: Date.now() + 5_000,
    });
    expect(await ops.applyPoll(stale(t1 as Task), lease, 'b', 60_000)).toBe(false);
    expect(await ops.applyMany([stale(t2 as Task)], lease, 'b', 60_000)).toBe(0);
    const after = (await col
      .find({ _id: { $in: [1, 2] } })
      .sort({ _id: 1 })
      .toArray()) as Task[];
    expect(after.map((t) => [t.status, t.progress, t.final, t.billing])).toEqual([
      ['SUCCESS', '100%', true, 'settle'],
      ['SUCCESS', '100%', true, 'settle'],
    ]);
  });

  it('when a task is still running, then a round under its claim writes its progress', async () => {
    const ops = leaseOps(col, finals);
    await col.insertOne(task(3) as never);
    const t3 = (await col.findOne({ _id: 3 })) as Task;
    const lease = { redis: true as const, until: Date.now() + 60_000 };
    const w = { task: t3, fields: { progress: '40%' }, nextPollAt: Date.now() + 5_000 };
    expect(await ops.applyPoll(w, lease, 'b', 60_000)).toBe(true);
    expect((await col.findOne({ _id: 3 }))?.progress).toBe('40%');
  });
});
