import { eventually } from '@aigw/testkit';
import { FAKE_MP4, type FakeSuno, type FakeVideo, startFakeSuno, startFakeVideo } from '@aigw/testkit/fakes';
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

// suno_music 0.1 $ and suno_lyrics 0.01 $ (reference per-call prices) x 500,000.
const MUSIC = 50_000;
const LYRICS = 5_000;

let s: TasksStack;
let suno: FakeSuno;
let channelId: number;
let video: FakeVideo;

beforeAll(async () => {
  // The stack's midjourney channel is unused here; Suno gets its own channel (type 36).
  s = await startTasksStack('mj_imagine');
  suno = await startFakeSuno({ key: 'suno-key', stepMs: 400, steps: 4 });
  channelId = await createChannel(s, {
    type: 36,
    baseUrl: suno.url,
    key: 'suno-key',
    models: 'suno_music,suno_lyrics',
  });
  // sora-2 on a Sora channel (type 55, new-api's number).
  video = await startFakeVideo({ key: 'video-key' });
  await createChannel(s, { type: 55, baseUrl: video.url, key: 'video-key', models: 'sora-2' });
});

afterAll(async () => {
  await suno?.close();
  await video?.close();
  await s?.stop();
});

/** Fetches a Suno task until `done` holds (throws if it never does); returns every status seen. */
async function followSuno(key: string, id: string, done: (t: Json) => boolean) {
  const seen: string[] = [];
  const task = await eventually(
    async () => {
      const t = (await mj(s, key, `/suno/fetch/${id}`)).body.data as Json;
      if (seen.at(-1) !== t?.status) seen.push(String(t?.status));
      return t;
    },
    done,
    { timeoutMs: 20_000, intervalMs: 80, what: `Suno task ${id} done` },
  );
  return { task, seen };
}

describe('suno through the gateway', () => {
  it('when music is submitted, then it progresses to SUCCESS with clips, charged once and settled', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const before = await walletOf(s, u.userId);
    const sub = await mj(s, u.key, '/suno/submit/music', { prompt: '[Verse] la la', tags: 'pop', mv: 'chirp-v3-5' });
    expect(sub.status).toBe(200);
    expect(sub.body).toMatchObject({ code: 'success', message: '' });
    const id = String(sub.body.data);
    expect(suno.submits.at(-1)?.body).toMatchObject({ prompt: '[Verse] la la', tags: 'pop', mv: 'chirp-v3-5' });
    expect((await walletOf(s, u.userId)).quota).toBe(before.quota - MUSIC);

    const { task, seen } = await followSuno(u.key, id, (t) => t?.status === 'SUCCESS' || t?.status === 'FAILURE');
    expect(task.status).toBe('SUCCESS');
    expect(seen).toContain('IN_PROGRESS');
    expect(task).toMatchObject({ task_id: id, action: 'MUSIC', progress: '100%' });
    expect(task.data).toHaveLength(2);
    expect(task.data[0].audio_url).toBe(`${suno.url}/files/${id}-1.mp3`);
    expect(task.finish_time).toBeGreaterThanOrEqual(task.submit_time);

    const w = await eventually(
      () => walletOf(s, u.userId),
      (x) => x.used === before.used + MUSIC,
    );
    expect(w).toEqual({ quota: before.quota - MUSIC, used: before.used + MUSIC });
    const logs = await eventually(
      () => logsOf(s, u.userId),
      (l) => l.length > 0,
    );
    expect(logs.map((l) => [l.type, l.quota, l.modelName])).toEqual([[2, MUSIC, 'suno_music']]);
  });

  it("when lyrics are submitted and fetched in a batch, then the batch holds only the caller's tasks", async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const other = await userWithToken(s, { quota: 1_000_000 });
    const sub = await mj(s, u.key, '/suno/submit/lyrics', { prompt: 'a song about tests' });
    const id = String(sub.body.data);
    const mine = await mj(s, other.key, '/suno/submit/lyrics', { prompt: 'someone else' });
    const { task } = await followSuno(u.key, id, (t) => t?.status === 'SUCCESS');
    expect(task.data).toMatchObject({ text: '[Verse]\na song about tests', status: 'complete' });
    const batch = await mj(s, u.key, '/suno/fetch', { ids: [id, mine.body.data, 'nope'] });
    expect(batch.body.code).toBe('success');
    expect(batch.body.data.map((t: Json) => t.task_id)).toEqual([id]);
    expect((await mj(s, other.key, `/suno/fetch/${id}`)).status).toBe(404);
    expect(
      await eventually(
        () => walletOf(s, u.userId),
        (x) => x.used === LYRICS,
      ),
    ).toEqual({ quota: 1_000_000 - LYRICS, used: LYRICS });
  });

  it('when the upstream fails a music task, then it is refunded once; a refused submit is not charged', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const refused = await mj(s, u.key, '/suno/submit/music', { prompt: 'reject-me' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'fail', message: 'prompt rejected' });
    expect(await walletOf(s, u.userId)).toEqual({ quota: 1_000_000, used: 0 });

    const sub = await mj(s, u.key, '/suno/submit/music', { prompt: 'fail-me' });
    const { task } = await followSuno(u.key, String(sub.body.data), (t) => t?.status === 'FAILURE');
    expect(task.fail_reason).toBe('audio generation failed');
    expect((await afterRefund(s, u.userId)).map((l) => [l.type, l.quota]).sort()).toEqual([
      [2, MUSIC],
      [6, MUSIC],
    ]);
  });

  it('when admins and users list async tasks (/api/task), then admins see channels and users only their own', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const sub = await mj(s, u.key, '/suno/submit/lyrics', { prompt: 'listed' });
    const id = String(sub.body.data);
    await followSuno(u.key, id, (t) => t?.status === 'SUCCESS');
    const root = new Api(s.gateway);
    await root.login('root', '123456');
    const all = await root.get<Json>('/task/', { task_id: id, channel_id: String(channelId) });
    expect(all.body.data?.total).toBe(1);
    expect(all.body.data?.items[0]).toMatchObject({
      task_id: id,
      platform: 'suno',
      action: 'LYRICS',
      status: 'SUCCESS',
      progress: '100%',
      channel_id: channelId,
      user_id: u.userId,
      fail_reason: '',
    });
    const user = new Api(s.gateway);
    await user.login(u.username, 'password123');
    const own = await user.get<Json>('/task/self', { p: '1' });
    expect(own.body.data?.items.map((i: Json) => i.task_id)).toEqual([id]);
    expect(own.body.data?.items[0].channel_id).toBeUndefined();
    expect((await user.get('/task/')).status).toBe(403);
  });
});

/** The videos API through the gateway's port (proxied to the tasks service, the rest of /v1 to the relay). */
async function videos(key: string, path: string, body?: unknown) {
  const res = await fetch(`${s.gateway}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return res;
}

describe('videos (OpenAI /v1/videos)', () => {
  // sora-2 at 0.1 $ per second: a 4-second video costs 0.4 $ = 200,000.
  const VIDEO = 200_000;

  it('when a video is created, then it completes, its content downloads, and it is charged per second once', async () => {
    await setOption(s, 'ModelPrice', JSON.stringify({ 'sora-2': 0.1 }));
    const u = await userWithToken(s, { quota: 1_000_000 });
    const created = await eventually(
      () => videos(u.key, '/v1/videos', { model: 'sora-2', prompt: 'a cat surfing', seconds: '4', size: '720x1280' }),
      (r) => r.status === 200,
    );
    const v = (await created.json()) as Json;
    expect(v).toMatchObject({ object: 'video', model: 'sora-2', status: 'queued', seconds: '4' });
    expect((await walletOf(s, u.userId)).quota).toBe(1_000_000 - VIDEO);

    const seen: string[] = [];
    const last = await eventually(
      async () => {
        const got = (await (await videos(u.key, `/v1/videos/${v.id}`)).json()) as Json;
        if (seen.at(-1) !== got.status) seen.push(got.status);
        return got;
      },
      (got) => got.status === 'completed' || got.status === 'failed',
      { timeoutMs: 20_000, intervalMs: 80, what: `video ${v.id} completed or failed` },
    );
    expect(last.status).toBe('completed');
    expect(seen).toContain('in_progress');
    const content = await videos(u.key, `/v1/videos/${v.id}/content`);
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await content.arrayBuffer())).toEqual(FAKE_MP4);
    expect(
      await eventually(
        () => walletOf(s, u.userId),
        (x) => x.used === VIDEO,
      ),
    ).toEqual({ quota: 1_000_000 - VIDEO, used: VIDEO });
    const logs = await eventually(
      () => logsOf(s, u.userId),
      (l) => l.length > 0,
    );
    expect(logs.map((l) => [l.type, l.quota, l.modelName])).toEqual([[2, VIDEO, 'sora-2']]);
    // Another user's key does not see it.
    const other = await userWithToken(s, { quota: 1_000_000 });
    expect((await videos(other.key, `/v1/videos/${v.id}`)).status).toBe(404);
  });

  it('when a video fails upstream, then it is refunded once; a refused create is not charged', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const refused = await videos(u.key, '/v1/videos', { model: 'sora-2', prompt: 'reject-me' });
    expect(refused.status).toBe(400);
    expect(await walletOf(s, u.userId)).toEqual({ quota: 1_000_000, used: 0 });
    const v = (await (
      await videos(u.key, '/v1/videos', { model: 'sora-2', prompt: 'fail-me', seconds: 4 })
    ).json()) as Json;
    expect(
      await eventually(
        () => walletOf(s, u.userId),
        (x) => x.quota === 1_000_000,
      ),
    ).toEqual({ quota: 1_000_000, used: 0 });
    const got = (await (await videos(u.key, `/v1/videos/${v.id}`)).json()) as Json;
    expect(got).toMatchObject({ status: 'failed', error: { code: 'moderation_blocked' } });
    await eventually(
      () => logsOf(s, u.userId),
      (l) => l.some((x) => x.type === 6),
    );
    expect((await logsOf(s, u.userId)).map((l) => [l.type, l.quota]).sort()).toEqual([
      [2, VIDEO],
      [6, VIDEO],
    ]);
  });
});
