import type { Stack } from '@aigw/local-stack/stack';
import { eventually } from '@aigw/testkit';
import { Api, setOptions, startMoneyStack, userApi } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface TokenJson {
  id: number;
  name: string;
  key: string;
  status: number;
  remain_quota: number;
  used_quota: number;
  unlimited_quota: boolean;
  expired_time: number;
  allow_ips: string;
  model_limits_enabled: boolean;
  model_limits: string;
  group: string;
}
interface Page<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
}

describe('tokens through the gateway', () => {
  let stack: Stack;
  let alice: Api;
  let bob: Api;
  beforeAll(async () => {
    stack = await startMoneyStack();
    alice = (await userApi(stack)).api;
    bob = (await userApi(stack)).api;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('when nobody is logged in, then token calls answer 401', async () => {
    const anonymous = new Api(stack.gatewayUrl);
    expect((await anonymous.get('/token/')).status).toBe(401);
    expect((await anonymous.post('/token/', { name: 'x' })).status).toBe(401);
  });

  it('when a token is created, then it has a 48-character key, the defaults and shows in the list', async () => {
    const res = await alice.post<TokenJson[]>('/token/', { name: 'first', remain_quota: 500000, expired_time: -1 });
    expect(res.body.success).toBe(true);
    const [t] = res.body.data ?? [];
    expect(t?.key).toMatch(/^[0-9a-zA-Z]{48}$/);
    expect(t).toMatchObject({
      name: 'first',
      status: 1,
      remain_quota: 500000,
      used_quota: 0,
      expired_time: -1,
      group: '',
    });
    const list = await alice.get<Page<TokenJson>>('/token/', { p: '1', size: '10' });
    expect(list.body.data?.items.map((i) => i.id)).toContain(t?.id);
    expect(list.body.data).toMatchObject({ page: 1, page_size: 10 });
  });

  it('when count is 3, then three tokens are made and the extra names carry a 6-character suffix', async () => {
    const res = await alice.post<TokenJson[]>('/token/', { name: 'batch', remain_quota: 10, count: 3 });
    expect(res.body.message).toBe('3 个令牌创建成功');
    const names = (res.body.data ?? []).map((t) => t.name);
    expect(names[0]).toBe('batch');
    expect(names.slice(1).every((n) => /^batch-[0-9a-zA-Z]{6}$/.test(n))).toBe(true);
    expect(new Set((res.body.data ?? []).map((t) => t.key)).size).toBe(3);
  });

  it('when the input is invalid, then the Chinese message says why', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: '' }, '令牌名称不能为空'],
      [{ name: 'x', allow_ips: '10.0.0.1\nnot-an-ip' }, 'IP 白名单格式错误：not-an-ip'],
      [{ name: 'x', group: 'nope' }, '分组 nope 不可用'],
      [{ name: 'x', expired_time: 1000 }, '过期时间不能早于当前时间'],
      [{ name: 'x', remain_quota: -5 }, '额度必须为非负整数'],
      [{ name: 'x', count: 101 }, '一次最多创建 100 个令牌'],
    ];
    for (const [input, message] of cases) {
      const res = await alice.post('/token/', input);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: false, message });
    }
    // Not a number at all: refused by the /api schema (400), with the spec's message.
    const soon = await alice.post('/token/', { name: 'x', expired_time: 'soon' });
    expect(soon.status).toBe(400);
    expect(soon.body).toEqual({ success: false, message: '过期时间格式错误！' });
  });

  it('when limits, IPs, a usable group and unlimited quota are set, then they are stored normalised', async () => {
    const res = await alice.post<TokenJson[]>('/token/', {
      name: 'limited',
      unlimited_quota: true,
      model_limits_enabled: true,
      model_limits: ['gpt-4o', 'gpt-4o-mini', 'gpt-4o'],
      allow_ips: ' 10.0.0.1 \n192.168.0.0/16\n',
      group: 'vip',
      expired_time: Math.floor(Date.now() / 1000) + 3600,
    });
    expect(res.body.data?.[0]).toMatchObject({
      unlimited_quota: true,
      status: 1,
      model_limits: 'gpt-4o,gpt-4o-mini',
      allow_ips: '10.0.0.1\n192.168.0.0/16',
      group: 'vip',
    });
  });

  it('when tokens are searched, then the name keyword and the key (with or without sk-) both find them', async () => {
    const [t] = (await alice.post<TokenJson[]>('/token/', { name: 'findme-xyz', remain_quota: 1 })).body.data ?? [];
    const byName = await alice.get<Page<TokenJson>>('/token/search', { keyword: 'findme' });
    expect(byName.body.data?.items.map((i) => i.id)).toEqual([t?.id]);
    const byKey = await alice.get<Page<TokenJson>>('/token/search', { token: `sk-${t?.key.slice(0, 20)}` });
    expect(byKey.body.data?.items.map((i) => i.id)).toEqual([t?.id]);
    const otherUser = await bob.get<Page<TokenJson>>('/token/search', { keyword: 'findme' });
    expect(otherUser.body.data?.items).toEqual([]);
  });

  it('when a token is edited and toggled, then only given fields change and the new status comes back', async () => {
    const [t] = (await alice.post<TokenJson[]>('/token/', { name: 'edit-me', remain_quota: 100 })).body.data ?? [];
    const upd = await alice.put<TokenJson>('/token/', { id: t?.id, name: 'edited', remain_quota: 250 });
    expect(upd.body.data).toMatchObject({ name: 'edited', remain_quota: 250, key: t?.key });
    const off = await alice.put<TokenJson>('/token/', { id: t?.id, status: 2 }, { status_only: 'true' });
    expect(off.body.data?.status).toBe(2);
    const on = await alice.put<TokenJson>('/token/', { id: t?.id, status: 1 }, { status_only: 'true' });
    expect(on.body.data?.status).toBe(1);
    expect((await alice.get<TokenJson>(`/token/${t?.id}`)).body.data?.name).toBe('edited');
  });

  it('when a token is exhausted, then it shows status 4 and cannot be enabled until it has quota', async () => {
    const [t] = (await alice.post<TokenJson[]>('/token/', { name: 'empty', remain_quota: 0 })).body.data ?? [];
    expect(t?.status).toBe(4);
    await alice.put('/token/', { id: t?.id, status: 2 }, { status_only: 'true' });
    const on = await alice.put('/token/', { id: t?.id, status: 1 }, { status_only: 'true' });
    expect(on.body).toMatchObject({ success: false, message: expect.stringContaining('令牌可用额度已用尽') });
  });

  it('when another user asks for, edits or deletes a token, then it is not found', async () => {
    const [t] = (await alice.post<TokenJson[]>('/token/', { name: 'private', remain_quota: 1 })).body.data ?? [];
    expect((await bob.get(`/token/${t?.id}`)).body).toMatchObject({ success: false, message: '令牌不存在' });
    expect((await bob.put('/token/', { id: t?.id, name: 'stolen' })).body.success).toBe(false);
    expect((await bob.del(`/token/${t?.id}/`)).body.success).toBe(false);
    expect((await alice.get<TokenJson>(`/token/${t?.id}`)).body.data?.name).toBe('private');
  });

  it('when a token is deleted, then it is gone', async () => {
    const [t] = (await alice.post<TokenJson[]>('/token/', { name: 'bye', remain_quota: 1 })).body.data ?? [];
    expect((await alice.del(`/token/${t?.id}/`)).body.success).toBe(true);
    expect((await alice.get(`/token/${t?.id}`)).body.success).toBe(false);
  });

  it('when special usable groups open a group to the user group, then its users may pick it at their GroupGroupRatio and others are refused', async () => {
    await setOptions(stack, {
      GroupRatio: '{"default":1,"vip":1,"svip":1,"lab":3}',
      UserUsableGroups: '{"default":"默认分组","vip":"vip分组","auto":"自动分组"}',
      'group_ratio_setting.group_special_usable_group': '{"default":{"+:lab":"实验分组"}}',
      GroupGroupRatio: '{"default":{"lab":1.5}}',
    });
    const groups = await eventually(
      () => alice.get<Record<string, unknown>>('/user/self/groups'),
      (r) => JSON.stringify(r.body.data).includes('1.5'),
    );
    expect(groups.body.data).toEqual({
      default: { ratio: 1, desc: '默认分组' },
      vip: { ratio: 1, desc: 'vip分组' },
      lab: { ratio: 1.5, desc: '实验分组' },
      auto: { ratio: '自动', desc: '自动分组' },
    });
    const [lab] = (await alice.post<TokenJson[]>('/token/', { name: 'lab', group: 'lab' })).body.data ?? [];
    expect(lab?.group).toBe('lab');
    type WithRetry = TokenJson & { cross_group_retry: boolean };
    const [auto] =
      (await alice.post<WithRetry[]>('/token/', { name: 'auto', group: 'auto', cross_group_retry: true })).body.data ??
      [];
    expect(auto).toMatchObject({ group: 'auto', cross_group_retry: true });
    // Cross-group retry belongs to auto tokens: it goes off when the token leaves auto.
    const moved = await alice.put<WithRetry>('/token/', { id: auto?.id, group: 'lab' });
    expect(moved.body.data).toMatchObject({ group: 'lab', cross_group_retry: false });
    // The pricing page shows a signed-in user what they pay; visitors GroupRatio.
    const own = await alice.get<unknown>('/pricing');
    expect((own.body as unknown as { group_ratio: Record<string, number> }).group_ratio).toEqual({
      default: 1,
      vip: 1,
      lab: 1.5,
    });
    const visitor = (await (await fetch(`${stack.gatewayUrl}/api/pricing`)).json()) as { group_ratio: object };
    expect(visitor.group_ratio).toMatchObject({ lab: 3 });
    // A vip user has no special groups: lab is not theirs, on create or on edit.
    const vip = (await userApi(stack, { group: 'vip' })).api;
    expect((await vip.get<Record<string, unknown>>('/user/self/groups')).body.data).not.toHaveProperty('lab');
    expect((await vip.post('/token/', { name: 'x', group: 'lab' })).body).toMatchObject({
      success: false,
      message: '分组 lab 不可用',
    });
    const [mine] = (await vip.post<TokenJson[]>('/token/', { name: 'mine' })).body.data ?? [];
    expect((await vip.put('/token/', { id: mine?.id, group: 'lab' })).body).toMatchObject({
      success: false,
      message: '分组 lab 不可用',
    });
    expect((await vip.get<TokenJson>(`/token/${mine?.id}`)).body.data?.group).toBe('');
  });
});
