import type { Stack } from '@aigw/local-stack/stack';
import { type Api, rootApi, startMoneyStack, userApi } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw } from './hardening-raw.ts';

/**
 * Issue 10 item 7: bad /api input gets a 400 with a clear message (not a 500, not a business 200,
 * never a record reached through a loosely parsed id), oversize bodies a 413, and no client-built
 * object reaches a service call.
 */
interface CodeJson {
  id: number;
  key: string;
}
interface Page<T> {
  items: T[];
}

describe('/api input validation', () => {
  let stack: Stack;
  let root: Api;
  let admin: Api;
  let user: { api: Api; id: number };

  beforeAll(async () => {
    stack = await startMoneyStack(['logs']);
    root = await rootApi(stack);
    admin = (await userApi(stack, { role: 10 })).api;
    user = await userApi(stack);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const codes = async () =>
    (await admin.get<Page<CodeJson>>('/redemption/', { p: '1', page_size: '100' })).body.data?.items ?? [];

  const expect400 = (res: { status: number; body: { success: boolean; message: string } }) => {
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.message.length).toBeGreaterThan(0);
  };

  it('when JSON bodies are malformed, then each answers 400 with a message', async () => {
    const bodies = ['{', '{"username":', "{'a':1}", '{"a":1,}', 'nul', '[1,', '{"a":"\\x"}', '\u0000', '{"a":1}}'];
    for (const body of bodies) {
      const res = await raw(stack.gatewayUrl, {
        method: 'POST',
        path: '/api/user/login',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(res.status, body).toBe(400);
      expect(res.json()).toEqual({ success: false, message: '请求体不是合法的 JSON' });
    }
  });

  it('when a body is larger than the limit, then 413 answers, not a 429 from gRPC', async () => {
    const res = await raw(stack.gatewayUrl, {
      method: 'POST',
      path: '/api/user/login',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'x', password: 'y'.repeat(5 * 1024 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect(res.json()).toEqual({ success: false, message: '请求体过大' });
  });

  it('when ids are not plain positive integers, then 400 answers and no record is touched', async () => {
    const created = await admin.post<string[]>('/redemption/', { name: 'ids', quota: 1, count: 3 });
    expect(created.body.success).toBe(true);
    const before = await codes();
    const target = before[0] as CodeJson;
    const forms = [
      `0x${target.id.toString(16)}`,
      `${target.id}e0`,
      `%20${target.id}`,
      `+${target.id}`,
      `0${target.id}`,
      `${target.id}.0`,
      '0',
      '-1',
      '9007199254740993',
    ];
    for (const form of forms) {
      expect400(await admin.call('DELETE', `/redemption/${form}`));
      expect400(await admin.get(`/redemption/${form}`));
      expect400(await user.api.get(`/token/${form}`));
    }
    expect((await codes()).map((c) => c.id)).toEqual(before.map((c) => c.id));
    for (const id of [`0x${target.id.toString(16)}`, `${target.id}e0`, ` ${target.id}`, { $gt: 0 }, [target.id], 1.5]) {
      expect400(await admin.put('/redemption/', { id, name: 'hacked' }));
      expect400(await admin.put('/redemption/', { id, status: 2 }, { status_only: 'true' }));
    }
    expect((await codes()).map((c) => c.id)).toEqual(before.map((c) => c.id));
  });

  it('when numbers are fractional, NaN or out of range, then 400 answers', async () => {
    expect400(await admin.post('/redemption/', { name: 'x', quota: 1, count: 2.5 }));
    expect400(await admin.post('/redemption/', { name: 'x', quota: 2 ** 53 + 2, count: 1 }));
    expect400(await admin.post('/redemption/', { name: 'x', quota: 'NaN', count: 1 }));
    expect400(await admin.post('/redemption/', { name: 'x', quota: '1e3', count: 1 }));
    expect400(await root.put('/user/', { id: user.id, quota: 2 ** 53 + 10 }));
    expect400(await root.put('/user/', { id: user.id, quota: 1.5 }));
    expect400(await admin.get('/redemption/', { p: '99999999999' }));
    expect400(await admin.get('/user/', { p: 'NaN' }));
    expect400(await user.api.post('/token/', { name: 'x', remain_quota: 1e300 }));
    expect400(await user.api.get('/log/self', { start_timestamp: '1e12' }));
    // In-range values that the services judge keep their business answers (spec messages).
    const many = await admin.post('/redemption/', { name: 'x', quota: 1, count: 101 });
    expect(many.status).toBe(200);
    expect(many.body.message).toBe('一次兑换码批量生成的个数不能大于 100');
  });

  it('when objects stand where scalars belong, then 400 answers and the database keeps serving', async () => {
    const injections: [Api, string, string, unknown][] = [
      [admin, 'PUT', '/redemption/', { id: { $gt: 0 }, name: 'x' }],
      [root, 'POST', '/user/manage', { id: { $gt: 0 }, action: 'disable' }],
      [root, 'PUT', '/user/', { id: { $ne: null }, quota: 1 }],
      [user.api, 'PUT', '/token/', { id: { $gt: 0 }, name: 'x' }],
      [user.api, 'POST', '/user/topup', { key: { $ne: '' } }],
      [root, 'POST', '/channel/batch', { ids: [{ $gt: 0 }] }],
      [root, 'PUT', '/option/', { key: { $ne: '' }, value: 'x' }],
      [user.api, 'PUT', '/user/self', { username: { $gt: '' } }],
    ];
    for (const [api, method, path, body] of injections) expect400(await api.call(method, path, body));
    const login = await raw(stack.gatewayUrl, {
      method: 'POST',
      path: '/api/user/login',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: { $gt: '' }, password: { $gt: '' } }),
    });
    expect(login.status).toBe(400);
    expect((await admin.get('/user/self')).body.success).toBe(true);
    expect((await codes()).length).toBeGreaterThan(0);
  });

  it('when a body is an array, a scalar or not JSON at all, then 400 or 415 answers', async () => {
    expect400(await user.api.post('/token/', [{ name: 'x' }]));
    expect400(await user.api.post('/token/', 'x'));
    const text = await raw(stack.gatewayUrl, {
      method: 'POST',
      path: '/api/user/login',
      headers: { 'content-type': 'text/plain' },
      body: 'root 123456',
    });
    expect(text.status).toBe(415);
  });
});
