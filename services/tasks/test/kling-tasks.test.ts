import { eventually } from '@aigw/testkit';
import { type FakeKling, KLING_MP4, startFakeKling } from '@aigw/testkit/fakes';
import { Api, createChannel } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  afterRefund,
  type Json,
  logsOf,
  mj,
  setOption,
  startTasksStack,
  type TasksStack,
  userWithToken,
  walletOf,
} from './tasks-harness.ts';

// kling-v1 at 0.02 $ per second x 500,000: 5 s = 50,000, 10 s = 100,000.
const FIVE = 50_000;
const TEN = 100_000;

let s: TasksStack;
let kling: FakeKling;
let channelId: number;

beforeAll(async () => {
  s = await startTasksStack('mj_imagine');
  // Processing lasts about two seconds: several polls (300 ms) see it even on a busy machine.
  kling = await startFakeKling({ accessKey: 'ak-test', secretKey: 'sk-secret-test', stepMs: 600, steps: 4 });
  channelId = await createChannel(s, {
    type: 50,
    baseUrl: kling.url,
    key: 'ak-test|sk-secret-test',
    models: 'kling-v1',
  });
  await setOption(s, 'ModelPrice', JSON.stringify({ 'kling-v1': 0.02 }));
});

afterAll(async () => {
  await kling?.close();
  await s?.stop();
});

/** Queries a Kling task through the gateway until `done` holds (throws if it never does); returns every task_status seen. */
async function followKling(key: string, kind: string, id: string, done: (t: Json) => boolean) {
  const seen: string[] = [];
  const task = await eventually(
    async () => {
      const t = (await mj(s, key, `/kling/v1/videos/${kind}/${id}`)).body.data as Json;
      if (seen.at(-1) !== t?.task_status) seen.push(String(t?.task_status));
      return t;
    },
    done,
    { timeoutMs: 20_000, intervalMs: 80, what: `Kling task ${id} done` },
  );
  return { task, seen };
}

/** Submits once the tasks service sees the price (its options cache follows Kafka). */
const submit = (key: string, kind: string, body: Json) =>
  eventually(
    () => mj(s, key, `/kling/v1/videos/${kind}`, body),
    (r) => !String(r.body?.message).includes('倍率或价格未配置'),
  );

describe('Kling (type 50) through the gateway', () => {
  it('when a text2video task is submitted, then the upstream gets a valid JWT, the task succeeds with a video, and it is charged per second once', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const sub = await submit(u.key, 'text2video', {
      model_name: 'kling-v1',
      prompt: 'a fox running in snow',
      duration: '5',
      aspect_ratio: '16:9',
      callback_url: 'http://client.example/hook',
    });
    expect(sub.status).toBe(200);
    expect(sub.body).toMatchObject({ code: 0, message: 'SUCCEED', data: { task_status: 'submitted' } });
    const id = String(sub.body.data.task_id);
    // The fake only accepts an HS256 JWT of this access key signed with its secret key.
    expect(kling.submits.at(-1)).toMatchObject({
      kind: 'text2video',
      body: { model_name: 'kling-v1', prompt: 'a fox running in snow', duration: '5', aspect_ratio: '16:9' },
    });
    expect(kling.submits.at(-1)?.body.callback_url).toBeUndefined();
    expect((await walletOf(s, u.userId)).quota).toBe(1_000_000 - FIVE);

    const { task, seen } = await followKling(u.key, 'text2video', id, (t) =>
      ['succeed', 'failed'].includes(t?.task_status),
    );
    expect(task.task_status).toBe('succeed');
    expect(seen).toContain('processing');
    const video = task.task_result?.videos?.[0] as Json;
    expect(video).toMatchObject({ url: `${kling.url}/videos/${id}.mp4`, duration: '5' });
    const mp4 = await fetch(video.url);
    expect(Buffer.from(await mp4.arrayBuffer())).toEqual(KLING_MP4);

    expect(
      await eventually(
        () => walletOf(s, u.userId),
        (x) => x.used === FIVE,
      ),
    ).toEqual({ quota: 1_000_000 - FIVE, used: FIVE });
    const logs = await eventually(
      () => logsOf(s, u.userId),
      (l) => l.length > 0,
    );
    expect(logs.map((l) => [l.type, l.quota, l.modelName, l.channel])).toEqual([[2, FIVE, 'kling-v1', channelId]]);

    // The task row of /api/task/self: platform, status, and the video the /task page plays.
    const user = new Api(s.gateway);
    await user.login(u.username, 'password123');
    const own = await user.get<Json>('/task/self', { p: '1' });
    expect(own.body.data?.items).toHaveLength(1);
    const row = own.body.data?.items[0] as Json;
    expect(row).toMatchObject({ task_id: id, platform: 'kling', action: 'VIDEO', status: 'SUCCESS', progress: '100%' });
    expect(JSON.parse(row.data)).toEqual([{ id: `v-${id}`, video_url: video.url, duration: '5' }]);
    // Another user's key does not see it; the other kind's path does not either.
    const other = await userWithToken(s, { quota: 1_000_000 });
    expect((await mj(s, other.key, `/kling/v1/videos/text2video/${id}`)).status).toBe(404);
    expect((await mj(s, u.key, `/kling/v1/videos/image2video/${id}`)).status).toBe(404);
  });

  it('when an image2video task of 10 s succeeds, then it costs ten seconds', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const sub = await submit(u.key, 'image2video', {
      model_name: 'kling-v1',
      image: 'https://example.com/cat.png',
      duration: '10',
    });
    expect(sub.body.code).toBe(0);
    const { task } = await followKling(u.key, 'image2video', String(sub.body.data.task_id), (t) =>
      ['succeed', 'failed'].includes(t?.task_status),
    );
    expect(task.task_status).toBe('succeed');
    expect(
      await eventually(
        () => walletOf(s, u.userId),
        (x) => x.used === TEN,
      ),
    ).toEqual({ quota: 1_000_000 - TEN, used: TEN });
  });

  it('when the upstream fails a task, then it is refunded once; refused and invalid submits are not charged', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const bad = await submit(u.key, 'text2video', { model_name: 'kling-v1', prompt: 'x', duration: '7' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 1201, message: 'duration 只能是 5 或 10' });
    const noPrompt = await mj(s, u.key, '/kling/v1/videos/text2video', { model_name: 'kling-v1' });
    expect(noPrompt.status).toBe(400);
    const refused = await mj(s, u.key, '/kling/v1/videos/text2video', { model_name: 'kling-v1', prompt: 'reject-me' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 1301, message: 'prompt triggered content risk control' });
    const noKey = await mj(s, 'sk-nope', '/kling/v1/videos/text2video', { model_name: 'kling-v1', prompt: 'a' });
    expect(noKey.status).toBe(401);
    expect(noKey.body.code).toBe(1000);
    expect(await walletOf(s, u.userId)).toEqual({ quota: 1_000_000, used: 0 });

    const sub = await mj(s, u.key, '/kling/v1/videos/text2video', { model_name: 'kling-v1', prompt: 'fail-me' });
    const { task } = await followKling(u.key, 'text2video', String(sub.body.data.task_id), (t) =>
      ['succeed', 'failed'].includes(t?.task_status),
    );
    expect(task).toMatchObject({ task_status: 'failed', task_status_msg: 'content risk check failed' });
    expect((await afterRefund(s, u.userId)).map((l) => [l.type, l.quota]).sort()).toEqual([
      [2, FIVE],
      [6, FIVE],
    ]);
  });

  it('when the channel holds a wrong secret key, then Kling refuses the JWT and the submit is given back', async () => {
    const wrong = await startFakeKling({ accessKey: 'ak-2', secretKey: 'right-secret' });
    await createChannel(s, { type: 50, baseUrl: wrong.url, key: 'ak-2|wrong-secret', models: 'kling-v1-6' });
    await setOption(s, 'ModelPrice', JSON.stringify({ 'kling-v1': 0.02, 'kling-v1-6': 0.02 }));
    const u = await userWithToken(s, { quota: 1_000_000 });
    const r = await submit(u.key, 'text2video', { model_name: 'kling-v1-6', prompt: 'a' });
    expect(r.status).toBe(502);
    expect(r.body).toMatchObject({ code: 1002, message: 'Authentication failed' });
    expect(await walletOf(s, u.userId)).toEqual({ quota: 1_000_000, used: 0 });
    expect(await logsOf(s, u.userId)).toEqual([]);
    await wrong.close();
  });
});
