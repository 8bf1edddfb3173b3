/**
 * A task timeout longer than billing's hold expiry (TASKS_TIMEOUT_MS > an hour in production):
 * here both are shortened, the hold expiry to 4.5 s (TASKS_HOLD_TTL_MS, the tasks service's copy of
 * billing's hour) and the timeout to 10 s. Billing itself still expires holds after its real hour,
 * so what is checked is the invariant that keeps the two consistent: while a task runs, its
 * charge stays reserved under exactly one hold that is never older than the hold expiry; the
 * timeout refunds it once, a late SUCCESS settles it once.
 */
import { eventually } from '@aigw/testkit';
import { type FakeKling, startFakeKling } from '@aigw/testkit/fakes';
import { createChannel } from '@aigw/testkit/harness';
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Json,
  logsOf,
  mj,
  setOption,
  settledLogs,
  startTasksStack,
  type TasksStack,
  userWithToken,
  walletOf,
} from './tasks-harness.ts';

const HOLD_TTL = 4_500;
const TIMEOUT = 10_000;
// kling-v1 at 0.02 $ per second: 5 s = 50,000.
const FIVE = 50_000;

let s: TasksStack;
let kling: FakeKling;
let billing: mongoose.Connection;

beforeAll(async () => {
  s = await startTasksStack('mj_imagine', { TASKS_HOLD_TTL_MS: String(HOLD_TTL), TASKS_TIMEOUT_MS: String(TIMEOUT) });
  // "slow" tasks succeed after 6 s, past the hold expiry.
  kling = await startFakeKling({ accessKey: 'ak-h', secretKey: 'sk-h', stepMs: 2_000, steps: 3 });
  await createChannel(s, { type: 50, baseUrl: kling.url, key: 'ak-h|sk-h', models: 'kling-v1' });
  await setOption(s, 'ModelPrice', JSON.stringify({ 'kling-v1': 0.02 }));
  billing = mongoose.createConnection(s.stack.env.MONGO_URL as string, { dbName: `aigw_billing_${s.stack.id}` });
  await billing.asPromise();
});

afterAll(async () => {
  await billing?.close();
  await kling?.close();
  await s?.stop();
});

/** The user's reservations in billing's newest ledger entry: request id -> amount and age (ms). */
async function holdsOf(userId: number): Promise<Map<string, { amount: number; age: number }>> {
  const [e] = await billing.collection('ledger_entries').find({ user_id: userId }).sort({ seq: -1 }).limit(1).toArray();
  const holds = (e?.state?.holds ?? {}) as Record<string, { a: number; at: number }>;
  const now = Date.now();
  return new Map(Object.entries(holds).map(([rid, h]) => [rid, { amount: h.a, age: now - h.at }]));
}

const submit = (key: string, prompt: string) =>
  eventually(
    () => mj(s, key, '/kling/v1/videos/text2video', { model_name: 'kling-v1', prompt, duration: '5' }),
    (r) => !String(r.body?.message).includes('倍率或价格未配置'),
  );

async function taskDoc(taskId: string): Promise<Json> {
  return (await s.db.collection('tasks').findOne({ task_id: taskId })) as Json;
}

describe('a task timeout beyond the hold expiry', () => {
  it('when tasks run past the hold expiry and time out, then each stays reserved under one young hold and is refunded once', async () => {
    // One user can cover two holds at once; the other only the one (the old hold goes first).
    const rich = await userWithToken(s, { quota: 1_000_000 });
    const tight = await userWithToken(s, { quota: FIVE });
    const a = await submit(rich.key, 'never ends');
    const b = await submit(tight.key, 'never ends either');
    expect([a.body.code, b.body.code]).toEqual([0, 0]);
    const ids = [String(a.body.data.task_id), String(b.body.data.task_id)];

    const seenHolds = [new Set<string>(), new Set<string>()];
    let oldest = 0;
    const deadline = Date.now() + TIMEOUT + 6_000;
    let finished = false;
    while (!finished && Date.now() < deadline) {
      const docs = await Promise.all(ids.map(taskDoc));
      finished = docs.every((d) => d.final);
      if (finished) break;
      for (const [i, u] of [rich, tight].entries()) {
        if (docs[i]?.final) continue;
        const holds = await holdsOf(u.userId);
        // One reservation of the price, never older than the hold expiry; the wallet keeps
        // showing the charge. While a hold is renewed there are two for a moment (the new one is
        // taken before the old one goes); the tight user's old hold goes first instead, so for
        // that moment it has none and its wallet shows the price.
        const amounts = [...holds.values()].map((h) => h.amount);
        for (const [rid, h] of holds) {
          seenHolds[i]?.add(rid);
          oldest = Math.max(oldest, h.age);
        }
        const quota = (await walletOf(s, u.userId)).quota;
        // The task may have timed out and been refunded between reading it and reading its holds
        // and wallet (three reads, not one snapshot): then the next round sees it final.
        const ended = async () => (await taskDoc(ids[i] as string)).final === true;
        const holdsOk = i === 0 ? amounts.length >= 1 && amounts.length <= 2 : amounts.length <= 1;
        const quotaOk = i === 0 ? [1_000_000 - FIVE, 1_000_000 - 2 * FIVE].includes(quota) : [0, FIVE].includes(quota);
        if ((!holdsOk || !quotaOk) && (await ended())) continue;
        if (i === 0) expect([[FIVE], [FIVE, FIVE]]).toContainEqual(amounts);
        else expect([[], [FIVE]]).toContainEqual(amounts);
        if (i === 0) expect([1_000_000 - FIVE, 1_000_000 - 2 * FIVE]).toContain(quota);
        else expect([0, FIVE]).toContain(quota);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(finished).toBe(true);
    expect(oldest).toBeLessThan(HOLD_TTL);
    // 10 s with holds renewed 1.5 s before 4.5 s: at least three holds each (the submit's and two renewals).
    expect(seenHolds[0]?.size).toBeGreaterThanOrEqual(3);
    expect(seenHolds[1]?.size).toBeGreaterThanOrEqual(3);

    for (const [i, u] of [rich, tight].entries()) {
      // Final first, then refunded: the task's billing state moves once billing has answered.
      const doc = await eventually(
        () => taskDoc(ids[i] as string),
        (d) => d.billing !== 'refund',
      );
      expect(doc).toMatchObject({ status: 'FAILURE', fail_reason: '任务超时', billing: 'refunded' });
      expect(doc.holds_renewed).toBeGreaterThanOrEqual(2);
      const start = i === 0 ? 1_000_000 : FIVE;
      expect(
        await eventually(
          () => walletOf(s, u.userId),
          (w) => w.quota === start,
        ),
      ).toEqual({ quota: start, used: 0 });
      expect((await holdsOf(u.userId)).size).toBe(0);
      await eventually(
        () => logsOf(s, u.userId),
        (l) => l.some((x) => x.type === 6),
      );
    }
    // Once billing is done and the logs are past a marker, a second refund would be logged.
    for (const u of [rich, tight]) {
      expect((await settledLogs(s, u.userId)).map((l) => [l.type, l.quota]).sort()).toEqual([
        [2, FIVE],
        [6, FIVE],
      ]);
    }
  });

  it('when a task succeeds after the hold expiry, then its renewed hold is settled once and nothing is refunded', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const sub = await submit(u.key, 'slow but fine');
    const id = String(sub.body.data.task_id);
    const done = await eventually(
      () => taskDoc(id),
      (d) => d.final === true,
      15_000,
    );
    expect(done).toMatchObject({ status: 'SUCCESS', billing: expect.stringMatching(/^settle/) });
    expect(done.holds_renewed).toBeGreaterThanOrEqual(1);
    expect(
      await eventually(
        () => walletOf(s, u.userId),
        (w) => w.used === FIVE,
      ),
    ).toEqual({ quota: 1_000_000 - FIVE, used: FIVE });
    expect((await holdsOf(u.userId)).size).toBe(0);
    // Once billing is done and the logs are past a marker, a refund would be logged.
    expect((await settledLogs(s, u.userId)).map((l) => [l.type, l.quota])).toEqual([[2, FIVE]]);
  });
});
