import { randomBytes } from 'node:crypto';
import { ok } from '@aigw/common';
import { denied, precondition } from '@aigw/common/errors';
import { OAuthProvider } from '@aigw/proto/users/v1/users';
import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import { githubUser, type TelegramAuth, telegramId, wechatId } from '../../../domain/third-party.ts';
import { sessionUserOf, userJson } from '../../../domain/user-view.ts';
import { walletGateway } from '../../grpc/wallet-gateway.ts';
import type { RouteDeps } from '../deps.ts';
import { originOf, readCookie } from '../middleware/session.ts';
import { optText } from '../schemas.ts';
import { input, validate } from '../validate.ts';

/** The login method a session made through each provider shows in the session list. */
const METHOD: Partial<Record<OAuthProvider, string>> = {
  [OAuthProvider.GITHUB]: 'github',
  [OAuthProvider.WECHAT]: 'wechat',
  [OAuthProvider.TELEGRAM]: 'telegram',
};

const STATE_COOKIE = 'oauth_state';
const STATE_TTL_S = 600;
const TELEGRAM_FIELDS = ['id', 'first_name', 'last_name', 'username', 'photo_url', 'auth_date', 'hash'] as const;

/** Every query field of the OAuth callbacks (the chat-app widget's included), as optional text. */
const Callback = validate({
  query: z.object({
    code: optText,
    state: optText,
    aff: optText,
    email: optText,
    ...Object.fromEntries(TELEGRAM_FIELDS.map((k) => [k, optText])),
  }) as z.ZodType<Partial<Record<string, string>>>,
});
const q = (req: Request) => input(req, Callback).query;
const text = (v: string | undefined) => v ?? '';

/**
 * Third-party login and binding. The gateway verifies the identity with the provider (code
 * exchange, the messaging-app server, the widget's signature); the users service binds it or logs
 * its holder in. A GitHub callback binds when the browser already has a session, else logs in.
 */
export function oauthRoutes(api: Router, deps: RouteDeps): void {
  const { clients, sessions, guard, critical, options, config, redis } = deps;
  const wallets = walletGateway(clients.wallet, deps.logger);
  /** Cookies are Secure when forced by COOKIE_SECURE or when this request came over HTTPS. */
  const secure = (req: Request) => config.COOKIE_SECURE === 'true' || req.secure;

  const loginWith = async (req: Request, res: Response, provider: OAuthProvider, providerId: string, hints = {}) => {
    const { user } = await clients.users.loginByOAuthIdentity({
      provider,
      providerId,
      registerIfMissing: provider !== OAuthProvider.TELEGRAM,
      affCode: text(q(req).aff),
      ...hints,
    });
    if (!user) throw denied('登录失败');
    await sessions.create(res, sessionUserOf(user), secure(req), originOf(req, METHOD[provider] ?? 'oauth'));
    ok(res, userJson(user, await wallets.get(user.id)), '登录成功！');
  };
  const bindTo = async (req: Request, res: Response, provider: OAuthProvider, providerId: string) => {
    await clients.users.bindOAuthIdentity({ userId: req.user?.id ?? req.sessionUser!.id, provider, providerId });
    ok(res, undefined, 'bind');
  };

  /** GET /api/oauth/state: a one-time state, also set as a cookie so that only this browser can use it. */
  api.get('/oauth/state', critical, async (req, res) => {
    const state = randomBytes(12).toString('base64url');
    await redis.set(`oauth:state:${state}`, '1', 'EX', STATE_TTL_S);
    res.cookie(STATE_COOKIE, state, {
      httpOnly: true,
      sameSite: 'lax',
      secure: secure(req),
      maxAge: STATE_TTL_S * 1000,
      path: '/',
    });
    ok(res, state);
  });

  api.get('/oauth/github', critical, Callback, async (req, res) => {
    if (!options.bool('GitHubOAuthEnabled')) throw precondition('管理员未开启通过 GitHub 登录以及注册');
    const state = text(q(req).state);
    const fromCookie = readCookie(req, STATE_COOKIE);
    // The cookie first, so that a foreign request cannot burn this browser's state.
    if (!state || state !== fromCookie || (await redis.del(`oauth:state:${state}`)) !== 1) {
      throw denied('state 参数无效，请刷新页面重试');
    }
    res.clearCookie(STATE_COOKIE, { path: '/' });
    const gh = await githubUser(text(q(req).code), {
      oauthUrl: config.GITHUB_OAUTH_URL,
      apiUrl: config.GITHUB_API_URL,
      clientId: options.text('GitHubClientId'),
      clientSecret: options.text('GitHubClientSecret'),
    });
    if (req.sessionUser) return bindTo(req, res, OAuthProvider.GITHUB, gh.login);
    await loginWith(req, res, OAuthProvider.GITHUB, gh.login, {
      username: gh.login,
      displayName: gh.name,
      email: gh.email,
    });
  });

  const wechat = (req: Request) => {
    if (!options.bool('WeChatAuthEnabled')) throw precondition('管理员未开启通过微信登录以及注册');
    return wechatId(text(q(req).code), {
      serverAddress: options.text('WeChatServerAddress'),
      serverToken: options.text('WeChatServerToken'),
    });
  };
  api.get('/oauth/wechat', critical, Callback, async (req, res) =>
    loginWith(req, res, OAuthProvider.WECHAT, await wechat(req)),
  );
  api.get('/oauth/wechat/bind', critical, guard.user, Callback, async (req, res) =>
    bindTo(req, res, OAuthProvider.WECHAT, await wechat(req)),
  );

  const telegram = (req: Request) => {
    if (!options.bool('TelegramOAuthEnabled')) throw precondition('管理员未开启通过 Telegram 登录以及注册');
    const fields: TelegramAuth = {};
    const query = q(req);
    for (const k of TELEGRAM_FIELDS) if (typeof query[k] === 'string') fields[k] = query[k];
    return telegramId(fields, options.text('TelegramBotToken'));
  };
  api.get('/oauth/telegram/login', critical, Callback, async (req, res) =>
    loginWith(req, res, OAuthProvider.TELEGRAM, telegram(req)),
  );
  api.get('/oauth/telegram/bind', critical, guard.user, Callback, async (req, res) =>
    bindTo(req, res, OAuthProvider.TELEGRAM, telegram(req)),
  );

  api.get('/oauth/email/bind', critical, guard.user, Callback, async (req, res) => {
    const { email, code } = q(req);
    await clients.users.bindEmail({ userId: req.user!.id, email: text(email), code: text(code) });
    ok(res, undefined, '邮箱账户绑定成功！');
  });
}
