import { createHmac } from 'node:crypto';
import { connectMongo, createClient } from '@aigw/common';
import type { Stack } from '@aigw/local-stack/stack';
import { ChannelsService } from '@aigw/proto/channels/v1/channels';
import { eventually } from '@aigw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client,
  json,
  newUser,
  rootClient,
  setOptions,
  startAccountsStack,
  startFakeServer,
  uniqueUsername,
} from './accounts-harness.ts';
import {
  type CreationOptions,
  type RequestOptions,
  SoftwareAuthenticator,
  strangerKey,
} from './software-authenticator.ts';

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

/**
 * An authenticator app, written here from RFC 6238 apart from the service's code: the code of a
 * base32 secret at a 30-second step.
 */
function authenticatorCode(secret: string, step: number): string {
  let bits = '';
  for (const ch of secret.replace(/=+$/, ''))
    bits += 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'.indexOf(ch).toString(2).padStart(5, '0');
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((b) => Number.parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', key).update(counter).digest();
  const off = mac[19]! & 0xf;
  return String((mac.readUInt32BE(off) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}
/**
 * The current 30-second step. The server accepts the steps next to its own, each once, so a test
 * that spends step s and then s + 1 passes whenever it runs within 30 s of reading s.
 */
const stepNow = () => Math.floor(Date.now() / 30_000);

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
    // logs: the check-in reward's log row.
    stack = await startAccountsStack({ TURNSTILE_VERIFY_URL: `${turnstile.url}/siteverify` }, ['logs']);
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
      data: { default: { ratio: 1, desc: '默认分组' }, vip: { ratio: 1, desc: 'vip分组' } },
    });
    await setOptions(root, { UserUsableGroups: '{"default":"默认分组","svip":"超级分组"}' });
    // The gateway follows the option through its options cache.
    const groups = await eventually(
      () => client.get<Record<string, unknown>>('/user/self/groups'),
      (r) => 'svip' in (r.body.data ?? {}),
    );
    expect(groups.body.data).toEqual({ default: { ratio: 1, desc: '默认分组' }, svip: { ratio: 1, desc: '超级分组' } });
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
  it('when a user lists and ends login sessions, then each shows its origin, the current one is marked, and an ended one gets 401 at once', async () => {
    interface View {
      sid: string;
      current: boolean;
      ip: string;
      user_agent: string;
      login_method: string;
      created_at: number;
      last_active_at: number;
      expires_at: number;
    }
    const { client: a, username } = await newUser(url);
    const b = new Client(url);
    await b.call('POST', '/user/login', {
      body: { username, password: 'password123' },
      headers: { 'User-Agent': 'SessionTest/2.0 (phone)' },
    });
    b.userId = a.userId;
    const c = new Client(url);
    await c.login(username, 'password123');

    const listed = await a.get<View[]>('/user/self/sessions');
    expect(listed.body.success).toBe(true);
    const views = listed.body.data!;
    expect(views).toHaveLength(3);
    const mine = views.filter((v) => v.current);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ ip: a.ip, login_method: 'password' });
    const other = views.find((v) => v.ip === b.ip)!;
    expect(other).toMatchObject({ current: false, user_agent: 'SessionTest/2.0 (phone)' });
    const now = Date.now() / 1000;
    expect(other.created_at).toBeGreaterThan(now - 60);
    expect(other.last_active_at).toBeGreaterThanOrEqual(other.created_at);
    expect(other.expires_at).toBeGreaterThan(now + 29 * 24 * 3600);
    // The list shows no cookie value: the ids are digests, not what the cookies hold.
    expect(JSON.stringify(views)).not.toContain(b.cookie('session')!.split('.')[0]);

    expect((await b.get('/user/self')).status).toBe(200);
    const ended = await a.del<{ revoked_sid: string; current: boolean }>(`/user/self/sessions/${other.sid}`);
    expect(ended.body).toMatchObject({ success: true, data: { revoked_sid: other.sid, current: false } });
    expect((await b.get('/user/self')).status).toBe(401);
    expect((await a.del(`/user/self/sessions/${other.sid}`)).body).toEqual({
      success: false,
      message: '会话不存在或已失效',
    });
    // Another user's session cannot be ended by id.
    const stranger = await newUser(url);
    const cSid = (await c.get<View[]>('/user/self/sessions')).body.data?.find((v) => v.current)?.sid;
    expect((await stranger.client.del(`/user/self/sessions/${cSid}`)).body.success).toBe(false);
    expect((await c.get('/user/self')).status).toBe(200);

    const others = await a.post<{ revoked_count: number }>('/user/self/sessions/revoke-others');
    expect(others.body.data).toEqual({ revoked_count: 1 });
    expect((await c.get('/user/self')).status).toBe(401);
    expect((await a.get('/user/self')).status).toBe(200);
    expect((await a.get<View[]>('/user/self/sessions')).body.data!.map((v) => v.current)).toEqual([true]);
  });

  it('when check-in is on, then a user checks in once a day in the operator time zone, the reward reaches the wallet once with its log row, and Turnstile guards it', async () => {
    interface Checkin {
      enabled: boolean;
      min_quota: number;
      max_quota: number;
      stats: {
        total_quota: number;
        total_checkins: number;
        checkin_count: number;
        checked_in_today: boolean;
        records: { checkin_date: string; quota_awarded: number }[];
      };
    }
    const { client } = await newUser(url);
    expect((await client.post('/user/checkin')).body).toEqual({ success: false, message: '签到功能未启用' });
    expect((await root.put('/option/', { key: 'TimeZone', value: 'Mars/Olympus_Mons' })).body).toEqual({
      success: false,
      message: '无效的时区名称',
    });
    // UTC+14: its calendar day differs from UTC's for ten hours of every day.
    const zone = 'Pacific/Kiritimati';
    await setOptions(root, {
      'checkin_setting.enabled': 'true',
      'checkin_setting.min_quota': '4321',
      'checkin_setting.max_quota': '4321',
      TimeZone: zone,
    });
    try {
      await eventually(
        () => client.get<{ checkin_enabled: boolean }>('/status'),
        (r) => r.body.data?.checkin_enabled === true,
      );
      const today = new Intl.DateTimeFormat('en-CA', {
        timeZone: zone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
      }).format(new Date());
      const before = (await client.get<UserData>('/user/self')).body.data!.quota;
      const fresh = await client.get<Checkin>('/user/checkin');
      expect(fresh.body.data).toMatchObject({ enabled: true, min_quota: 4321, max_quota: 4321 });
      expect(fresh.body.data!.stats).toMatchObject({ checked_in_today: false, total_checkins: 0, records: [] });

      // A double click: one check-in, one refusal.
      const answers = (await Promise.all([client.post('/user/checkin'), client.post('/user/checkin')])).map(
        (r) => r.body,
      );
      expect(answers).toContainEqual({
        success: true,
        message: '签到成功',
        data: { quota_awarded: 4321, checkin_date: today },
      });
      expect(answers).toContainEqual({ success: false, message: '今日已签到' });
      expect((await client.post('/user/checkin')).body).toEqual({ success: false, message: '今日已签到' });
      const funded = await eventually(
        () => client.get<UserData>('/user/self'),
        (r) => r.body.data?.quota === before + 4321,
      );
      expect(funded.body.data!.quota).toBe(before + 4321);
      const after = await client.get<Checkin>('/user/checkin', { month: today.slice(0, 7) });
      expect(after.body.data!.stats).toEqual({
        total_quota: 4321,
        total_checkins: 1,
        checkin_count: 1,
        checked_in_today: true,
        records: [{ checkin_date: today, quota_awarded: 4321 }],
      });
      expect((await client.get('/user/checkin', { month: '2026-13' })).body).toEqual({
        success: false,
        message: '月份格式错误，应为 YYYY-MM',
      });
      // The log row (a system entry from billing's credit), exactly one.
      const logs = await eventually(
        () => client.get<{ items: { content: string; quota: number; type: number }[] }>('/log/self', { type: '4' }),
        (r) => (r.body.data?.items ?? []).some((l) => l.content.startsWith('用户签到')),
      );
      expect(logs.body.data!.items.filter((l) => l.content.startsWith('用户签到'))).toEqual([
        expect.objectContaining({ content: '用户签到，获得额度 $0.01', quota: 4321, type: 4 }),
      ]);
      expect((await client.get<UserData>('/user/self')).body.data!.quota).toBe(before + 4321);

      // Turnstile on: a check-in needs a token siteverify accepts.
      const other = await newUser(url);
      await setOptions(root, {
        TurnstileSiteKey: 'ts-site',
        TurnstileSecretKey: 'ts-secret',
        TurnstileCheckEnabled: 'true',
      });
      await eventually(
        () => client.get<{ turnstile_check: boolean }>('/status'),
        (r) => r.body.data?.turnstile_check === true,
      );
      expect((await other.client.post('/user/checkin')).body).toEqual({
        success: false,
        message: 'Turnstile token 为空',
      });
      expect((await other.client.post('/user/checkin', undefined, { turnstile: 'bad-token' })).body.message).toBe(
        'Turnstile 校验失败，请刷新重试！',
      );
      expect((await other.client.post('/user/checkin', undefined, { turnstile: 'good-token' })).body).toMatchObject({
        success: true,
        data: { quota_awarded: 4321 },
      });
    } finally {
      await setOptions(root, { TurnstileCheckEnabled: 'false', 'checkin_setting.enabled': 'false', TimeZone: '' });
    }
  });

  describe('TOTP two-factor login', () => {
    interface Setup {
      secret: string;
      qr_code_data: string;
      backup_codes: string[];
    }
    interface Pending {
      require_2fa: boolean;
      flow_token: string;
      expires_at: number;
    }
    /** A new user with 2FA enabled by the code of step `step`. */
    const withTwoFactor = async (step: number) => {
      const u = await newUser(url);
      const setup = await u.client.post<Setup>('/user/2fa/setup');
      expect(setup.body.success, setup.body.message).toBe(true);
      const s = setup.body.data!;
      const on = await u.client.post('/user/2fa/enable', { code: authenticatorCode(s.secret, step) });
      expect(on.body, on.body.message).toEqual({ success: true, message: '两步验证启用成功' });
      return { ...u, ...s };
    };
    /** Logs in with the password; answers the pending login (no session yet). */
    const passwordStep = async (client: Client, username: string) => {
      const res = await client.post<Pending>('/user/login', { username, password: 'password123' });
      expect(res.body.success, res.body.message).toBe(true);
      return res;
    };

    it('when a user sets 2FA up, then the secret is encrypted at rest, codes are hashed, and a password alone gives no session', async () => {
      const step = stepNow();
      const u = await newUser(url);
      expect((await u.client.get('/user/2fa/status')).body.data).toEqual({ enabled: false, locked: false });
      const setup = await u.client.post<Setup>('/user/2fa/setup');
      expect(setup.body.message).toBe('2FA设置初始化成功，请使用认证器扫描二维码并输入验证码完成设置');
      const { secret, qr_code_data, backup_codes } = setup.body.data!;
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(qr_code_data).toMatch(new RegExp(`^otpauth://totp/.*${u.username}\\?secret=${secret}&issuer=`));
      expect(backup_codes).toHaveLength(4);
      for (const c of backup_codes) expect(c).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);

      const db = await connectMongo(stack.env.MONGO_URL as string, `aigw_users_${stack.id}`);
      try {
        const stored = JSON.stringify([
          await db.collection('two_fa').findOne({ _id: u.id as never }),
          await db.collection('two_fa_backup_codes').find({ user_id: u.id }).toArray(),
        ]);
        expect(stored).toMatch(/"secret":"v2:[0-9a-f]{8}:/);
        expect(stored).not.toContain(secret);
        for (const c of backup_codes) expect(stored).not.toContain(c);
      } finally {
        await db.close();
      }

      // Not on until a code proves the authenticator has the secret.
      const wrong = authenticatorCode(secret, step + 5);
      expect((await u.client.post('/user/2fa/enable', { code: wrong })).body).toEqual({
        success: false,
        message: '验证码或备用码错误，请重试',
      });
      expect((await u.client.post('/user/2fa/enable', { code: '12ab56' })).body.message).toBe('验证码只能包含数字');
      expect((await u.client.post('/user/2fa/enable', { code: authenticatorCode(secret, step) })).body.success).toBe(
        true,
      );
      expect((await u.client.get('/user/2fa/status')).body.data).toEqual({
        enabled: true,
        locked: false,
        backup_codes_remaining: 4,
      });
      expect((await u.client.post('/user/2fa/setup')).body).toEqual({
        success: false,
        message: '用户已启用2FA，请先禁用后重新设置',
      });

      const browser = new Client(url);
      const pending = await passwordStep(browser, u.username);
      expect(pending.body.message).toBe('请输入两步验证码');
      expect(pending.body.data).toMatchObject({ require_2fa: true, flow_token: expect.any(String) });
      expect(pending.body.data).not.toHaveProperty('id');
      expect(browser.hasSession()).toBe(false);
      browser.userId = u.id;
      expect((await browser.get('/user/self')).status).toBe(401);

      // The enabling code's step is spent; the next one logs in; the flow is good once.
      const flow = pending.body.data!.flow_token;
      expect(
        (await browser.post('/user/login/2fa', { flow_token: flow, code: authenticatorCode(secret, step) })).body,
      ).toEqual({ success: false, message: '验证码或备用码错误，请重试' });
      const done = await browser.post<{ id: number; username: string }>('/user/login/2fa', {
        flow_token: flow,
        code: authenticatorCode(secret, step + 1),
      });
      expect(done.body).toMatchObject({
        success: true,
        message: '登录成功！',
        data: { id: u.id, username: u.username },
      });
      expect(browser.hasSession()).toBe(true);
      expect((await browser.get('/user/self')).status).toBe(200);
      expect(
        (await new Client(url).post('/user/login/2fa', { flow_token: flow, code: authenticatorCode(secret, step) }))
          .body,
      ).toEqual({ success: false, message: '会话已过期，请重新登录' });

      // A backup code logs in once; disabling needs a code.
      const viaBackup = new Client(url);
      const p2 = await passwordStep(viaBackup, u.username);
      const backup = backup_codes[0]!;
      expect(
        (await viaBackup.post('/user/login/2fa', { flow_token: p2.body.data!.flow_token, code: backup.toLowerCase() }))
          .body.success,
      ).toBe(true);
      expect((await u.client.get('/user/2fa/status')).body.data).toMatchObject({ backup_codes_remaining: 3 });
      const again = new Client(url);
      const p3 = await passwordStep(again, u.username);
      expect(
        (await again.post('/user/login/2fa', { flow_token: p3.body.data!.flow_token, code: backup })).body.message,
      ).toBe('验证码或备用码错误，请重试');
      expect((await u.client.post('/user/2fa/disable', { code: 'ZZZZ-ZZZZ' })).body.success).toBe(false);
      expect((await u.client.post('/user/2fa/disable', { code: backup_codes[1]! })).body).toEqual({
        success: true,
        message: '两步验证已禁用',
      });
      expect((await new Client(url).login(u.username, 'password123')).body.data).toMatchObject({ id: u.id });
    });

    it('when backup codes are renewed and wrong codes sent five times, then old codes fail and 2FA locks even for the right code; an admin turns it off', async () => {
      const step = stepNow();
      const u = await withTwoFactor(step);
      const regen = await u.client.post<{ backup_codes: string[] }>('/user/2fa/backup_codes', {
        code: authenticatorCode(u.secret, step + 1),
      });
      expect(regen.body).toMatchObject({ success: true, message: '备用码重新生成成功' });
      expect(regen.body.data!.backup_codes).toHaveLength(4);
      expect(regen.body.data!.backup_codes).not.toContain(u.backup_codes[0]);
      const browser = new Client(url);
      const flow = (await passwordStep(browser, u.username)).body.data!.flow_token;
      expect((await browser.post('/user/login/2fa', { flow_token: flow, code: u.backup_codes[0] })).body.message).toBe(
        '验证码或备用码错误，请重试',
      );
      const wrong = authenticatorCode(u.secret, step + 7);
      for (let i = 2; i <= 4; i++) {
        expect((await browser.post('/user/login/2fa', { flow_token: flow, code: wrong })).body.message).toBe(
          '验证码或备用码错误，请重试',
        );
      }
      const fifth = await browser.post('/user/login/2fa', { flow_token: flow, code: wrong });
      expect(fifth.status).toBe(429);
      expect(fifth.body.message).toMatch(/^账户已被锁定，请在\d{4}-\d\d-\d\d \d\d:\d\d:\d\d后重试$/);
      const right = await browser.post('/user/login/2fa', { flow_token: flow, code: regen.body.data!.backup_codes[0] });
      expect(right.status).toBe(429);
      expect(browser.hasSession()).toBe(false);
      expect((await u.client.get('/user/2fa/status')).body.data).toMatchObject({ enabled: true, locked: true });

      // Admin: statistics and the reset (common users may not).
      expect((await u.client.get('/user/2fa/stats')).status).toBe(403);
      expect((await u.client.del(`/user/${u.id}/2fa`)).status).toBe(403);
      const stats = await root.get<{ total_users: number; enabled_users: number; enabled_rate: string }>(
        '/user/2fa/stats',
      );
      expect(stats.body.data!.enabled_users).toBeGreaterThanOrEqual(1);
      expect(stats.body.data!.total_users).toBeGreaterThan(stats.body.data!.enabled_users - 1);
      expect(stats.body.data!.enabled_rate).toMatch(/^\d+\.\d%$/);
      expect((await root.del(`/user/${u.id}/2fa`)).body).toEqual({ success: true, message: '用户2FA已被强制禁用' });
      expect((await root.del(`/user/${u.id}/2fa`)).body).toEqual({ success: false, message: '用户未启用2FA' });
      // The reset ends the user's sessions; the password alone logs in again.
      expect((await u.client.get('/user/self')).status).toBe(401);
      expect((await new Client(url).login(u.username, 'password123')).body.data).toMatchObject({ id: u.id });
    });
  });

  describe('passkeys and re-verification', () => {
    /** ServerAddress's default origin: the relying party (RP ID localhost) when passkey.origins is empty. */
    const ORIGIN = 'http://localhost:3000';
    interface Ceremony<O> {
      options: O;
      flow_token: string;
      expires_at: number;
    }
    interface Proof {
      proof_token: string;
      expires_at: number;
      method: string;
      scope: string;
    }
    const withProof = (client: Client, method: string, path: string, proof: string, body?: unknown) =>
      client.call(method, path, { body, headers: { 'X-Security-Proof': proof } });
    /** Registers a passkey for a logged-in user through begin and finish. */
    const registerPasskey = async (client: Client) => {
      const key = new SoftwareAuthenticator();
      const begin = await client.post<Ceremony<CreationOptions>>('/user/passkey/register/begin');
      expect(begin.body.success, begin.body.message).toBe(true);
      const done = await client.post('/user/passkey/register/finish', {
        flow_token: begin.body.data!.flow_token,
        credential: key.register(begin.body.data!.options, ORIGIN),
      });
      expect(done.body).toEqual({ success: true, message: 'Passkey 注册成功' });
      return key;
    };
    /** A passkey proof of `scope` for the client's session. */
    const passkeyProof = async (client: Client, key: SoftwareAuthenticator, scope: string) => {
      const begin = await client.post<Ceremony<RequestOptions>>('/user/passkey/verify/begin', { scope });
      expect(begin.body.success, begin.body.message).toBe(true);
      const done = await client.post<Proof>('/user/passkey/verify/finish', {
        flow_token: begin.body.data!.flow_token,
        credential: key.assert(begin.body.data!.options, ORIGIN),
      });
      expect(done.body.message).toBe('Passkey 验证成功');
      return done.body.data!;
    };
    const storedCount = async (userId: number) => {
      const db = await connectMongo(stack.env.MONGO_URL as string, `aigw_users_${stack.id}`);
      try {
        return (await db.collection('passkeys').findOne({ _id: userId as never }))?.sign_count as number | undefined;
      } finally {
        await db.close();
      }
    };

    it('when a user registers a passkey and logs in with it, then forged, foreign-origin, replayed and rolled-back answers are refused', async () => {
      await setOptions(root, { 'passkey.enabled': 'false' });
      expect((await new Client(url).post('/user/passkey/login/begin')).body).toEqual({
        success: false,
        message: '管理员未启用 Passkey 登录',
      });
      // The users service reads its own write at once (the console's /api/status switch is the e2e's).
      await setOptions(root, { 'passkey.enabled': 'true' });
      const u = await newUser(url);
      expect((await u.client.get('/user/passkey')).body.data).toEqual({ enabled: false });

      // Registration: the options name the relying party and the user; an answer made for another
      // origin is refused and leaves nothing stored.
      const begin =
        await u.client.post<Ceremony<CreationOptions & { rp: { name: string } }>>('/user/passkey/register/begin');
      expect(begin.body.data!.options).toMatchObject({
        rp: { id: 'localhost' },
        user: { id: Buffer.from(String(u.id)).toString('base64url'), name: u.username },
        authenticatorSelection: { residentKey: 'required' },
      });
      expect(begin.body.data!.expires_at - Date.now() / 1000).toBeGreaterThan(100);
      const evil = new SoftwareAuthenticator();
      expect(
        (
          await u.client.post('/user/passkey/register/finish', {
            flow_token: begin.body.data!.flow_token,
            credential: evil.register(begin.body.data!.options, 'http://evil.example'),
          })
        ).body,
      ).toEqual({ success: false, message: 'Passkey 注册失败，请重试' });
      expect((await u.client.get('/user/passkey')).body.data).toEqual({ enabled: false });
      const key = await registerPasskey(u.client);
      expect((await u.client.get('/user/passkey')).body.data).toEqual({ enabled: true, last_used_at: null });

      // Login: a discoverable request (no credential listed), answered and checked.
      const browser = new Client(url);
      const login = await browser.post<Ceremony<RequestOptions>>('/user/passkey/login/begin');
      expect(login.body.data!.options).toMatchObject({ rpId: 'localhost' });
      expect(login.body.data!.options.allowCredentials ?? []).toEqual([]);
      const answer = {
        flow_token: login.body.data!.flow_token,
        credential: key.assert(login.body.data!.options, ORIGIN),
      };
      const done = await browser.post<{ id: number; username: string }>('/user/passkey/login/finish', answer);
      expect(done.body).toMatchObject({
        success: true,
        message: '登录成功！',
        data: { id: u.id, username: u.username },
      });
      browser.userId = u.id;
      expect((await browser.get<{ id: number }>('/user/self')).body.data).toMatchObject({ id: u.id });
      expect(await storedCount(u.id)).toBe(1);
      expect((await u.client.get<{ last_used_at: string }>('/user/passkey')).body.data!.last_used_at).toMatch(
        /^\d{4}-\d\d-\d\dT/,
      );

      // The same answer again: its flow was taken; under a new flow its challenge is not the new one.
      const replayer = new Client(url);
      expect((await replayer.post('/user/passkey/login/finish', answer)).body).toEqual({
        success: false,
        message: 'Passkey 流程已过期，请重新开始',
      });
      const fresh = await replayer.post<Ceremony<RequestOptions>>('/user/passkey/login/begin');
      const refused = { success: false, message: 'Passkey 验证失败，请重试或联系管理员' };
      expect(
        (await replayer.post('/user/passkey/login/finish', { ...answer, flow_token: fresh.body.data!.flow_token }))
          .body,
      ).toEqual(refused);
      // A forged signature, another origin, another RP ID, a signature count that went back.
      const attempts = [
        (o: RequestOptions) => key.assert(o, ORIGIN, { signWith: strangerKey() }),
        (o: RequestOptions) => key.assert(o, 'http://evil.example'),
        (o: RequestOptions) => key.assert(o, ORIGIN, { rpId: 'evil.example' }),
        (o: RequestOptions) => key.assert(o, ORIGIN, { counter: 1 }),
      ];
      for (const make of attempts) {
        const b = await replayer.post<Ceremony<RequestOptions>>('/user/passkey/login/begin');
        const r = await replayer.post('/user/passkey/login/finish', {
          flow_token: b.body.data!.flow_token,
          credential: make(b.body.data!.options),
        });
        expect(r.body).toEqual(refused);
      }
      expect(replayer.hasSession()).toBe(false);
      expect(await storedCount(u.id)).toBe(1);
      expect((await replayer.post('/user/passkey/login/finish', { flow_token: 'x'.repeat(32) })).body).toEqual({
        success: false,
        message: 'Passkey 流程参数不完整',
      });

      // A counter above the stored one logs in and is kept.
      const again = new Client(url);
      const b2 = await again.post<Ceremony<RequestOptions>>('/user/passkey/login/begin');
      const ok2 = await again.post('/user/passkey/login/finish', {
        flow_token: b2.body.data!.flow_token,
        credential: key.assert(b2.body.data!.options, ORIGIN, { counter: 7 }),
      });
      expect(ok2.body.success, ok2.body.message).toBe(true);
      expect(await storedCount(u.id)).toBe(7);

      // Admin reset: not by a common user; by root, which also ends the user's sessions.
      const other = await newUser(url);
      expect((await other.client.del(`/user/${u.id}/reset_passkey`)).status).toBe(403);
      expect((await root.del(`/user/${u.id}/reset_passkey`)).body).toEqual({
        success: true,
        message: 'Passkey 已重置',
      });
      expect((await root.del(`/user/${u.id}/reset_passkey`)).body).toEqual({
        success: false,
        message: '该用户尚未绑定 Passkey',
      });
      expect((await browser.get('/user/self')).status).toBe(401);
      const gone = await again.post<Ceremony<RequestOptions>>('/user/passkey/login/begin');
      expect(
        (
          await again.post('/user/passkey/login/finish', {
            flow_token: gone.body.data!.flow_token,
            credential: key.assert(gone.body.data!.options, ORIGIN),
          })
        ).body,
      ).toEqual(refused);
    });

    it('when a token key is revealed or a password changed, then the server wants a fresh proof of this session, scope and method', async () => {
      await setOptions(root, { 'passkey.enabled': 'true' });
      const u = await newUser(url);
      const made = await u.client.post<{ id: number; key: string }[]>('/token/', { name: 'reveal-me' });
      const token = (made.body.data ?? [])[0]!;

      const bare = await u.client.post(`/token/${token.id}/key`);
      expect(bare.status).toBe(403);
      expect(bare.body).toEqual({ success: false, message: '需要安全验证', code: 'SECURITY_PROOF_REQUIRED' });
      expect(
        (await u.client.post('/verify', { method: 'password', password: 'wrong-pass', scope: 'token.key.read' })).body,
      ).toEqual({ success: false, message: '密码错误' });
      expect(
        (await u.client.post('/verify', { method: 'password', password: 'password123', scope: 'all' })).body,
      ).toEqual({
        success: false,
        message: '不支持的安全验证范围',
      });
      const verified = await u.client.post<Proof>('/verify', {
        method: 'password',
        password: 'password123',
        scope: 'token.key.read',
      });
      expect(verified.body).toMatchObject({ success: true, message: '验证成功' });
      const proof = verified.body.data!;
      expect(proof).toMatchObject({ method: 'password', scope: 'token.key.read' });
      expect(proof.expires_at - Date.now() / 1000).toBeGreaterThan(290);
      expect(proof.expires_at - Date.now() / 1000).toBeLessThanOrEqual(300);
      const revealed = await withProof(u.client, 'POST', `/token/${token.id}/key`, proof.proof_token);
      expect(revealed.body).toEqual({ success: true, message: '', data: { key: token.key } });
      // Another login session of the same user cannot use it; nor can a forged token.
      const second = new Client(url);
      await second.login(u.username, 'password123');
      expect((await withProof(second, 'POST', `/token/${token.id}/key`, proof.proof_token)).body).toMatchObject({
        code: 'SECURITY_PROOF_INVALID',
      });
      expect((await withProof(u.client, 'POST', `/token/${token.id}/key`, 'A'.repeat(43))).body).toMatchObject({
        code: 'SECURITY_PROOF_EXPIRED',
      });

      // A password change of a user with a passkey needs a passkey (or 2FA) proof besides the old password.
      const key = await registerPasskey(u.client);
      const change = { password: 'newpassword9', original_password: 'password123' };
      const noProof = await u.client.put('/user/self', change);
      expect(noProof.body).toMatchObject({ success: false, code: 'SECURITY_PROOF_REQUIRED' });
      expect((await withProof(u.client, 'PUT', '/user/self', proof.proof_token, change)).body).toMatchObject({
        code: 'SECURITY_PROOF_SCOPE_MISMATCH',
      });
      const byPassword = await u.client.post<Proof>('/verify', {
        method: 'password',
        password: 'password123',
        scope: 'password.change',
      });
      expect(
        (await withProof(u.client, 'PUT', '/user/self', byPassword.body.data!.proof_token, change)).body,
      ).toMatchObject({ code: 'SECURITY_PROOF_METHOD_MISMATCH' });
      expect((await new Client(url).login(u.username, 'password123')).body.success).toBe(true);
      const byPasskey = await passkeyProof(u.client, key, 'password.change');
      expect(byPasskey).toMatchObject({ method: 'passkey', scope: 'password.change' });
      expect((await withProof(u.client, 'PUT', '/user/self', byPasskey.proof_token, change)).body).toEqual({
        success: true,
        message: '用户信息更新成功！',
      });
      expect((await new Client(url).login(u.username, 'password123')).body.success).toBe(false);
      expect((await new Client(url).login(u.username, 'newpassword9')).body.success).toBe(true);

      // Removing the passkey: only with a passkey proof of scope passkey.delete.
      expect((await u.client.del('/user/passkey')).body).toMatchObject({ code: 'SECURITY_PROOF_REQUIRED' });
      const del = await passkeyProof(u.client, key, 'passkey.delete');
      expect((await withProof(u.client, 'DELETE', '/user/passkey', del.proof_token)).body).toEqual({
        success: true,
        message: 'Passkey 已解绑',
      });
      expect((await u.client.get('/user/passkey')).body.data).toEqual({ enabled: false });
    });
  });
});
