import { eventually } from '@aigw/testkit';
import { type FakeJimeng, JIMENG_MP4, startFakeJimeng } from '@aigw/testkit/fakes';
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

// 0.02 $ per second x 500,000: 5 s (121 frames) = 50,000, 10 s (241 frames) = 100,000.
const FIVE = 50_000;
const TEN = 100_000;
const T2V = 'jimeng_vgfm_t2v_l20';
const I2V = 'jimeng_vgfm_i2v_l20';
const SUBMIT = '/jimeng/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31';
const RESULT = '/jimeng/?Action=CVSync2AsyncGetResult&Version=2022-08-31';

let s: TasksStack;
let jimeng: FakeJimeng;
let channelId: number;

beforeAll(async () => {
  s = await startTasksStack('mj_imagine');
  // Generating lasts about two seconds: several polls (300 ms) see it even on a busy machine.
  jimeng = await startFakeJimeng({ accessKey: 'AKLTtest', secretKey: 'volc-secret-test', stepMs: 600, steps: 4 });
  channelId = await createChannel(s, {
    type: 51,
    baseUrl: jimeng.url,
    key: 'AKLTtest|volc-secret-test',
    models: `${T2V},${I2V}`,
  });
  await setOption(s, 'ModelPrice', JSON.stringify({ [T2V]: 0.02, [I2V]: 0.02 }));
});

afterAll(async () => {
  await jimeng?.close();
  await s?.stop();
});

/** Asks GetResult through the gateway until `done` holds (throws if it never does); returns every data.status seen. */
async function followJimeng(key: string, reqKey: string, id: string, done: (r: Json) => boolean) {
  const seen: string[] = [];
  const answer = await eventually(
    async () => {
      const r = await mj(s, key, RESULT, { req_key: reqKey, task_id: id });
      const st = r.body?.code === 10000 ? String(r.body.data?.status) : `code ${r.body?.code}`;
      if (seen.at(-1) !== st) seen.push(st);
      return r.body;
    },
    done,
    { timeoutMs: 20_000, intervalMs: 80, what: `Jimeng task ${id} done` },
  );
  return { answer, seen };
}
const ended = (b: Json) => b?.code !== 10000 || b?.data?.status === 'done';

/** Submits once the tasks service sees the price (its options cache follows Kafka). */
const submit = (key: string, body: Json) =>
  eventually(
    () => mj(s, key, SUBMIT, body),
    (r) => !String(r.body?.message ?? r.body?.ResponseMetadata?.Error?.Message).includes('倍率或价格未配置'),
  );

describe('Jimeng (type 51) through the gateway', () => {
  it('when a text-to-video task is submitted, then the upstream gets a valid signature, the task is done with a video, and it is charged per second once', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const sub = await submit(u.key, { req_key: T2V, prompt: 'a fox running in snow', seed: -1, aspect_ratio: '16:9' });
    expect(sub.status).toBe(200);
    expect(sub.body).toMatchObject({
      code: 10000,
      message: 'Success',
      status: 10000,
      data: { task_id: expect.any(String) },
    });
    const id = String(sub.body.data.task_id);
    // The fake only accepts requests signed with this access key's secret (HMAC-SHA256, cv, cn-north-1).
    expect(jimeng.submits.at(-1)).toEqual({
      req_key: T2V,
      prompt: 'a fox running in snow',
      seed: -1,
      aspect_ratio: '16:9',
    });
    expect(jimeng.refusals).toBe(0);
    expect((await walletOf(s, u.userId)).quota).toBe(1_000_000 - FIVE);

    const { answer, seen } = await followJimeng(u.key, T2V, id, ended);
    expect(answer).toMatchObject({
      code: 10000,
      data: { status: 'done', video_url: `${jimeng.url}/videos/${id}.mp4` },
    });
    expect(seen).toContain('generating');
    expect(jimeng.refusals).toBe(0);
    const mp4 = await fetch(answer.data.video_url);
    expect(Buffer.from(await mp4.arrayBuffer())).toEqual(JIMENG_MP4);

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
    expect(logs.map((l) => [l.type, l.quota, l.modelName, l.channel])).toEqual([[2, FIVE, T2V, channelId]]);

    // The task row of /api/task/self: platform, status, and the video the /task page plays.
    const user = new Api(s.gateway);
    await user.login(u.username, 'password123');
    const own = await user.get<Json>('/task/self', { p: '1' });
    expect(own.body.data?.items).toHaveLength(1);
    const row = own.body.data?.items[0] as Json;
    expect(row).toMatchObject({
      task_id: id,
      platform: 'jimeng',
      action: 'VIDEO',
      status: 'SUCCESS',
      progress: '100%',
    });
    expect(JSON.parse(row.data)).toEqual([{ id, video_url: answer.data.video_url, duration: '5' }]);
    // Another user's key, or another req_key, finds no such task (Jimeng's not_found).
    const other = await userWithToken(s, { quota: 1_000_000 });
    const theirs = await mj(s, other.key, RESULT, { req_key: T2V, task_id: id });
    expect(theirs.body).toMatchObject({ code: 10000, data: { status: 'not_found' } });
    expect((await mj(s, u.key, RESULT, { req_key: I2V, task_id: id })).body.data.status).toBe('not_found');
  });

  it('when an image-to-video task of 241 frames is done, then it costs ten seconds', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const sub = await submit(u.key, {
      req_key: I2V,
      image_urls: ['https://example.com/cat.png'],
      prompt: 'the cat waves',
      frames: 241,
    });
    expect(sub.body.code).toBe(10000);
    expect(jimeng.submits.at(-1)).toMatchObject({
      req_key: I2V,
      image_urls: ['https://example.com/cat.png'],
      frames: 241,
    });
    const { answer } = await followJimeng(u.key, I2V, String(sub.body.data.task_id), ended);
    expect(answer.data?.status).toBe('done');
    expect(
      await eventually(
        () => walletOf(s, u.userId),
        (x) => x.used === TEN,
      ),
    ).toEqual({ quota: 1_000_000 - TEN, used: TEN });
  });

  it('when the upstream fails a task, then it is refunded once; refused and invalid submits are not charged', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const badFrames = await submit(u.key, { req_key: T2V, prompt: 'x', frames: 100 });
    expect(badFrames.status).toBe(400);
    expect(badFrames.body).toMatchObject({
      code: 50215,
      message: 'frames 只能是 121（5 秒）或 241（10 秒）',
      data: null,
    });
    const noImage = await mj(s, u.key, SUBMIT, { req_key: I2V, prompt: 'a' });
    expect(noImage.status).toBe(400);
    const noPrompt = await mj(s, u.key, SUBMIT, { req_key: T2V });
    expect(noPrompt.status).toBe(400);
    const refused = await mj(s, u.key, SUBMIT, { req_key: T2V, prompt: 'reject-me' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 50412, message: 'Text Risk Not Pass', data: null });
    const noKey = await mj(s, 'sk-nope', SUBMIT, { req_key: T2V, prompt: 'a' });
    expect(noKey.status).toBe(401);
    expect(noKey.body.ResponseMetadata.Error).toMatchObject({ CodeN: 100009, Code: 'InvalidAccessKey' });
    const badAction = await mj(s, u.key, '/jimeng/?Action=CVSync2AsyncDelete&Version=2022-08-31', { req_key: T2V });
    expect(badAction.status).toBe(404);
    expect(badAction.body.ResponseMetadata.Error.Code).toBe('InvalidActionOrVersion');
    expect(await walletOf(s, u.userId)).toEqual({ quota: 1_000_000, used: 0 });

    const sub = await mj(s, u.key, SUBMIT, { req_key: T2V, prompt: 'fail-me' });
    expect(sub.body.code).toBe(10000);
    expect((await walletOf(s, u.userId)).quota).toBe(1_000_000 - FIVE);
    const { answer, seen } = await followJimeng(u.key, T2V, String(sub.body.data.task_id), ended);
    expect(seen).toContain('generating');
    expect(answer).toMatchObject({ code: 50511, message: 'Post Img Risk Not Pass', data: null });
    expect((await afterRefund(s, u.userId)).map((l) => [l.type, l.quota, l.modelName]).sort()).toEqual([
      [2, FIVE, T2V],
      [6, FIVE, T2V],
    ]);
  });

  it('when a task never finishes, then it fails by the (shortened) timeout and is refunded once', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const sub = await submit(u.key, { req_key: T2V, prompt: 'never ending river' });
    expect(sub.body.code).toBe(10000);
    const { answer, seen } = await followJimeng(u.key, T2V, String(sub.body.data.task_id), ended);
    expect(seen).toContain('generating');
    // TASKS_TIMEOUT_MS is 4 s in the harness; the upstream still says generating.
    expect(answer).toMatchObject({ code: 50500, message: '任务超时', data: null });
    expect((await afterRefund(s, u.userId)).map((l) => [l.type, l.quota]).sort()).toEqual([
      [2, FIVE],
      [6, FIVE],
    ]);
  });

  it('when the channel holds a wrong secret key, then VolcEngine refuses the signature and the submit is given back', async () => {
    const wrong = await startFakeJimeng({ accessKey: 'AKLTother', secretKey: 'right-secret' });
    await createChannel(s, { type: 51, baseUrl: wrong.url, key: 'AKLTother|wrong-secret', models: 'jimeng_t2v_v30' });
    await setOption(s, 'ModelPrice', JSON.stringify({ [T2V]: 0.02, [I2V]: 0.02, jimeng_t2v_v30: 0.02 }));
    const u = await userWithToken(s, { quota: 1_000_000 });
    const r = await submit(u.key, { req_key: 'jimeng_t2v_v30', prompt: 'a' });
    expect(r.status).toBe(502);
    expect(r.body.ResponseMetadata.Error).toMatchObject({ CodeN: 100010, Code: 'SignatureDoesNotMatch' });
    expect(wrong.refusals).toBe(1);
    expect(wrong.submits).toEqual([]);
    expect(await walletOf(s, u.userId)).toEqual({ quota: 1_000_000, used: 0 });
    expect(await logsOf(s, u.userId)).toEqual([]);
    await wrong.close();
  });
});
