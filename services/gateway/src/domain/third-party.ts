import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AppError, invalid } from '@aigw/common/errors';

/**
 * Identity checks with third parties (code-hosting OAuth, the messaging-app server, the chat-app
 * login widget, Turnstile). Each returns what the provider vouches for, or throws a client-safe
 * AppError; provider failures keep their cause for the logs.
 */

const TIMEOUT_MS = 10_000;

async function call(url: string, init: RequestInit, what: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    throw new AppError('UNAVAILABLE', `无法连接至 ${what} 服务器，请稍后重试！`, { cause: err });
  }
  const text = await res.text();
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new AppError('UNAVAILABLE', `${what} 服务器返回了无法识别的数据`, { cause: err });
  }
}

export interface GitHubUser {
  login: string;
  name: string;
  email: string;
}

/** Exchanges an OAuth code for a token at GitHub, then reads the account it belongs to. */
export async function githubUser(
  code: string,
  cfg: { oauthUrl: string; apiUrl: string; clientId: string; clientSecret: string },
): Promise<GitHubUser> {
  if (!code) throw invalid('无效的参数');
  const token = (await call(
    `${cfg.oauthUrl.replace(/\/+$/, '')}/login/oauth/access_token`,
    {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ client_id: cfg.clientId, client_secret: cfg.clientSecret, code }),
    },
    'GitHub',
  )) as { access_token?: string; error_description?: string };
  if (!token.access_token) throw invalid(`GitHub 授权失败：${token.error_description ?? '无效的 code'}`);
  const user = (await call(
    `${cfg.apiUrl.replace(/\/+$/, '')}/user`,
    { headers: { Authorization: `Bearer ${token.access_token}`, Accept: 'application/json' } },
    'GitHub',
  )) as { login?: string; name?: string | null; email?: string | null };
  if (!user.login) throw invalid('返回值非法，用户字段为空，请稍后重试！');
  return { login: user.login, name: user.name ?? '', email: user.email ?? '' };
}

/** The messaging-app server flow: the user's code is checked by the configured server, which answers the account id. */
export async function wechatId(code: string, cfg: { serverAddress: string; serverToken: string }): Promise<string> {
  if (!code) throw invalid('无效的参数');
  const url = `${cfg.serverAddress.replace(/\/+$/, '')}/api/wechat/user?code=${encodeURIComponent(code)}`;
  const res = (await call(url, { headers: { Authorization: cfg.serverToken } }, '微信')) as {
    success?: boolean;
    message?: string;
    data?: string;
  };
  if (!res.success || !res.data) throw invalid(res.message || '验证码错误或已过期');
  return res.data;
}

/** The chat-app login widget's fields; `hash` signs the others with the bot token. */
export type TelegramAuth = Record<string, string>;

/** Data older than this is refused (a replayed widget answer). */
const TELEGRAM_MAX_AGE_S = 24 * 3600;

/** Checks the widget's signature: HMAC-SHA256 over the sorted fields, keyed by SHA-256(bot token). */
export function telegramId(fields: TelegramAuth, botToken: string, nowS = Math.floor(Date.now() / 1000)): string {
  const { hash, ...data } = fields;
  if (!hash || !data.id || !botToken) throw invalid('无效的请求');
  const check = Object.keys(data)
    .sort()
    .map((k) => `${k}=${data[k]}`)
    .join('\n');
  const secret = createHash('sha256').update(botToken).digest();
  const expected = createHmac('sha256', secret).update(check).digest('hex');
  const given = Buffer.from(hash.toLowerCase());
  if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected))) throw invalid('无效的请求');
  const authDate = Number(data.auth_date);
  if (!Number.isFinite(authDate) || nowS - authDate > TELEGRAM_MAX_AGE_S) throw invalid('登录信息已过期，请重试');
  return data.id;
}

/** Asks Turnstile whether the browser's token is good. */
export async function turnstileOk(
  token: string,
  cfg: { verifyUrl: string; secret: string; ip: string },
): Promise<boolean> {
  const body = new URLSearchParams({ secret: cfg.secret, response: token, remoteip: cfg.ip });
  const res = (await call(cfg.verifyUrl, { method: 'POST', body }, 'Turnstile')) as { success?: boolean };
  return res.success === true;
}
