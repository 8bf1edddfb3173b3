import { ok } from '@aigw/common';
import { AppError, invalid } from '@aigw/common/errors';
import type { Request, Router } from 'express';
import { z } from 'zod';
import { sessionUserOf, userJson } from '../../../domain/user-view.ts';
import { walletGateway } from '../../grpc/wallet-gateway.ts';
import type { RouteDeps } from '../deps.ts';
import { LOGIN_BACKOFF, loginBackoff } from '../middleware/login-backoff.ts';
import { loginFlows } from '../middleware/login-flow.ts';
import { originOf } from '../middleware/session.ts';
import { turnstileCheck } from '../middleware/turnstile.ts';
import { body, optText } from '../schemas.ts';
import { input, validate } from '../validate.ts';

const opt = optText;
const Register = validate({
  body: body({
    username: opt,
    password: opt,
    password2: opt,
    display_name: opt,
    email: opt,
    verification_code: opt,
    aff_code: opt,
  }),
});
const Login = validate({ body: body({ username: opt, password: opt }) });
const Login2fa = validate({ body: body({ code: opt, flow_token: opt }) });
const EmailQuery = validate({ query: z.object({ email: opt, turnstile: opt }) });
const Reset = validate({ body: body({ email: opt, token: opt }) });

/**
 * Signing up and in: register, login, logout, the email code, the password-reset mail and its
 * confirmation. All but logout sit behind the critical rate limit; the mail, register and login
 * routes also behind the Turnstile check when it is on.
 */
export function accountRoutes(api: Router, deps: RouteDeps): void {
  const { clients, sessions, critical, config, options } = deps;
  const human = turnstileCheck(options, config.TURNSTILE_VERIFY_URL);
  const wallets = walletGateway(clients.wallet, deps.logger);
  /** Cookies are Secure when forced by COOKIE_SECURE or when this request came over HTTPS. */
  const secure = (req: Request) => config.COOKIE_SECURE === 'true' || req.secure;
  const backoff = loginBackoff(deps.redis, { ...LOGIN_BACKOFF, freeFailures: config.LOGIN_FREE_FAILURES });
  const flows = loginFlows(deps.redis);

  api.post('/user/register', critical, human, Register, async (req, res) => {
    const b = input(req, Register).body;
    const password = b.password ?? '';
    if (b.password2 !== undefined && b.password2 !== password) throw invalid('两次输入的密码不一致');
    const { user } = await clients.users.register({
      username: b.username ?? '',
      password,
      displayName: b.display_name ?? '',
      email: b.email ?? '',
      verificationCode: b.verification_code ?? '',
      affCode: b.aff_code ?? '',
    });
    ok(res, user ? { id: user.id, username: user.username } : undefined, '注册成功！');
  });

  api.post('/user/login', critical, human, Login, async (req, res) => {
    const { username = '', password = '' } = input(req, Login).body;
    await backoff.check(username);
    const answer = await clients.users.login({ username, password }).catch(async (err: unknown) => {
      // Wrong credentials (not empty fields, not an outage) count against the account.
      if (err instanceof AppError && err.code === 'INVALID_ARGUMENT' && username && password)
        await backoff.failed(username);
      throw err;
    });
    const { user, defaultPassword, require2fa } = answer;
    if (!user) throw invalid('用户名或密码错误，或用户已被封禁');
    await backoff.succeeded(username);
    if (require2fa) {
      // The password was right; the session waits for the second factor (new-api's answer).
      const flow = await flows.start(res, user.id, secure(req));
      ok(res, { require_2fa: true, flow_token: flow.token, expires_at: flow.expiresAt }, '请输入两步验证码');
      return;
    }
    await sessions.create(res, sessionUserOf(user), secure(req), originOf(req, 'password'));
    const data = userJson(user, await wallets.get(user.id));
    ok(res, defaultPassword ? { ...data, default_password: true } : data, '登录成功！');
  });

  api.post('/user/login/2fa', critical, Login2fa, async (req, res) => {
    const b = input(req, Login2fa).body;
    const expired = '会话已过期，请重新登录';
    const token = flows.tokenOf(req, b.flow_token);
    const userId = token ? await flows.userOf(token) : undefined;
    if (!token || !userId) throw invalid(expired);
    if (!b.code?.trim()) throw invalid('参数错误');
    const { user } = await clients.users.verifyTwoFactor({ userId, code: b.code });
    if (!user) throw invalid(expired);
    if (!(await flows.take(res, token))) throw invalid(expired);
    await sessions.create(res, sessionUserOf(user), secure(req), originOf(req, '2fa'));
    ok(res, userJson(user, await wallets.get(user.id)), '登录成功！');
  });

  api.get('/user/logout', async (req, res) => {
    await sessions.destroy(req, res);
    ok(res, undefined, '注销成功!');
  });

  api.get('/verification', critical, human, EmailQuery, async (req, res) => {
    await clients.users.sendEmailVerification({ email: input(req, EmailQuery).query.email ?? '' });
    ok(res, undefined, '验证码发送成功，请检查邮箱！');
  });

  api.get('/reset_password', critical, human, EmailQuery, async (req, res) => {
    await clients.users.sendPasswordResetEmail({ email: input(req, EmailQuery).query.email ?? '' });
    ok(res, undefined, '重置邮件发送成功，请检查邮箱！');
  });

  api.post('/user/reset', critical, Reset, async (req, res) => {
    const b = input(req, Reset).body;
    const { newPassword, userId } = await clients.users.resetPassword({ email: b.email ?? '', token: b.token ?? '' });
    await sessions.destroyAllOf(userId);
    ok(res, newPassword, '密码重置成功');
  });
}
