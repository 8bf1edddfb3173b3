/**
 * new-api's unified video API (`/v1/video/generations`) through the gateway, on Kling, Jimeng,
 * Vidu, Doubao video and Sora channels: each request becomes the platform's own submit (checked at the fake upstream),
 * the task is followed to its video, charged once per second of video, refunded on failure. Also
 * OpenAI's own SDK on `/v1/videos`, which always sends its create as multipart/form-data.
 */
import { eventually } from '@aigw/testkit';
import {
  FAKE_MP4,
  type FakeJimeng,
  type FakeKling,
  type FakeVideo,
  startFakeJimeng,
  startFakeKling,
  startFakeVideo,
} from '@aigw/testkit/fakes';
import { createChannel } from '@aigw/testkit/harness';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDoubaoVideo, startFakeDoubaoVideo } from './fakes/fake-doubao-video.ts';
import { type FakeVidu, startFakeVidu } from './fakes/fake-vidu.ts';
import {
  afterRefund,
  autoGroups,
  type Json,
  logsOf,
  mj,
  setOption,
  startTasksStack,
  type TasksStack,
  userWithToken,
  walletOf,
} from './tasks-harness.ts';

const I2V = 'jimeng_vgfm_i2v_l20';
const SEEDANCE = 'doubao-seedance-1-0-pro-250528';
// 0.02 $ per second x 500,000 (Kling and Jimeng): 5 s = 50,000, 10 s = 100,000; sora-2 0.1 $ per
// second: 4 s = 200,000.
const FIVE = 50_000;
const TEN = 100_000;
const SORA_FOUR = 200_000;

let s: TasksStack;
let kling: FakeKling;
let jimeng: FakeJimeng;
let video: FakeVideo;
let doubao: FakeDoubaoVideo;
let vidu: FakeVidu;

beforeAll(async () => {
  s = await startTasksStack('mj_imagine');
  kling = await startFakeKling({ accessKey: 'ak-gen', secretKey: 'sk-gen-secret', stepMs: 500, steps: 4 });
  jimeng = await startFakeJimeng({ accessKey: 'AKLTgen', secretKey: 'volc-gen-secret', stepMs: 500, steps: 4 });
  video = await startFakeVideo({ key: 'video-key', stepMs: 500, steps: 4 });
  doubao = await startFakeDoubaoVideo({ key: 'ark-key' });
  vidu = await startFakeVidu({ key: 'vidu-key' });
  await createChannel(s, { type: 50, baseUrl: kling.url, key: 'ak-gen|sk-gen-secret', models: 'kling-v1' });
  await createChannel(s, { type: 51, baseUrl: jimeng.url, key: 'AKLTgen|volc-gen-secret', models: I2V });
  await createChannel(s, { type: 55, baseUrl: video.url, key: 'video-key', models: 'sora-2' });
  await createChannel(s, { type: 54, baseUrl: doubao.url, key: 'ark-key', models: SEEDANCE });
  await createChannel(s, { type: 52, baseUrl: vidu.url, key: 'vidu-key', models: 'viduq1' });
  await setOption(
    s,
    'ModelPrice',
    JSON.stringify({ 'kling-v1': 0.02, [I2V]: 0.02, 'sora-2': 0.1, [SEEDANCE]: 0.02, viduq1: 0.02 }),
  );
});

afterAll(async () => {
  await kling?.close();
  await jimeng?.close();
  await video?.close();
  await doubao?.close();
  await vidu?.close();
  await s?.stop();
});

/** Submits once the tasks service sees the prices (its options cache follows Kafka). */
const submit = (key: string, body: Json) =>
  eventually(
    () => mj(s, key, '/v1/video/generations', body),
    (r) => !String(r.body?.error?.message).includes('倍率或价格未配置'),
  );

/** Reads a task until it is completed or failed (throws if neither comes); returns the last answer and every status seen. */
async function follow(key: string, id: string) {
  const seen: string[] = [];
  const task = await eventually(
    async () => {
      const r = await mj(s, key, `/v1/video/generations/${id}`);
      expect(r.status).toBe(200);
      if (seen.at(-1) !== r.body.status) seen.push(String(r.body.status));
      return r.body;
    },
    (t) => t.status === 'completed' || t.status === 'failed',
    { timeoutMs: 20_000, intervalMs: 80, what: `video task ${id} completed or failed` },
  );
  return { task, seen };
}

/** The user's charge logs (type 2) once they are there, as [quota, model]. */
async function charges(userId: number, count: number) {
  const logs = await eventually(
    () => logsOf(s, userId),
    (l) => l.filter((x) => x.type === 2).length >= count,
  );
  return logs.filter((x) => x.type === 2).map((x) => [x.quota, x.modelName]);
}

describe('video APIs through the gateway (/v1/video/generations, OpenAI SDK on /v1/videos)', () => {
  it('when a Kling model is asked for, then Kling gets its own text2video request, the video completes, and five seconds are charged once', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const sub = await submit(u.key, {
      model: 'kling-v1',
      prompt: 'a fox running in snow',
      duration: 5,
      width: 1280,
      height: 720,
      metadata: { negative_prompt: 'blur', mode: 'pro' },
    });
    expect(sub.status).toBe(200);
    expect(sub.body).toEqual({ task_id: expect.any(String), status: 'queued' });
    const id = String(sub.body.task_id);
    expect(kling.submits.at(-1)).toEqual({
      kind: 'text2video',
      body: {
        model_name: 'kling-v1',
        prompt: 'a fox running in snow',
        duration: '5',
        aspect_ratio: '16:9',
        negative_prompt: 'blur',
        mode: 'pro',
      },
    });
    expect((await walletOf(s, u.userId)).quota).toBe(1_000_000 - FIVE);

    const { task, seen } = await follow(u.key, id);
    expect(seen).toContain('in_progress');
    expect(task).toEqual({
      task_id: id,
      status: 'completed',
      url: `${kling.url}/videos/${id}.mp4`,
      format: 'mp4',
      metadata: { duration: 5 },
      error: null,
    });
    // The same task through Kling's own query.
    const native = await mj(s, u.key, `/kling/v1/videos/text2video/${id}`);
    expect(native.body.data).toMatchObject({ task_id: id, task_status: 'succeed' });
    expect(await charges(u.userId, 1)).toEqual([[FIVE, 'kling-v1']]);
    expect(await walletOf(s, u.userId)).toEqual({ quota: 1_000_000 - FIVE, used: FIVE });
  });

  it('when a Jimeng image-to-video model is asked for ten seconds from an image URL, then Jimeng gets 241 frames, and ten seconds are charged', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const sub = await submit(u.key, {
      model: I2V,
      prompt: 'the cat waves',
      image: 'https://img.example/cat.png',
      duration: 10,
      seed: 7,
    });
    expect(sub.status).toBe(200);
    const id = String(sub.body.task_id);
    expect(jimeng.submits.at(-1)).toEqual({
      req_key: I2V,
      prompt: 'the cat waves',
      image_urls: ['https://img.example/cat.png'],
      frames: 241,
      seed: 7,
    });
    const { task } = await follow(u.key, id);
    expect(task).toMatchObject({
      status: 'completed',
      url: `${jimeng.url}/videos/${id}.mp4`,
      metadata: { duration: 10 },
      error: null,
    });
    expect(await charges(u.userId, 1)).toEqual([[TEN, I2V]]);
    expect(await walletOf(s, u.userId)).toEqual({ quota: 1_000_000 - TEN, used: TEN });
  });

  it('when Jimeng fails a task given a base64 image, then the answer says failed with its code and the charge is refunded once', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const sub = await submit(u.key, { model: I2V, prompt: 'fail-me', image: 'data:image/png;base64,iVBORw0KGgo=' });
    expect(sub.status).toBe(200);
    expect(jimeng.submits.at(-1)).toEqual({ req_key: I2V, prompt: 'fail-me', binary_data_base64: ['iVBORw0KGgo='] });
    const { task } = await follow(u.key, String(sub.body.task_id));
    expect(task).toMatchObject({
      status: 'failed',
      url: '',
      error: { code: 50511, message: 'Post Img Risk Not Pass' },
    });
    const logs = await afterRefund(s, u.userId);
    expect(logs.map((l) => [l.type, l.quota]).sort()).toEqual([
      [2, FIVE],
      [6, FIVE],
    ]);
  });

  it('when a Doubao Seedance model is asked for from an image, then Ark gets its content items, the video completes and five seconds are charged; a failed one is refunded', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const sub = await submit(u.key, {
      model: SEEDANCE,
      prompt: 'the cat waves',
      image: 'https://img.example/cat.png',
      width: 1280,
      height: 720,
      seed: 7,
      metadata: { resolution: '720p', camera_fixed: true, callback_url: 'https://hook.example/x' },
    });
    expect(sub.status).toBe(200);
    expect(sub.body).toEqual({ task_id: expect.stringMatching(/^cgt-/), status: 'queued' });
    const id = String(sub.body.task_id);
    expect(doubao.creates.at(-1)).toEqual({
      model: SEEDANCE,
      content: [
        { type: 'text', text: 'the cat waves' },
        { type: 'image_url', image_url: { url: 'https://img.example/cat.png' }, role: 'first_frame' },
      ],
      duration: 5,
      ratio: '16:9',
      seed: 7,
      resolution: '720p',
      camera_fixed: true,
    });
    const { task, seen } = await follow(u.key, id);
    expect(seen).toContain('in_progress');
    expect(task).toEqual({
      task_id: id,
      status: 'completed',
      url: `https://ark-content-generation.tos-cn-beijing.volces.com/${id}.mp4`,
      format: 'mp4',
      metadata: { duration: 5 },
      error: null,
    });
    expect(await charges(u.userId, 1)).toEqual([[FIVE, SEEDANCE]]);
    expect(await walletOf(s, u.userId)).toEqual({ quota: 1_000_000 - FIVE, used: FIVE });

    const v = await userWithToken(s, { quota: 1_000_000 });
    const bad = await submit(v.key, { model: SEEDANCE, prompt: 'x', duration: 30 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_duration' });
    const failing = await submit(v.key, { model: SEEDANCE, prompt: 'fail-me', duration: 5 });
    expect(failing.status).toBe(200);
    const failed = await follow(v.key, String(failing.body.task_id));
    expect(failed.task).toMatchObject({
      status: 'failed',
      error: { message: 'The request failed because the output video may contain sensitive information.' },
    });
    const logs = await afterRefund(s, v.userId);
    expect(logs.map((l) => [l.type, l.quota]).sort()).toEqual([
      [2, FIVE],
      [6, FIVE],
    ]);
  });

  it("when a Vidu model is asked for, then text2video (or img2video with an image) gets Vidu's fields, the video completes and five seconds are charged; a failed one is refunded", async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    // Held in progress at the fake until seen so: the poller's reads cannot step past it unseen.
    vidu.holdNext();
    const sub = await submit(u.key, {
      model: 'viduq1',
      prompt: 'a fox in snow',
      width: 1920,
      height: 1080,
      seed: 3,
      metadata: { movement_amplitude: 'large' },
    });
    expect(sub.status).toBe(200);
    const id = String(sub.body.task_id);
    expect(vidu.submits.at(-1)).toEqual({
      kind: 'text2video',
      body: {
        model: 'viduq1',
        prompt: 'a fox in snow',
        duration: 5,
        seed: 3,
        resolution: '1080p',
        movement_amplitude: 'large',
        bgm: false,
        aspect_ratio: '16:9',
      },
    });
    await eventually(
      () => mj(s, u.key, `/v1/video/generations/${id}`),
      (r) => r.body.status === 'in_progress',
      { timeoutMs: 20_000, intervalMs: 80, what: `video task ${id} in progress` },
    );
    vidu.release(id);
    const { task } = await follow(u.key, id);
    expect(task).toEqual({
      task_id: id,
      status: 'completed',
      url: `https://prod-ss-vidu.s3.cn-northwest-1.amazonaws.com.cn/${id}.mp4`,
      format: 'mp4',
      metadata: { duration: 5 },
      error: null,
    });
    expect(await charges(u.userId, 1)).toEqual([[FIVE, 'viduq1']]);
    expect(await walletOf(s, u.userId)).toEqual({ quota: 1_000_000 - FIVE, used: FIVE });

    const v = await userWithToken(s, { quota: 1_000_000 });
    const failing = await submit(v.key, { model: 'viduq1', prompt: 'fail-me', image: 'https://img.example/cat.png' });
    expect(failing.status).toBe(200);
    expect(vidu.submits.at(-1)).toMatchObject({ kind: 'img2video', body: { images: ['https://img.example/cat.png'] } });
    const failed = await follow(v.key, String(failing.body.task_id));
    expect(failed.task).toMatchObject({ status: 'failed', error: { message: 'AuditSubmitIllegal' } });
    const logs = await afterRefund(s, v.userId);
    expect(logs.map((l) => [l.type, l.quota]).sort()).toEqual([
      [2, FIVE],
      [6, FIVE],
    ]);
  });

  it('when a Sora model is asked for, then OpenAI videos gets seconds and size, and the answer links the content endpoint that serves the video', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const sub = await submit(u.key, {
      model: 'sora-2',
      prompt: 'a cat surfing',
      duration: 4,
      width: 720,
      height: 1280,
    });
    expect(sub.status).toBe(200);
    expect(video.creates.at(-1)).toMatchObject({
      model: 'sora-2',
      prompt: 'a cat surfing',
      seconds: '4',
      size: '720x1280',
    });
    const id = String(sub.body.task_id);
    const { task } = await follow(u.key, id);
    expect(task).toMatchObject({ status: 'completed', metadata: { duration: 4, width: 720, height: 1280 } });
    expect(String(task.url).endsWith(`/v1/videos/${id}/content`)).toBe(true);
    const path = String(task.url).replace(/^https?:\/\/[^/]+/, '');
    const content = await fetch(`${s.gateway}${path}`, { headers: { authorization: `Bearer ${u.key}` } });
    expect(content.status).toBe(200);
    expect(Buffer.from(await content.arrayBuffer())).toEqual(FAKE_MP4);
    expect(await charges(u.userId, 1)).toEqual([[SORA_FOUR, 'sora-2']]);
  });

  it('when an auto token asks for Kling and Vidu models, then each runs on the first auto group with a channel and is priced and logged in it', async () => {
    const [ga, gb] = ['vauto-a', 'vauto-b'];
    await autoGroups(s, ga, gb);
    // ga serves neither model; gb both.
    await createChannel(s, {
      type: 50,
      baseUrl: kling.url,
      key: 'ak-gen|sk-gen-secret',
      models: 'kling-v1',
      group: gb,
    });
    await createChannel(s, { type: 52, baseUrl: vidu.url, key: 'vidu-key', models: 'viduq1', group: gb });
    const u = await userWithToken(s, { quota: 1_000_000, token: { group: 'auto' } });
    const served = (body: Json) =>
      eventually(
        () => mj(s, u.key, '/v1/video/generations', body),
        (r) => r.status === 200,
        { what: `the auto token served ${body.model}` },
      );
    const a = await served({ model: 'kling-v1', prompt: 'an auto cat', duration: 5 });
    const b = await served({ model: 'viduq1', prompt: 'an auto dog', duration: 5 });
    // GroupGroupRatio default -> gb (3) for five seconds of each.
    expect((await walletOf(s, u.userId)).quota).toBe(1_000_000 - 2 * FIVE * 3);
    const docs = await s.db
      .collection('tasks')
      .find({ task_id: { $in: [String(a.body.task_id), String(b.body.task_id)] } })
      .toArray();
    expect(docs.map((t) => [t.platform, t.group, t.group_ratio]).sort()).toEqual([
      ['kling', gb, 3],
      ['vidu', gb, 3],
    ]);
    const logs = await eventually(
      () => logsOf(s, u.userId),
      (l) => l.filter((x) => x.type === 2).length === 2,
    );
    expect(logs.filter((l) => l.type === 2).map((l) => [l.group, l.quota])).toEqual([
      [gb, FIVE * 3],
      [gb, FIVE * 3],
    ]);
  });

  it('when a request is wrong or the wallet too small, then OpenAI-shaped errors come back and nothing is charged or sent upstream', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const other = await userWithToken(s, { quota: 1_000_000 });
    const klingBefore = kling.submits.length;
    const cases: [Json, number, string][] = [
      [{ prompt: 'x' }, 400, 'model 不能为空'],
      [{ model: 'kling-v1', prompt: 'x', duration: 7 }, 400, 'duration 只能是 5 或 10'],
      [{ model: 'kling-v1', prompt: 'x', duration: 'long' }, 400, 'duration 必须是正整数'],
      [{ model: I2V, prompt: 'x', duration: 6 }, 400, 'duration 只能是 5 或 10'],
      [
        { model: 'no-such-video-model', prompt: 'x' },
        503,
        '当前分组 default 下对于模型 no-such-video-model 无可用渠道',
      ],
    ];
    for (const [body, status, message] of cases) {
      const r = await submit(u.key, body);
      expect([r.status, r.body.error?.message], JSON.stringify(body)).toEqual([status, message]);
      expect(r.body.error.type).toBe('invalid_request_error');
    }
    const poor = await userWithToken(s, { quota: 10_000 });
    const refused = await submit(poor.key, { model: 'kling-v1', prompt: 'x' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBeTruthy();
    expect(kling.submits.length).toBe(klingBefore);
    expect(await walletOf(s, poor.userId)).toEqual({ quota: 10_000, used: 0 });
    expect(await walletOf(s, u.userId)).toEqual({ quota: 1_000_000, used: 0 });

    // Another user's task is not found; no key is refused; a form body is refused.
    const mine = await submit(other.key, { model: 'kling-v1', prompt: 'mine' });
    const id = String(mine.body.task_id);
    expect((await mj(s, u.key, `/v1/video/generations/${id}`)).status).toBe(404);
    const anonymous = await fetch(`${s.gateway}/v1/video/generations/${id}`);
    expect(anonymous.status).toBe(401);
    const form = await fetch(`${s.gateway}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'model=kling-v1&prompt=x',
    });
    expect(form.status).toBe(415);
  });

  it("when OpenAI's SDK creates videos (multipart), with and without a reference image, then both complete, the image reaches the upstream byte for byte, the content downloads, and each is charged once", async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.gateway}/v1`, maxRetries: 0 });
    const params = { model: 'sora-2', prompt: 'a cat surfing', seconds: '4', size: '720x1280' } as const;
    const plain = await eventually(
      () => client.videos.create(params).catch((err: Error) => err),
      (v) => !(v instanceof Error && v.message.includes('倍率或价格未配置')),
    );
    if (plain instanceof Error) throw plain;
    // Without a file the upstream gets the fields as JSON (OpenAI takes both).
    expect(video.creates.at(-1)).toEqual(params);
    // A PNG's signature and header chunk: what the upstream gets must be these bytes.
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    const withImage = await client.videos.create({
      ...params,
      prompt: 'the cat jumps',
      input_reference: await toFile(png, 'ref.png', { type: 'image/png' }),
    });
    expect(video.creates.at(-1)).toEqual({
      multipart: true,
      ...params,
      prompt: 'the cat jumps',
      input_reference: { name: 'ref.png', type: 'image/png', bytes: png },
    });
    for (const v of [plain, withImage]) {
      expect(v).toMatchObject({ object: 'video', model: 'sora-2', status: 'queued', seconds: '4' });
      const done = await eventually(
        () => client.videos.retrieve(v.id),
        (x) => x.status === 'completed' || x.status === 'failed',
      );
      expect(done.status).toBe('completed');
      const content = await client.videos.downloadContent(v.id);
      expect(Buffer.from(await content.arrayBuffer())).toEqual(FAKE_MP4);
    }
    // Not an image: refused before anything is reserved or sent.
    const creates = video.creates.length;
    const refused = await client.videos
      .create({ ...params, input_reference: await toFile(Buffer.from('hello'), 'ref.txt', { type: 'text/plain' }) })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as Error).message).toContain('input_reference 必须是 JPEG、PNG 或 WebP 图片');
    expect(video.creates.length).toBe(creates);
    expect(await charges(u.userId, 2)).toEqual([
      [SORA_FOUR, 'sora-2'],
      [SORA_FOUR, 'sora-2'],
    ]);
    expect(await walletOf(s, u.userId)).toEqual({ quota: 1_000_000 - 2 * SORA_FOUR, used: 2 * SORA_FOUR });
  });

  it("when OpenAI's SDK lists, remixes and deletes videos, then the list pages the caller's own videos, a remix of a finished video is charged like a new one, and a deleted video is gone while its charge stays", async () => {
    const u = await userWithToken(s, { quota: 2_000_000 });
    const other = await userWithToken(s, { quota: 1_000_000 });
    const client = new OpenAI({ apiKey: u.key, baseURL: `${s.gateway}/v1`, maxRetries: 0 });
    const params = { model: 'sora-2', seconds: '4', size: '720x1280' } as const;
    const made: string[] = [];
    for (const prompt of ['one', 'two', 'three']) {
      made.push(
        (
          await eventually(
            () => client.videos.create({ ...params, prompt }),
            (v) => !!v.id,
          )
        ).id,
      );
    }
    const [one, two, three] = made as [string, string, string];
    const theirs = await new OpenAI({ apiKey: other.key, baseURL: `${s.gateway}/v1`, maxRetries: 0 }).videos.create({
      ...params,
      prompt: 'not yours',
    });
    const completed = (id: string) =>
      eventually(
        () => client.videos.retrieve(id),
        (v) => v.status === 'completed',
      );
    for (const id of made) expect((await completed(id)).status).toBe('completed');

    // Pages of two, newest first; the SDK follows the cursor; another user's video never shows.
    const first = await client.videos.list({ limit: 2 });
    expect(first.data.map((v) => v.id)).toEqual([three, two]);
    expect(first.hasNextPage()).toBe(true);
    const all: string[] = [];
    for await (const v of client.videos.list({ limit: 2 })) all.push(v.id);
    expect(all).toEqual([three, two, one]);
    const oldest = await client.videos.list({ order: 'asc', limit: 100 });
    expect(oldest.data.map((v) => v.id)).toEqual([one, two, three]);
    expect(all).not.toContain(theirs.id);

    // An unfinished video can be neither remixed nor deleted.
    const running = await client.videos.create({ ...params, prompt: 'four' });
    const early = await client.videos.remix(running.id, { prompt: 'too early' }).catch((err: unknown) => err);
    expect(early).toBeInstanceOf(OpenAI.BadRequestError);
    expect((early as Error).message).toContain('只能改编已生成完成的视频');
    const notYet = await client.videos.delete(running.id).catch((err: unknown) => err);
    expect(notYet).toBeInstanceOf(OpenAI.BadRequestError);
    expect((notYet as Error).message).toContain('视频尚未生成完成，不能删除');

    // A remix of a finished one: the upstream remixes that video; the new one is billed and served.
    const remix = await client.videos.remix(one, { prompt: 'one again' });
    expect(video.remixes.at(-1)).toEqual({ from: one, body: { prompt: 'one again' } });
    expect(remix.remixed_from_video_id).toBe(one);
    expect((await completed(remix.id)).status).toBe('completed');
    const content = await client.videos.downloadContent(remix.id);
    expect(Buffer.from(await content.arrayBuffer())).toEqual(FAKE_MP4);

    // Deleted: upstream too, then 404 everywhere, out of the list; deleting again is 404.
    expect(await client.videos.delete(two)).toEqual({ id: two, object: 'video.deleted', deleted: true });
    expect(video.deletes).toContain(two);
    expect(await client.videos.retrieve(two).catch((err: unknown) => err)).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await client.videos.delete(two).catch((err: unknown) => err)).toBeInstanceOf(OpenAI.NotFoundError);
    const after: string[] = [];
    for await (const v of client.videos.list({ limit: 2 })) after.push(v.id);
    expect(after).toEqual([remix.id, running.id, three, one]);

    // Five videos made (the remix included), each charged once; the delete gave nothing back.
    expect(await charges(u.userId, 5)).toEqual(Array.from({ length: 5 }, () => [SORA_FOUR, 'sora-2']));
    await eventually(
      () => walletOf(s, u.userId),
      (w) => w.used === 5 * SORA_FOUR,
    );
    expect(await walletOf(s, u.userId)).toEqual({ quota: 2_000_000 - 5 * SORA_FOUR, used: 5 * SORA_FOUR });
  });
});
