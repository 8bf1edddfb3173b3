import { createClient } from '@aigw/common';
import type { Stack } from '@aigw/local-stack/stack';
import { ChannelsService } from '@aigw/proto/channels/v1/channels';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client,
  eventually,
  json,
  newUser,
  rootClient,
  setOptions,
  startAccountsStack,
  startFakeServer,
  uniqueUsername,
} from './accounts-harness.ts';

interface UserData {
  id: number;
  username: string;
  display_name: string;
  role: number;
  status: number;
  group: string;
  quota: number;
  used_quota: number;
  request_count: number;
  aff_count: number;
  aff_quota: number;
  aff_history_quota: number;
  inviter_id: number;
  DeletedAt: string | null;
  default_password?: boolean;
}

/** Registration, login, sessions, the guards, the caller's own account and the affiliate program. */
describe('accounts: register, login and the own account', () => {
  let stack: Stack;
  let url: string;
  let root: Client;
  let turnstile: Awaited<ReturnType<typeof startFakeServer>>;

  beforeAll(async () => {
    turnstile = await startFakeServer({
      'POST /siteverify': (_req, body, res) => {
        const form = new URLSearchParams(body);
        json(res, 200, { success: form.get('secret') === 'ts-secret' && form.get('response') === 'good-token' });
      },
    });
    stack = await startAccountsStack({ TURNSTILE_VERIFY_URL: `${turnstile.url}/siteverify` });
    url = stack.gatewayUrl;
    root = await rootClient(url);
  });
  afterAll(async () => {
    await stack?.stop();
    await turnstile?.close();
  });

  it('when root logs in with the seeded default password, then the answer says so and the session works', async () => {
    const client = new Client(url);
    const res = await client.login('root', '123456');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, message: '登录成功！' });
    const data = res.body.data as unknown as UserData;
    expect(data).toMatchObject({ username: 'root', role: 100, status: 1, default_password: true });
    expect(client.hasSession()).toBe(true);
    const self = await client.get<UserData>('/user/self');
    expect(self.body.data).toMatchObject({ username: 'root', role: 100, DeletedAt: null });
    expect(self.body.data).not.toHaveProperty('password');
    expect(self.body.data).not.toHaveProperty('access_token');
    // Root's starting quota reaches billing through the pending-credit outbox.
    const funded = await eventually(
      () => client.get<UserData>('/user/self'),
      (r) => (r.body.data?.quota ?? 0) > 0,
    );
    expect(funded.body.data!.quota).toBe(100_000_000);
  });

  it('when a user registers and logs in, then the session cookie is HttpOnly and SameSite=Strict', async () => {
    const client = new Client(url);
    const username = uniqueUsername();
    const reg = await client.post('/user/register', { username, password: 'password123', password2: 'password123' });
    expect(reg.body).toMatchObject({ success: true, message: '注册成功！' });
    const login = await client.login(username, 'password123');
    expect(login.body.success).toBe(true);
    const cookie = login.headers.getSetCookie().find((c) => c.startsWith('session='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect(login.body.data).toMatchObject({ username, role: 1, status: 1, group: 'default' });
    expect(login.body.data).not.toHaveProperty('default_password');
  });

  it.each([
    [{ username: '', password: 'password123', password2: 'password123' }, '用户名不能为空'],
    [{ username: 'abcdefghijklm', password: 'password123', password2: 'password123' }, '用户名长度不得大于 12 位！'],
    [{ username: 'shortpw', password: 'short', password2: 'short' }, '密码长度不得小于 8 位！'],
    [{ username: 'longpw', password: 'x'.repeat(21), password2: 'x'.repeat(21) }, '密码长度不得大于 20 位！'],
    [{ username: 'mismatch', password: 'password123', password2: 'password124' }, '两次输入的密码不一致'],
  ])('when registering with %j, then it is refused with the spec message', async (body, message) => {
    const res = await new Client(url).post('/user/register', body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: false, message });
  });

  it('when a username is taken, then registering it again is refused', async () => {
    const { username } = await newUser(url);
    const res = await new Client(url).post('/user/register', {
      username,
      password: 'password123',
      password2: 'password123',
    });
    expect(res.body).toEqual({ success: false, message: '用户名已存在，或已注销' });
  });

  it('when login fields are empty or wrong, then the answers are business errors (HTTP 200)', async () => {
    const { username } = await newUser(url);
    const client = new Client(url);
    expect((await client.post('/user/login', { username: '', password: '' })).body).toEqual({
      success: false,
      message: '请输入用户名和密码！',
    });
    const wrong = await client.post('/user/login', { username, password: 'wrong-password' });
    expect(wrong.status).toBe(200);
    expect(wrong.body).toEqual({ success: false, message: '用户名或密码错误，或用户已被封禁' });
    expect((await client.post('/user/login', { username: 'nobody-here', password: 'password123' })).body.message).toBe(
      '用户名或密码错误，或用户已被封禁',
    );
    expect(client.hasSession()).toBe(false);
  });

  it('when registration or password login is switched off, then those calls are refused', async () => {
    await setOptions(root, { RegisterEnabled: 'false' });
    const body = { username: uniqueUsername(), password: 'password123', password2: 'password123' };
    expect((await new Client(url).post('/user/register', body)).body).toEqual({
      success: false,
      message: '管理员关闭了新用户注册',
    });
    await setOptions(root, { RegisterEnabled: 'true', PasswordRegisterEnabled: 'false' });
    expect((await new Client(url).post('/user/register', body)).body).toEqual({
      success: false,
      message: '管理员关闭了通过密码进行注册，请使用第三方账户验证的形式进行注册',
    });
    await setOptions(root, { PasswordRegisterEnabled: 'true', PasswordLoginEnabled: 'false' });
    expect((await new Client(url).post('/user/login', { username: 'root', password: '123456' })).body).toEqual({
      success: false,
      message: '管理员关闭了密码登录',
    });
    await setOptions(root, { PasswordLoginEnabled: 'true' });
    expect((await new Client(url).login('root', '123456')).body.success).toBe(true);
  });

  it('when a call has no session, no matching New-Api-User or no header, then it is 401', async () => {
    const anonymous = new Client(url);
    const none = await anonymous.get('/user/self');
    expect(none.status).toBe(401);
    expect(none.body.success).toBe(false);
    const { client, id } = await newUser(url);
    const mismatched = await client.get('/user/self', undefined, { 'New-Api-User': String(id + 1000) });
    expect(mismatched.status).toBe(401);
    expect(mismatched.body.message).toBe('无权进行此操作，New-Api-User 与登录用户不符');
    const missing = await client.get('/user/self', undefined, { 'New-Api-User': '' });
    expect(missing.status).toBe(401);
    expect((await client.get('/user/self')).status).toBe(200);
  });

  it('when a user logs out, then the session no longer works', async () => {
    const { client } = await newUser(url);
    const out = await client.get('/user/logout');
    expect(out.body.success).toBe(true);
    expect(client.hasSession()).toBe(false);
    expect((await client.get('/user/self')).status).toBe(401);
  });

  it('when a system access token is generated, then it authenticates with New-Api-User and replaces the old one', async () => {
    const { client, id, username } = await newUser(url);
    const first = await client.get<string>('/user/token');
    expect(first.body.success).toBe(true);
    expect(first.body.data).toMatch(/^[A-Za-z0-9]{32}$/);
    const bearer = new Client(url);
    const viaToken = await bearer.get<UserData>('/user/self', undefined, {
      Authorization: first.body.data!,
      'New-Api-User': String(id),
    });
    expect(viaToken.status).toBe(200);
    expect(viaToken.body.data?.username).toBe(username);
    expect((await bearer.get('/user/self', undefined, { Authorization: first.body.data! })).status).toBe(401);
    const second = await client.get<string>('/user/token');
    expect(second.body.data).not.toBe(first.body.data);
    const old = await bearer.get('/user/self', undefined, {
      Authorization: first.body.data!,
      'New-Api-User': String(id),
    });
    expect(old.status).toBe(401);
  });

  it('when a user changes the profile and the password, then the old password and other sessions stop working', async () => {
    const { client, username } = await newUser(url);
    const other = new Client(url);
    await other.login(username, 'password123');
    expect((await client.put('/user/self', { display_name: '新名字' })).body).toMatchObject({
      success: true,
      message: '用户信息更新成功！',
    });
    expect((await client.get<UserData>('/user/self')).body.data?.display_name).toBe('新名字');

    const wrongOriginal = await client.put('/user/self', { password: 'newpassword1', original_password: 'nope-nope' });
    expect(wrongOriginal.body).toEqual({ success: false, message: '原密码错误' });
    expect((await client.put('/user/self', { password: 'short', original_password: 'password123' })).body.message).toBe(
      '密码长度不得小于 8 位！',
    );
    const changed = await client.put('/user/self', { password: 'newpassword1', original_password: 'password123' });
    expect(changed.body.success).toBe(true);
    expect((await client.get('/user/self')).status).toBe(200);
    expect((await other.get('/user/self')).status).toBe(401);
    expect((await new Client(url).post('/user/login', { username, password: 'password123' })).body.success).toBe(false);
    expect((await new Client(url).login(username, 'newpassword1')).body.success).toBe(true);
  });

  it('when a user deletes the account, then it is soft-deleted: no login, the name stays taken, admins still see it', async () => {
    const { client, id, username } = await newUser(url);
    const del = await client.del('/user/self');
    expect(del.body.success).toBe(true);
    expect((await client.get('/user/self')).status).toBe(401);
    expect((await new Client(url).post('/user/login', { username, password: 'password123' })).body.success).toBe(false);
    const again = await new Client(url).post('/user/register', {
      username,
      password: 'password123',
      password2: 'password123',
    });
    expect(again.body.message).toBe('用户名已存在，或已注销');
    const seen = await root.get<UserData>(`/user/${id}`);
    expect(seen.body.data?.username).toBe(username);
    expect(seen.body.data?.DeletedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await root.del('/user/self')).status).toBe(403);
    expect((await root.del('/user/self')).body.message).toBe('不能删除超级管理员账户');
  });

  it('when someone registers with an invite code, then both get their rewards and the inviter can transfer them', async () => {
    await setOptions(root, { QuotaForNewUser: '1000', QuotaForInvitee: '500', QuotaForInviter: '600000' });
    const inviter = await newUser(url);
    const code = await inviter.client.get<string>('/user/aff');
    expect(code.body.data).toMatch(/^[A-Za-z0-9]{6}$/);
    expect((await inviter.client.get<string>('/user/aff')).body.data).toBe(code.body.data);

    const invitee = new Client(url);
    const name = uniqueUsername();
    await invitee.post('/user/register', {
      username: name,
      password: 'password123',
      password2: 'password123',
      aff_code: code.body.data,
    });
    await invitee.login(name, 'password123');
    const inviteeSelf = await eventually(
      () => invitee.get<UserData>('/user/self'),
      (r) => r.body.data?.quota === 1500,
    );
    expect(inviteeSelf.body.data).toMatchObject({ quota: 1500, inviter_id: inviter.id });

    const before = await eventually(
      () => inviter.client.get<UserData>('/user/self'),
      (r) => r.body.data?.quota === 1000,
    );
    expect(before.body.data).toMatchObject({ quota: 1000, aff_count: 1, aff_quota: 600000, aff_history_quota: 600000 });

    const tooLow = await inviter.client.post('/user/aff_transfer', { quota: 400000 });
    expect(tooLow.body).toEqual({ success: false, message: '划转金额最低为 $1.00' });
    const tooMuch = await inviter.client.post('/user/aff_transfer', { quota: 700000 });
    expect(tooMuch.body).toEqual({ success: false, message: '邀请额度不足！' });
    const moved = await inviter.client.post('/user/aff_transfer', { quota: 500000 });
    expect(moved.body).toMatchObject({ success: true, data: { aff_quota: 100000, quota: 501000 } });
    const after = await inviter.client.get<UserData>('/user/self');
    expect(after.body.data).toMatchObject({ quota: 501000, aff_quota: 100000, aff_history_quota: 600000 });
    await setOptions(root, { QuotaForNewUser: '0', QuotaForInvitee: '0', QuotaForInviter: '0' });
  });

  it('when a user asks for usable groups and models, then UserUsableGroups and the group abilities answer', async () => {
    const { client } = await newUser(url);
    expect((await client.get('/user/self/groups')).body).toMatchObject({
      success: true,
      data: { default: '默认分组', vip: 'vip分组' },
    });
    await setOptions(root, { UserUsableGroups: '{"default":"默认分组","svip":"超级分组"}' });
    expect((await client.get('/user/self/groups')).body.data).toEqual({ default: '默认分组', svip: '超级分组' });
    expect((await client.get<string[]>('/user/models')).body).toEqual({ success: true, message: '', data: [] });
    const channels = createClient(ChannelsService, stack.env.CHANNELS_ADDR!);
    try {
      await channels.createChannels({
        channel: { name: 'c1', type: 1, key: 'sk-test', models: 'gpt-4o-mini,gpt-4o', group: 'default', status: 1 },
      });
      await channels.createChannels({
        channel: { name: 'c2', type: 1, key: 'sk-test2', models: 'o1', group: 'vip', status: 1 },
      });
    } finally {
      channels.close();
    }
    const models = await eventually(
      () => client.get<string[]>('/user/models'),
      (r) => (r.body.data?.length ?? 0) === 2,
    );
    expect([...models.body.data!].sort()).toEqual(['gpt-4o', 'gpt-4o-mini']);
  });

  it('when Turnstile is on, then register and login need a token that siteverify accepts', async () => {
    await setOptions(root, {
      TurnstileSiteKey: 'ts-site',
      TurnstileSecretKey: 'ts-secret',
      TurnstileCheckEnabled: 'true',
    });
    const status = await eventually(
      () => new Client(url).get<{ turnstile_check: boolean; turnstile_site_key: string }>('/status'),
      (r) => r.body.data?.turnstile_check === true,
    );
    expect(status.body.data).toMatchObject({ turnstile_check: true, turnstile_site_key: 'ts-site' });
    const client = new Client(url);
    expect((await client.post('/user/login', { username: 'root', password: '123456' })).body).toEqual({
      success: false,
      message: 'Turnstile token 为空',
    });
    const bad = await client.post('/user/login', { username: 'root', password: '123456' }, { turnstile: 'bad-token' });
    expect(bad.body).toEqual({ success: false, message: 'Turnstile 校验失败，请刷新重试！' });
    const good = await client.post(
      '/user/login',
      { username: 'root', password: '123456' },
      { turnstile: 'good-token' },
    );
    expect(good.body.success).toBe(true);
    const reg = await new Client(url).post(
      '/user/register',
      { username: uniqueUsername(), password: 'password123', password2: 'password123' },
      { turnstile: 'good-token' },
    );
    expect(reg.body.success).toBe(true);
    expect(turnstile.requests.at(-1)?.body).toContain('remoteip=');
    await setOptions(root, { TurnstileCheckEnabled: 'false' });
  });

  it('when one address calls a critical route more than 20 times in 20 minutes, then it gets 429', async () => {
    const client = new Client(url);
    for (let i = 0; i < 20; i++) {
      // A name per try: one name would meet the per-account backoff (hardening-proxies.test.ts) first.
      const res = await client.post('/user/login', { username: `nobody${i}`, password: 'password123' });
      expect(res.status).toBe(200);
    }
    const limited = await client.post('/user/login', { username: 'root', password: '123456' });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ success: false, message: '请求次数过多，请稍后再试' });
    // Other addresses and non-critical routes are not affected.
    expect((await new Client(url).post('/user/login', { username: 'root', password: '123456' })).status).toBe(200);
    expect((await client.get('/status')).status).toBe(200);
  });
});
