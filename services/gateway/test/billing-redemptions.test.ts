import { connectMongo } from '@aigw/common';
import type { Stack } from '@aigw/local-stack/stack';
import { type Api, rootApi, startMoneyStack, userApi } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface CodeJson {
  id: number;
  name: string;
  key: string;
  status: number;
  quota: number;
  used_user_id: number;
  redeemed_time: number;
  expired_time: number;
}
interface Page<T> {
  items: T[];
  total: number;
}

describe('redemption codes through the gateway', () => {
  let stack: Stack;
  let admin: Api;
  let user: { api: Api; id: number };
  beforeAll(async () => {
    stack = await startMoneyStack();
    admin = (await userApi(stack, { role: 10 })).api;
    user = await userApi(stack);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const create = async (name: string, quota: number, count = 1) => {
    const res = await admin.post<string[]>('/redemption/', { name, quota, count });
    expect(res.body.success).toBe(true);
    return res.body.data ?? [];
  };
  const findByKey = async (key: string) => {
    const list = await admin.get<Page<CodeJson>>('/redemption/', { p: '1', page_size: '100' });
    return list.body.data?.items.find((c) => c.key === key);
  };
  const balance = async (api: Api) => (await api.get<{ quota: number }>('/user/self')).body.data?.quota ?? 0;

  it('when an admin creates codes, then the answer lists the 32-hex keys and the list shows them unused', async () => {
    const keys = await create('促销', 100000, 3);
    expect(keys).toHaveLength(3);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f]{32}$/);
    const code = await findByKey(keys[0] as string);
    expect(code).toMatchObject({ name: '促销', status: 1, quota: 100000, used_user_id: 0 });
  });

  it('when the input is invalid, then the Chinese message says why', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: '', quota: 1, count: 1 }, '兑换码名称不能为空'],
      [{ name: 'x'.repeat(21), quota: 1, count: 1 }, '兑换码名称长度不能超过 20 个字符'],
      [{ name: 'x', quota: 0, count: 1 }, '额度必须为正整数'],
      [{ name: 'x', quota: 1, count: 101 }, '一次兑换码批量生成的个数不能大于 100'],
    ];
    for (const [input, message] of cases) {
      expect((await admin.post('/redemption/', input)).body).toMatchObject({ success: false, message });
    }
  });

  it('when a common user calls the admin routes, then 403', async () => {
    expect((await user.api.get('/redemption/')).status).toBe(403);
    expect((await user.api.post('/redemption/', { name: 'x', quota: 1, count: 1 })).status).toBe(403);
  });

  it('when codes are searched, got, edited, toggled and deleted, then each answers as the spec says', async () => {
    const [key] = await create('search-me', 500);
    const code = (await findByKey(key as string)) as CodeJson;
    const byName = await admin.get<Page<CodeJson>>('/redemption/search', { keyword: 'search-me' });
    expect(byName.body.data?.items.map((c) => c.id)).toEqual([code.id]);
    const byId = await admin.get<Page<CodeJson>>('/redemption/search', { keyword: String(code.id) });
    expect(byId.body.data?.items.map((c) => c.id)).toContain(code.id);
    expect((await admin.get<CodeJson>(`/redemption/${code.id}`)).body.data?.key).toBe(key);
    const edited = await admin.put<CodeJson>('/redemption/', { id: code.id, name: 'renamed', quota: 700 });
    expect(edited.body.data).toMatchObject({ name: 'renamed', quota: 700 });
    const off = await admin.put<CodeJson>('/redemption/', { id: code.id, status: 2 }, { status_only: 'true' });
    expect(off.body.data?.status).toBe(2);
    expect((await user.api.post('/user/topup', { key })).body).toMatchObject({
      success: false,
      message: '该兑换码已被禁用',
    });
    expect((await admin.put('/redemption/', { id: code.id, name: 'x' })).body.message).toBe('只能编辑未使用的兑换码');
    await admin.put('/redemption/', { id: code.id, status: 1 }, { status_only: 'true' });
    expect((await admin.del(`/redemption/${code.id}/`)).body.success).toBe(true);
    expect((await admin.get(`/redemption/${code.id}`)).body.success).toBe(false);
  });

  it('when a user redeems a code, then the quota is added once, the code turns used and cannot change', async () => {
    const [key] = await create('once', 12345);
    const before = await balance(user.api);
    const res = await user.api.post<number>('/user/topup', { key });
    expect(res.body).toMatchObject({ success: true, data: 12345 });
    expect(await balance(user.api)).toBe(before + 12345);
    const code = (await findByKey(key as string)) as CodeJson;
    expect(code).toMatchObject({ status: 3, used_user_id: user.id });
    expect((await user.api.post('/user/topup', { key })).body).toMatchObject({
      success: false,
      message: '该兑换码已被使用',
    });
    expect((await admin.put('/redemption/', { id: code.id, name: 'late' })).body.success).toBe(false);
    expect((await admin.put('/redemption/', { id: code.id, status: 1 }, { status_only: 'true' })).body.success).toBe(
      false,
    );
    expect((await user.api.post('/user/topup', { key: '' })).body.message).toBe('请输入兑换码！');
    expect((await user.api.post('/user/topup', { key: 'f'.repeat(32) })).body.message).toBe('无效的兑换码');
  });

  it('when 50 redeems of one code race (from 5 users), then exactly one succeeds and only that wallet grows', async () => {
    const [key] = await create('race', 777);
    const racers = await Promise.all(Array.from({ length: 5 }, () => userApi(stack)));
    const before = await Promise.all(racers.map((r) => balance(r.api)));
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (racers[i % 5] as { api: Api }).api.post<number>('/user/topup', { key })),
    );
    const wins = answers.filter((a) => a.body.success);
    expect(wins).toHaveLength(1);
    expect(answers.filter((a) => !a.body.success).every((a) => a.body.message === '该兑换码已被使用')).toBe(true);
    const after = await Promise.all(racers.map((r) => balance(r.api)));
    const gained = after.map((a, i) => a - (before[i] ?? 0));
    expect(gained.filter((g) => g !== 0)).toEqual([777]);
    const code = (await findByKey(key as string)) as CodeJson;
    expect(racers.map((r) => r.id)).toContain(code.used_user_id);
  });

  it('when a code has expired, then redeeming it is refused, and deleting invalid codes removes used, disabled and expired ones only', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(
      (await admin.post('/redemption/', { name: 'past', quota: 1, count: 1, expired_time: now - 10 })).body,
    ).toEqual({
      success: false,
      message: '过期时间不能早于当前时间',
    });
    const [valid, used, disabled, expiring, later] = [
      ...(await create('keep', 10)),
      ...(await create('used', 10)),
      ...(await create('off', 10)),
      ...(await admin.post<string[]>('/redemption/', { name: 'exp', quota: 10, count: 1, expired_time: now + 3600 }))
        .body.data!,
      ...(await admin.post<string[]>('/redemption/', { name: 'later', quota: 10, count: 1, expired_time: now + 7200 }))
        .body.data!,
    ] as [string, string, string, string, string];
    expect((await findByKey(expiring!))?.expired_time).toBe(now + 3600);
    const edited = await admin.put<CodeJson>('/redemption/', { id: (await findByKey(later))!.id, expired_time: 0 });
    expect(edited.body.data).toMatchObject({ expired_time: 0 });
    expect(
      (await admin.put('/redemption/', { id: (await findByKey(later))!.id, expired_time: now - 5 })).body.message,
    ).toBe('过期时间不能早于当前时间');
    expect((await user.api.post('/user/topup', { key: used })).body.success).toBe(true);
    await admin.put('/redemption/', { id: (await findByKey(disabled))!.id, status: 2 }, { status_only: 'true' });
    // The expiry passes: the stored code is what an hour-old code looks like.
    const db = await connectMongo(stack.env.MONGO_URL as string, `aigw_billing_${stack.id}`);
    try {
      await db.collection('redemptions').updateOne({ key: expiring }, { $set: { expired_time: now - 60 } });
    } finally {
      await db.close();
    }
    const before = await balance(user.api);
    expect((await user.api.post('/user/topup', { key: expiring })).body).toEqual({
      success: false,
      message: '该兑换码已过期',
    });
    expect(await balance(user.api)).toBe(before);

    expect((await user.api.del('/redemption/invalid')).status).toBe(403);
    const removed = await admin.del<number>('/redemption/invalid');
    expect(removed.body.success).toBe(true);
    expect(removed.body.data).toBeGreaterThanOrEqual(3);
    const left = (await admin.get<Page<CodeJson>>('/redemption/', { p: '1', page_size: '100' })).body.data!.items;
    const keys = left.map((c) => c.key);
    expect(keys).toEqual(expect.arrayContaining([valid, later]));
    for (const gone of [used, disabled, expiring]) expect(keys).not.toContain(gone);
    expect(left.every((c) => c.status === 1)).toBe(true);
    expect((await admin.del<number>('/redemption/invalid')).body.data).toBe(0);
  });

  it('when root asks, then root may manage codes too', async () => {
    const root = await rootApi(stack);
    expect((await root.get('/redemption/')).body.success).toBe(true);
  });
});
