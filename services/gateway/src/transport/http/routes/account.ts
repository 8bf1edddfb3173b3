import { ok } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import type { Router } from 'express';
import { sessionUserOf, userJson } from '../../../domain/user-view.ts';
import { walletGateway } from '../../grpc/wallet-gateway.ts';
import type { RouteDeps } from '../deps.ts';
import { bodyOf, text } from '../input.ts';
import { turnstileCheck } from '../middleware/turnstile.ts';

/**
 * Signing up and in: register, login, logout, the email code, the password-reset mail and its
 * confirmation. All but logout sit behind the critical rate limit; the mail, register and login
 * routes also behind the Turnstile check when it is on.
 */
export function accountRoutes(api: Router, deps: RouteDeps): void {
  const { clients, sessions, critical, config, options } = deps;
  const human = turnstileCheck(options, config.TURNSTILE_VERIFY_URL);
  const wallets = walletGateway(clients.wallet, deps.logger);
  const secure = config.COOKIE_SECURE === 'true';

  api.post('/user/register', critical, human, async (req, res) => {
    const b = bodyOf(req);
    const password = text(b.password);
    if (b.password2 !== undefined && text(b.password2) !== password) throw invalid('两次输入的密码不一致');
    const { user } = await clients.users.register({
      username: text(b.username),
      password,
      displayName: text(b.display_name),
      email: text(b.email),
      verificationCode: text(b.verification_code),
      affCode: text(b.aff_code),
    });
    ok(res, user ? { id: user.id, username: user.username } : undefined, '注册成功！');
  });

  api.post('/user/login', critical, human, async (req, res) => {
    const b = bodyOf(req);
    const { user, defaultPassword } = await clients.users.login({
      username: text(b.username),
      password: text(b.password),
    });
    if (!user) throw invalid('用户名或密码错误，或用户已被封禁');
    await sessions.create(res, sessionUserOf(user), secure);
    const data = userJson(user, await wallets.get(user.id));
    ok(res, defaultPassword ? { ...data, default_password: true } : data, '登录成功！');
  });

  api.get('/user/logout', async (req, res) => {
    await sessions.destroy(req, res);
    ok(res, undefined, '注销成功!');
  });

  api.get('/verification', critical, human, async (req, res) => {
    await clients.users.sendEmailVerification({ email: text(req.query.email) });
    ok(res, undefined, '验证码发送成功，请检查邮箱！');
  });

  api.get('/reset_password', critical, human, async (req, res) => {
    await clients.users.sendPasswordResetEmail({ email: text(req.query.email) });
    ok(res, undefined, '重置邮件发送成功，请检查邮箱！');
  });

  api.post('/user/reset', critical, async (req, res) => {
    const b = bodyOf(req);
    const { newPassword, userId } = await clients.users.resetPassword({ email: text(b.email), token: text(b.token) });
    await sessions.destroyAllOf(userId);
    ok(res, newPassword, '密码重置成功');
  });
}
