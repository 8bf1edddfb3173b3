/**
 * Malformed requests on every task route, straight to the tasks service's port: a bad escape in
 * the path, a body that is not JSON, a broken multipart body. Each is the client's error (4xx in
 * the route's own shape), never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTasksStack, type TasksStack, userWithToken } from './tasks-harness.ts';

let s: TasksStack;
let key: string;
let userId: number;
let base: string;

beforeAll(async () => {
  s = await startTasksStack('mj_imagine');
  ({ key, userId } = await userWithToken(s, { quota: 1_000_000 }));
  base = s.stack.env.TASKS_HTTP_URL as string;
});

afterAll(async () => {
  await s?.stop();
});

async function call(method: string, path: string, body?: string, type = 'application/json') {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': type }) },
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Json };
}

const BAD = '%E0%A4%A';

describe('malformed requests on the task routes', () => {
  it('when a path holds a bad escape, then every route answers 400 in its own shape', async () => {
    const seen = {
      mj: await call('GET', `/mj/task/${BAD}/fetch`),
      mjSeed: await call('GET', `/mj/task/${BAD}/image-seed`),
      suno: await call('GET', `/suno/fetch/${BAD}`),
      kling: await call('GET', `/kling/v1/videos/text2video/${BAD}`),
      video: await call('GET', `/v1/videos/${BAD}`),
      videoContent: await call('GET', `/v1/videos/${BAD}/content`),
      generation: await call('GET', `/v1/video/generations/${BAD}`),
    };
    expect(Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, v.status]))).toEqual({
      mj: 400,
      mjSeed: 400,
      suno: 400,
      kling: 400,
      video: 400,
      videoContent: 400,
      generation: 400,
    });
    expect(seen.mj.body).toMatchObject({ code: 4, description: '请求的编码无效' });
    expect(seen.suno.body).toMatchObject({ code: 'invalid_request', message: '请求的编码无效' });
    expect(seen.kling.body).toMatchObject({ code: 1201, message: '请求的编码无效' });
    expect(seen.video.body).toMatchObject({ error: { message: '请求的编码无效' } });
    expect(seen.generation.body).toMatchObject({ error: { message: '请求的编码无效' } });
  });

  it('when a body is not JSON or a multipart body is broken, then the submit routes answer 400', async () => {
    const posts = {
      mj: await call('POST', '/mj/submit/imagine', '{"prompt":'),
      suno: await call('POST', '/suno/submit/music', '{'),
      kling: await call('POST', '/kling/v1/videos/text2video', '{'),
      jimeng: await call('POST', '/jimeng/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31', 'not json'),
      video: await call('POST', '/v1/videos', '{'),
      generation: await call('POST', '/v1/video/generations', '{'),
      multipart: await call('POST', '/v1/videos', '--x\r\nbroken', 'multipart/form-data; boundary=x'),
    };
    const statuses = Object.fromEntries(Object.entries(posts).map(([k, v]) => [k, v.status]));
    expect(statuses).toEqual({
      mj: 400,
      suno: 400,
      kling: 400,
      jimeng: 400,
      video: 400,
      generation: 400,
      multipart: 400,
    });
    expect(posts.generation.body).toMatchObject({ error: { message: '请求体不是有效的 JSON' } });
    expect(posts.multipart.body).toMatchObject({ error: { message: '请求体不是有效的 multipart/form-data' } });
  });

  it('when a body is JSON but not an object (an array, a string), then every submit route answers 400 and nothing is submitted', async () => {
    const posts = {
      mj: await call('POST', '/mj/submit/imagine', '[{"prompt":"a cat"}]'),
      suno: await call('POST', '/suno/submit/music', '["x"]'),
      kling: await call('POST', '/kling/v1/videos/text2video', '"text"'),
      jimeng: await call('POST', '/jimeng/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31', '[]'),
      video: await call('POST', '/v1/videos', '[1]'),
      generation: await call('POST', '/v1/video/generations', '42'),
    };
    const statuses = Object.fromEntries(Object.entries(posts).map(([k, v]) => [k, v.status]));
    expect(statuses).toEqual({ mj: 400, suno: 400, kling: 400, jimeng: 400, video: 400, generation: 400 });
    // The message the relay and the gateway give for the same body, in each route's shape.
    expect(posts.mj.body).toMatchObject({ code: 4, description: '请求体必须是 JSON 对象' });
    expect(posts.suno.body).toMatchObject({ message: '请求体必须是 JSON 对象' });
    expect(posts.kling.body).toMatchObject({ message: '请求体必须是 JSON 对象' });
    expect(posts.video.body).toMatchObject({ error: { message: '请求体必须是 JSON 对象' } });
    expect(posts.generation.body).toMatchObject({ error: { message: '请求体必须是 JSON 对象' } });
  });

  it('when a field has the wrong type, then every route answers 400 naming it in its own shape and nothing is charged', async () => {
    const { wallet } = await s.wallet.getWallet({ userId });
    const jimeng = '/jimeng/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31';
    const posts = {
      mj: await call('POST', '/mj/submit/imagine', '{"prompt":123}'),
      mjList: await call('POST', '/mj/task/list-by-condition', '{"ids":"abc"}'),
      suno: await call('POST', '/suno/submit/music', '{"prompt":["a song"]}'),
      sunoFetch: await call('POST', '/suno/fetch', '{"ids":{"0":"x"}}'),
      kling: await call('POST', '/kling/v1/videos/text2video', '{"prompt":"a","duration":[5]}'),
      jimeng: await call('POST', jimeng, '{"req_key":"jimeng_vgfm_t2v_l20","prompt":{"text":"a"}}'),
      video: await call('POST', '/v1/videos', '{"prompt":"a","seconds":{"n":4}}'),
      remix: await call('POST', '/v1/videos/video_1/remix', '{"prompt":5}'),
      generation: await call('POST', '/v1/video/generations', '{"model":"m","prompt":"a","metadata":[1]}'),
    };
    const statuses = Object.fromEntries(Object.entries(posts).map(([k, v]) => [k, v.status]));
    expect(statuses).toEqual({
      mj: 400,
      mjList: 400,
      suno: 400,
      sunoFetch: 400,
      kling: 400,
      jimeng: 400,
      video: 400,
      remix: 400,
      generation: 400,
    });
    expect(posts.mj.body).toMatchObject({ code: 4, description: expect.stringMatching(/^请求体 prompt 无效：/) });
    expect(posts.mjList.body).toMatchObject({ code: 4, description: expect.stringMatching(/^请求体 ids 无效：/) });
    expect(posts.suno.body).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/^请求体 prompt 无效：/),
    });
    expect(posts.sunoFetch.body).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/^请求体 ids 无效/),
    });
    expect(posts.kling.body).toMatchObject({ code: 1201, message: expect.stringMatching(/^请求体 duration 无效：/) });
    expect(posts.jimeng.body).toMatchObject({ message: expect.stringMatching(/^请求体 prompt 无效：/) });
    expect(posts.video.body).toMatchObject({ error: { message: expect.stringMatching(/^请求体 seconds 无效：/) } });
    expect(posts.remix.body).toMatchObject({ error: { message: expect.stringMatching(/^请求体 prompt 无效：/) } });
    expect(posts.generation.body).toMatchObject({
      error: { message: expect.stringMatching(/^请求体 metadata 无效：/) },
    });
    expect((await s.wallet.getWallet({ userId })).wallet?.quota).toBe(wallet?.quota);
  });
});
