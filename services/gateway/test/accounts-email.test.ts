import { createClient } from '@aigw/common';
import type { Stack } from '@aigw/local-stack/stack';
import { UsersService } from '@aigw/proto/users/v1/users';
import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client,
  newUser,
  rootClient,
  setOptions,
  startAccountsStack,
  startMailServer,
  uniqueUsername,
} from './accounts-harness.ts';

/** Codes and reset links live this long in this stack, so that expiry can be seen in a test. */
const CODE_TTL_MS = 6000;

const codeIn = (mail: ParsedMail) => /<strong>(\d{6})<\/strong>/.exec(String(mail.html))?.[1] ?? '';
let seq = 0;
const address = (domain = 'example.com') => `mail${Date.now().toString(36)}${seq++}@${domain}`;

/** Email verification, binding and password reset, sent through a real SMTP server. */
describe('accounts: email codes, binding and password reset', () => {
  let stack: Stack;
  let url: string;
  let root: Client;
  let smtp: Awaited<ReturnType<typeof startMailServer>>;

  beforeAll(async () => {
    smtp = await startMailServer();
    stack = await startAccountsStack({ VERIFICATION_CODE_TTL_MS: String(CODE_TTL_MS) });
    url = stack.gatewayUrl;
    root = await rootClient(url);
  });
  afterAll(async () => {
    await stack?.stop();
    await smtp?.close();
  });

  it('when SMTP is not configured, then sending a code says so', async () => {
    const res = await new Client(url).get('/verification', { email: address() });
    expect(res.body).toEqual({ success: false, message: 'SMTP 服务器未配置，请联系管理员' });
  });

  it('when SMTP is configured, then a code arrives from SMTPFrom, authenticated with the account and token', async () => {
    await setOptions(root, {
      SMTPServer: '127.0.0.1',
      SMTPPort: String(smtp.port),
      SMTPAccount: 'mailer@example.com',
      SMTPToken: 'smtp-secret',
      SMTPFrom: 'noreply@example.com',
      SystemName: '测试网关',
    });
    const to = address();
    const res = await new Client(url).get('/verification', { email: to });
    expect(res.body).toEqual({ success: true, message: '验证码发送成功，请检查邮箱！' });
    const mail = await smtp.waitFor(to);
    expect(mail.subject).toBe('测试网关邮箱验证邮件');
    expect(mail.from?.value[0]?.address).toBe('noreply@example.com');
    expect(codeIn(mail)).toMatch(/^\d{6}$/);
    expect(smtp.logins).toContainEqual({ username: 'mailer@example.com', password: 'smtp-secret' });
  });

  it('when a code is asked again within 30 s, or for a bad address, then it is refused', async () => {
    const to = address();
    const client = new Client(url);
    expect((await client.get('/verification', { email: to })).body.success).toBe(true);
    expect((await client.get('/verification', { email: to })).body).toEqual({
      success: false,
      message: '发送过于频繁，请 30 秒后再试',
    });
    expect((await client.get('/verification', { email: 'not-an-address' })).body).toEqual({
      success: false,
      message: '无效的邮箱地址',
    });
  });

  it('when domain or alias restrictions are on, then other domains and aliases are refused', async () => {
    await setOptions(root, { EmailDomainWhitelist: 'example.com', EmailDomainRestrictionEnabled: 'true' });
    const client = new Client(url);
    expect((await client.get('/verification', { email: address('other.org') })).body).toEqual({
      success: false,
      message: '管理员启用了邮箱域名白名单，您的邮箱地址的域名不在白名单中',
    });
    expect((await client.get('/verification', { email: address('example.com') })).body.success).toBe(true);
    await setOptions(root, { EmailAliasRestrictionEnabled: 'true' });
    expect((await client.get('/verification', { email: `me+tag${seq++}@example.com` })).body).toEqual({
      success: false,
      message: '管理员已启用邮箱地址别名限制，您的邮箱地址由于包含特殊符号而被拒绝。',
    });
    await setOptions(root, { EmailDomainRestrictionEnabled: 'false', EmailAliasRestrictionEnabled: 'false' });
    expect((await client.get('/verification', { email: address('other.org') })).body.success).toBe(true);
  });

  it('when email verification is on, then registering needs the mailed code, once', async () => {
    await setOptions(root, { EmailVerificationEnabled: 'true' });
    const status = await new Client(url).get<{ email_verification: boolean }>('/status');
    expect(status.body.data?.email_verification).toBe(true);
    const to = address();
    const client = new Client(url);
    const username = uniqueUsername('ev');
    const base = { username, password: 'password123', password2: 'password123' };
    expect((await client.post('/user/register', base)).body).toEqual({
      success: false,
      message: '管理员开启了邮箱验证，请输入邮箱地址和验证码',
    });
    await client.get('/verification', { email: to });
    const code = codeIn(await smtp.waitFor(to));
    const wrong = await client.post('/user/register', {
      ...base,
      email: to,
      verification_code: code === '000000' ? '111111' : '000000',
    });
    expect(wrong.body).toEqual({ success: false, message: '验证码错误或已过期' });
    const ok = await client.post('/user/register', { ...base, email: to, verification_code: code });
    expect(ok.body.success).toBe(true);
    const login = await client.login(username, 'password123');
    expect(login.body.data).toMatchObject({ email: to });
    const reuse = await new Client(url).post('/user/register', {
      ...base,
      username: uniqueUsername('ev'),
      email: to,
      verification_code: code,
    });
    expect(reuse.body.message).toBe('邮箱地址已被占用');
    expect((await client.get('/verification', { email: to })).body.message).toBe('邮箱地址已被占用');
    await setOptions(root, { EmailVerificationEnabled: 'false' });
  });

  it('when a code has expired, then it is refused', async () => {
    const { client } = await newUser(url);
    const to = address();
    await client.get('/verification', { email: to });
    const code = codeIn(await smtp.waitFor(to));
    await new Promise((r) => setTimeout(r, CODE_TTL_MS + 500));
    expect((await client.get('/oauth/email/bind', { email: to, code })).body).toEqual({
      success: false,
      message: '验证码错误或已过期',
    });
  });

  it('when a user binds an email with its code, then the account shows it', async () => {
    const { client } = await newUser(url);
    expect((await client.get('/oauth/email/bind', { email: '', code: '1' })).body.message).toBe('请输入邮箱！');
    expect((await client.get('/oauth/email/bind', { email: address(), code: '' })).body.message).toBe(
      '请输入邮箱验证码！',
    );
    const to = address();
    await client.get('/verification', { email: to });
    const code = codeIn(await smtp.waitFor(to));
    const res = await client.get('/oauth/email/bind', { email: to, code });
    expect(res.body).toEqual({ success: true, message: '邮箱账户绑定成功！' });
    expect((await client.get<{ email: string }>('/user/self')).body.data?.email).toBe(to);
    expect((await new Client(url).get('/oauth/email/bind', { email: to, code })).status).toBe(401);
  });

  it('when a user resets the password by mail, then the link gives a new password, once', async () => {
    const { client, username } = await newUser(url);
    const to = address();
    await client.get('/verification', { email: to });
    await client.get('/oauth/email/bind', { email: to, code: codeIn(await smtp.waitFor(to)) });
    await setOptions(root, { ServerAddress: 'https://gw.example.com/' });

    const anonymous = new Client(url);
    expect((await anonymous.get('/reset_password', { email: address() })).body).toEqual({
      success: false,
      message: '该邮箱地址未注册',
    });
    const sent = await anonymous.get('/reset_password', { email: to });
    expect(sent.body).toEqual({ success: true, message: '重置邮件发送成功，请检查邮箱！' });
    const mail = await smtp.waitFor(to, '密码重置');
    expect(mail.subject).toBe('测试网关密码重置');
    const href = /href="([^"]+)"/.exec(String(mail.html))?.[1] ?? '';
    const link = new URL(href);
    expect(`${link.origin}${link.pathname}`).toBe('https://gw.example.com/user/reset');
    expect(link.searchParams.get('email')).toBe(to);
    const token = link.searchParams.get('token')!;

    expect((await anonymous.post('/user/reset', { email: to, token: 'wrong' })).body).toEqual({
      success: false,
      message: '重置链接非法或已过期',
    });
    const reset = await anonymous.post<string>('/user/reset', { email: to, token });
    expect(reset.body.success).toBe(true);
    expect(reset.body.data).toMatch(/^[A-Za-z0-9]{12}$/);
    expect((await client.get('/user/self')).status).toBe(401);
    expect((await new Client(url).post('/user/login', { username, password: 'password123' })).body.success).toBe(false);
    expect((await new Client(url).login(username, reset.body.data!)).body.success).toBe(true);
    expect((await new Client(url).login(to, reset.body.data!)).body.success).toBe(true);
    expect((await anonymous.post('/user/reset', { email: to, token })).body.message).toBe('重置链接非法或已过期');
  });

  it('when a user chose email notifications with a notification address, then NotifyUser mails it there with the values filled in', async () => {
    await setOptions(root, { SMTPServer: '127.0.0.1', SMTPPort: String(smtp.port), SMTPFrom: 'noreply@example.com' });
    const { client, id } = await newUser(url);
    const to = address();
    expect((await client.put('/user/setting', { notify_type: 'email', notification_email: 'bad' })).body).toMatchObject(
      {
        success: false,
        message: '预警阈值必须大于0',
      },
    );
    const saved = await client.put('/user/setting', {
      notify_type: 'email',
      quota_warning_threshold: 500_000,
      notification_email: to,
    });
    expect(saved.body).toMatchObject({ success: true, message: '设置已更新' });
    const users = createClient(UsersService, stack.env.USERS_ADDR as string);
    try {
      const res = await users.notifyUser({
        userId: id,
        type: 'quota_exceed',
        title: '您的额度即将用尽',
        content: '{{value}}，当前剩余额度为 {{value}}，请及时充值。',
        values: ['您的额度即将用尽', '<$0.5>'],
      });
      expect(res.sent).toBe(true);
    } finally {
      users.close();
    }
    const mail = await smtp.waitFor(to, '您的额度即将用尽');
    expect(String(mail.html)).toContain('您的额度即将用尽，当前剩余额度为 &#60;$0.5&#62;，请及时充值。');
  });
});
