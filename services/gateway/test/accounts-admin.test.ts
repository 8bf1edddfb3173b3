import type { Stack } from '@aigw/local-stack/stack';
import { eventually } from '@aigw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, newUser, rootClient, startAccountsStack, uniqueUsername } from './accounts-harness.ts';

interface UserData {
  id: number;
  username: string;
  display_name: string;
  role: number;
  status: number;
  group: string;
  quota: number;
  DeletedAt: string | null;
}
interface PageData {
  items: UserData[];
  total: number;
  page: number;
  page_size: number;
}

/** User administration: list, search, get, create, update, manage, and who may do what. */
describe('accounts: user administration', () => {
  let stack: Stack;
  let url: string;
  let root: Client;
  /** An admin (role 10) made by root through the API. */
  let admin: Client;
  let adminId: number;

  beforeAll(async () => {
    stack = await startAccountsStack();
    url = stack.gatewayUrl;
    root = await rootClient(url);
    const made = await newUser(url);
    const promoted = await root.post('/user/manage', { id: made.id, action: 'promote' });
    expect(promoted.body).toEqual({ success: true, message: '操作成功完成！', data: { status: 1, role: 10 } });
    admin = made.client;
    adminId = made.id;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('when an ordinary user calls admin routes, then each answers 403', async () => {
    const { client, id } = await newUser(url);
    for (const [method, path, body] of [
      ['GET', '/user/', undefined],
      ['GET', '/user/search', undefined],
      ['GET', `/user/${id}`, undefined],
      ['POST', '/user/', { username: 'x', password: 'password123' }],
      ['PUT', '/user/', { id, group: 'vip' }],
      ['POST', '/user/manage', { id, action: 'promote' }],
      ['DELETE', `/user/${id}`, undefined],
      ['GET', '/group/', undefined],
    ] as const) {
      const res = await client.call(method, path, { body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body).toEqual({ success: false, message: '无权进行此操作，权限不足' });
    }
  });

  it('when an admin calls root-only routes, then they answer 403', async () => {
    expect((await admin.get('/option/')).status).toBe(403);
    expect((await admin.put('/option/', { key: 'SystemName', value: 'x' })).status).toBe(403);
    expect((await admin.get('/user/')).status).toBe(200);
  });

  it('when users are listed, then pages of at most page_size come newest first with wallet fields and no secrets', async () => {
    for (let i = 0; i < 11; i++) await root.post('/user/', { username: uniqueUsername('p'), password: 'password123' });
    const first = await admin.get<PageData>('/user/', { p: '1', page_size: '10' });
    expect(first.body.success).toBe(true);
    expect(first.body.data!.items).toHaveLength(10);
    expect(first.body.data).toMatchObject({ page: 1, page_size: 10 });
    expect(first.body.data!.total).toBeGreaterThanOrEqual(13);
    const ids = first.body.data!.items.map((u) => u.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    expect(first.body.data!.items[0]).toHaveProperty('quota');
    expect(first.body.data!.items[0]).not.toHaveProperty('password');
    expect(first.body.data!.items[0]).not.toHaveProperty('access_token');
    const second = await admin.get<PageData>('/user/', { p: '2', page_size: '10' });
    expect(second.body.data!.items.length).toBeGreaterThanOrEqual(3);
    expect(second.body.data!.items.map((u) => u.id)).not.toContain(ids[0]);
    const capped = await admin.get<PageData>('/user/', { page_size: '1000' });
    expect(capped.body.data!.page_size).toBe(100);
  });

  it('when users are searched, then the keyword matches names and ids and the group filters', async () => {
    const name = uniqueUsername('srch');
    await root.post('/user/', { username: name, display_name: '搜索对象', password: 'password123', group: 'vip' });
    const byName = await admin.get<PageData>('/user/search', { keyword: name.slice(0, 8) });
    expect(byName.body.data!.items.map((u) => u.username)).toContain(name);
    const found = (byName.body.data?.items ?? []).find((u) => u.username === name)!;
    expect(found).toMatchObject({ display_name: '搜索对象', group: 'vip' });
    const byDisplay = await admin.get<PageData>('/user/search', { keyword: '搜索对象' });
    expect(byDisplay.body.data!.items.map((u) => u.id)).toEqual([found.id]);
    const byId = await admin.get<PageData>('/user/search', { keyword: String(found.id) });
    expect(byId.body.data!.items.map((u) => u.id)).toContain(found.id);
    const vip = await admin.get<PageData>('/user/search', { keyword: '', group: 'vip' });
    expect(vip.body.data!.items.every((u) => u.group === 'vip')).toBe(true);
    expect(vip.body.data!.items.map((u) => u.id)).toContain(found.id);
    const none = await admin.get<PageData>('/user/search', { keyword: name, group: 'default' });
    expect(none.body.data!.items).toEqual([]);
  });

  it('when an admin gets users, then lower roles are shown and equal or higher ones refused', async () => {
    const { id } = await newUser(url);
    expect((await admin.get<UserData>(`/user/${id}`)).body.data?.id).toBe(id);
    const rootRead = await admin.get('/user/1');
    expect(rootRead.status).toBe(403);
    expect(rootRead.body.message).toBe('无权获取同级或更高等级用户的信息');
    expect((await root.get<UserData>(`/user/${adminId}`)).body.data?.role).toBe(10);
    expect((await admin.get('/user/999999')).body).toEqual({ success: false, message: '用户不存在' });
  });

  it('when an admin creates users, then names and passwords are checked and roles stay below the admin', async () => {
    expect((await admin.post('/user/', { username: '', password: '' })).body).toEqual({
      success: false,
      message: '用户名和密码不能为空',
    });
    expect((await admin.post('/user/', { username: 'shorty', password: 'short' })).body.message).toBe(
      '密码长度不得小于 8 位！',
    );
    const asAdmin = await admin.post('/user/', { username: uniqueUsername(), password: 'password123', role: 10 });
    expect(asAdmin.status).toBe(403);
    expect(asAdmin.body.message).toBe('无法创建权限大于等于自己的用户');
    const username = uniqueUsername('new');
    const created = await admin.post('/user/', { username, display_name: '新用户', password: 'password123' });
    expect(created.body).toEqual({ success: true, message: '用户账户创建成功！' });
    const login = await new Client(url).login(username, 'password123');
    expect(login.body.data).toMatchObject({ username, display_name: '新用户', role: 1, group: 'default' });
    expect((await admin.post('/user/', { username, password: 'password123' })).body.message).toBe(
      '用户名已存在，或已注销',
    );
  });

  it('when an admin edits a user, then group, quota and password change and the old sessions end', async () => {
    const target = await newUser(url);
    const bad = await admin.put('/user/', { id: target.id, quota: 1.5 });
    expect(bad.body).toEqual({ success: false, message: '额度必须是整数' });
    const res = await admin.put('/user/', {
      id: target.id,
      username: target.username,
      display_name: '改过的名字',
      group: 'vip',
      quota: 123456,
      password: 'changed-pass1',
    });
    expect(res.body).toEqual({ success: true, message: '用户信息更新成功！' });
    const seen = await eventually(
      () => admin.get<UserData>(`/user/${target.id}`),
      (r) => r.body.data?.quota === 123456,
    );
    expect(seen.body.data).toMatchObject({ display_name: '改过的名字', group: 'vip', quota: 123456 });
    expect((await target.client.get('/user/self')).status).toBe(401);
    const relogin = new Client(url);
    expect((await relogin.login(target.username, 'changed-pass1')).body.data?.role).toBe(1);
    // The quota modal adds to the shown value (negative allowed) and saves the result.
    await admin.put('/user/', { id: target.id, quota: 123456 - 456 });
    expect((await relogin.get<UserData>('/user/self')).body.data?.quota).toBe(123000);
    // Without a password the password stays.
    await admin.put('/user/', { id: target.id, display_name: '再改', password: '' });
    expect((await new Client(url).login(target.username, 'changed-pass1')).body.success).toBe(true);
  });

  it('when an admin writes a remark on a user, then admins see it in the user and the lists, the user does not', async () => {
    const { client, id, username } = await newUser(url);
    expect((await admin.put('/user/', { id, remark: '  大客户，月结  ' })).body.success).toBe(true);
    const got = await admin.get<UserData & { remark: string }>(`/user/${id}`);
    expect(got.body.data).toMatchObject({ id, remark: '大客户，月结' });
    const found = await admin.get<{ items: (UserData & { remark: string })[] }>('/user/search', { keyword: username });
    expect(found.body.data!.items.find((u) => u.id === id)?.remark).toBe('大客户，月结');
    expect((await client.get('/user/self')).body.data).not.toHaveProperty('remark');
    expect((await admin.put('/user/', { id, remark: 'x'.repeat(256) })).body).toEqual({
      success: false,
      message: '备注长度不能超过 255 个字符',
    });
    expect((await admin.put('/user/', { id, display_name: 'other' })).body.success).toBe(true);
    expect((await admin.get<{ remark: string }>(`/user/${id}`)).body.data!.remark).toBe('大客户，月结');
  });

  it('when an admin edits or manages a user of equal or higher role, then it is refused', async () => {
    const other = await newUser(url);
    await root.post('/user/manage', { id: other.id, action: 'promote' });
    const edit = await admin.put('/user/', { id: other.id, display_name: 'x' });
    expect(edit.status).toBe(403);
    expect(edit.body.message).toBe('无权更新同权限等级或更高权限等级的用户信息');
    for (const action of ['disable', 'demote', 'delete', 'enable']) {
      const res = await admin.post('/user/manage', { id: other.id, action });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe('无权更新同权限等级或更高权限等级的用户信息');
    }
    expect((await admin.post('/user/manage', { id: 1, action: 'disable' })).body.message).toBe(
      '无权更新同权限等级或更高权限等级的用户信息',
    );
    const common = await newUser(url);
    const promote = await admin.post('/user/manage', { id: common.id, action: 'promote' });
    expect(promote.status).toBe(403);
    expect(promote.body.message).toBe('普通管理员用户无法提升其他用户为管理员');
    const raise = await admin.put('/user/', { id: common.id, role: 10 });
    expect(raise.body.message).toBe('无权将其他用户权限等级提升到大于等于自己的权限等级');
  });

  it('when root manages users, then promote, demote, disable, enable and delete return the new status and role', async () => {
    const target = await newUser(url);
    const id = target.id;
    expect((await root.post('/user/manage', { id, action: 'promote' })).body.data).toEqual({ status: 1, role: 10 });
    expect((await target.client.get('/user/')).status).toBe(200); // the session follows the new role
    expect((await root.post('/user/manage', { id, action: 'promote' })).body).toEqual({
      success: false,
      message: '该用户已经是管理员',
    });
    expect((await root.post('/user/manage', { id, action: 'demote' })).body.data).toEqual({ status: 1, role: 1 });
    expect((await target.client.get('/user/')).status).toBe(403);
    expect((await root.post('/user/manage', { id, action: 'demote' })).body.message).toBe('该用户已经是普通用户');

    expect((await root.post('/user/manage', { id, action: 'disable' })).body.data).toEqual({ status: 2, role: 1 });
    expect((await target.client.get('/user/self')).status).toBe(401);
    expect(
      (await new Client(url).post('/user/login', { username: target.username, password: 'password123' })).body.message,
    ).toBe('用户名或密码错误，或用户已被封禁');
    expect((await root.post('/user/manage', { id, action: 'enable' })).body.data).toEqual({ status: 1, role: 1 });
    expect((await new Client(url).login(target.username, 'password123')).body.success).toBe(true);

    expect((await root.post('/user/manage', { id, action: 'delete' })).body.success).toBe(true);
    const listed = await root.get<PageData>('/user/search', { keyword: target.username });
    expect(listed.body.data?.items[0]?.DeletedAt).toMatch(/^\d{4}-/);
    expect(
      (await new Client(url).post('/user/login', { username: target.username, password: 'password123' })).body.success,
    ).toBe(false);
    expect((await root.post('/user/manage', { id, action: 'enable' })).body.message).toBe('用户不存在');
    expect((await root.post('/user/manage', { id, action: 'explode' })).body.message).toBe('无效的操作');
  });

  it('when root is the target, then it can be neither demoted, disabled nor deleted', async () => {
    expect((await root.post('/user/manage', { id: 1, action: 'demote' })).body.message).toBe('无法降级超级管理员用户');
    expect((await root.post('/user/manage', { id: 1, action: 'disable' })).body.message).toBe('无法禁用超级管理员用户');
    expect((await root.post('/user/manage', { id: 1, action: 'delete' })).body.message).toBe('无法删除超级管理员用户');
    expect((await root.del('/user/1')).body.message).toBe('无法删除超级管理员用户');
    expect((await root.get<UserData>('/user/self')).body.data).toMatchObject({ role: 100, status: 1 });
  });

  it('when an admin deletes a user by id, then it is soft-deleted and its sessions end', async () => {
    const target = await newUser(url);
    expect((await admin.del(`/user/${target.id}`)).body.success).toBe(true);
    expect((await target.client.get('/user/self')).status).toBe(401);
    expect((await admin.get<UserData>(`/user/${target.id}`)).body.data?.DeletedAt).not.toBeNull();
  });

  it('when groups are listed, then the GroupRatio names answer', async () => {
    expect((await admin.get('/group/')).body).toEqual({ success: true, message: '', data: ['default', 'vip', 'svip'] });
  });
});
