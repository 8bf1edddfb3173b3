import { createHash, createHmac } from 'node:crypto';
import type { Stack } from '@aigw/local-stack/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client,
  json,
  newUser,
  rootClient,
  setOptions,
  startAccountsStack,
  startFakeServer,
} from './accounts-harness.ts';

interface UserData {
  id: number;
  username: string;
  display_name: string;
  email: string;
  github_id: string;
  wechat_id: string;
  telegram_id: string;
}

const BOT_TOKEN = '123456:telegram-bot-token';

/** Signs chat-app widget fields the way Telegram does. */
function telegramFields(fields: Record<string, string>, token = BOT_TOKEN): Record<string, string> {
  const check = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('\n');
  const hash = createHmac('sha256', createHash('sha256').update(token).digest()).update(check).digest('hex');
  return { ...fields, hash };
}

/** GitHub accounts the fake GitHub knows, by OAuth code. */
const GITHUB_ACCOUNTS: Record<string, { login: string; name: string; email: string | null }> = {
  'code-octo': { login: 'octocat', name: 'The Octocat', email: 'octo@example.com' },
  'code-hubot': { login: 'hubot', name: 'Hubot', email: null },
  'code-binder': { login: 'binder-gh', name: 'Binder', email: null },
  'code-late': { login: 'latecomer', name: 'Late', email: null },
};

/** Third-party login and binding against local servers speaking each provider's protocol. */
describe('accounts: GitHub OAuth, the messaging-app server and the chat-app widget', () => {
  let stack: Stack;
  let url: string;
  let root: Client;
  let github: Awaited<ReturnType<typeof startFakeServer>>;
  let wechat: Awaited<ReturnType<typeof startFakeServer>>;

  beforeAll(async () => {
    github = await startFakeServer({
      'POST /login/oauth/access_token': (_req, body, res) => {
        const { client_id, client_secret, code } = JSON.parse(body) as Record<string, string>;
        if (client_id !== 'gh-client' || client_secret !== 'gh-secret' || !GITHUB_ACCOUNTS[code!]) {
          json(res, 200, {
            error: 'bad_verification_code',
            error_description: 'The code passed is incorrect or expired.',
          });
          return;
        }
        json(res, 200, { access_token: `token-${code}`, token_type: 'bearer', scope: 'user:email' });
      },
      'GET /user': (req, _body, res) => {
        const code = (req.headers.authorization ?? '').replace(/^Bearer token-/, '');
        const account = GITHUB_ACCOUNTS[code];
        if (!account) json(res, 401, { message: 'Bad credentials' });
        else json(res, 200, { id: 1000 + code.length, ...account });
      },
    });
    wechat = await startFakeServer({
      'GET /api/wechat/user': (req, _body, res) => {
        const code = new URL(req.url ?? '', 'http://x').searchParams.get('code');
        if (req.headers.authorization !== 'wx-token') json(res, 200, { success: false, message: '无权访问' });
        else if (code?.startsWith('ok-'))
          json(res, 200, { success: true, message: '', data: `openid-${code.slice(3)}` });
        else json(res, 200, { success: false, message: '验证码错误或已过期' });
      },
    });
    stack = await startAccountsStack({ GITHUB_OAUTH_URL: github.url, GITHUB_API_URL: github.url });
    url = stack.gatewayUrl;
    root = await rootClient(url);
  });
  afterAll(async () => {
    await stack?.stop();
    await github?.close();
    await wechat?.close();
  });

  const githubCallback = async (client: Client, code: string) => {
    const state = await client.get<string>('/oauth/state');
    expect(state.body.data).toBeTruthy();
    return client.get<UserData>('/oauth/github', { code, state: state.body.data! });
  };

  it('when GitHub login is off or not configured, then it is refused', async () => {
    expect((await githubCallback(new Client(url), 'code-octo')).body).toEqual({
      success: false,
      message: '管理员未开启通过 GitHub 登录以及注册',
    });
    expect((await root.put('/option/', { key: 'GitHubOAuthEnabled', value: 'true' })).body).toEqual({
      success: false,
      message: '无法启用 GitHub OAuth，请先填入 GitHub Client Id 以及 GitHub Client Secret！',
    });
    await setOptions(root, {
      GitHubClientId: 'gh-client',
      GitHubClientSecret: 'gh-secret',
      GitHubOAuthEnabled: 'true',
    });
    const status = await new Client(url).get<{ github_oauth: boolean; github_client_id: string }>('/status');
    expect(status.body.data).toMatchObject({ github_oauth: true, github_client_id: 'gh-client' });
    expect(JSON.stringify(status.body.data)).not.toContain('gh-secret');
  });

  it('when a new GitHub account logs in, then an account is made with its name and email and a session starts', async () => {
    const client = new Client(url);
    const res = await githubCallback(client, 'code-octo');
    expect(res.body).toMatchObject({ success: true, message: '登录成功！' });
    expect(res.body.data).toMatchObject({
      username: 'octocat',
      display_name: 'The Octocat',
      email: 'octo@example.com',
      github_id: 'octocat',
    });
    client.userId = res.body.data!.id;
    expect((await client.get<UserData>('/user/self')).body.data?.github_id).toBe('octocat');
    expect(github.requests.find((r) => r.path === '/login/oauth/access_token')?.headers.accept).toBe(
      'application/json',
    );

    // The same GitHub account logs into the same user again.
    const again = await githubCallback(new Client(url), 'code-octo');
    expect(again.body.data?.id).toBe(res.body.data!.id);
  });

  it('when the state is missing, wrong, reused or from another browser, then the callback is refused', async () => {
    const client = new Client(url);
    expect((await client.get('/oauth/github', { code: 'code-hubot' })).status).toBe(403);
    const state = (await client.get<string>('/oauth/state')).body.data!;
    expect((await client.get('/oauth/github', { code: 'code-hubot', state: 'forged' })).body.message).toBe(
      'state 参数无效，请刷新页面重试',
    );
    expect((await new Client(url).get('/oauth/github', { code: 'code-hubot', state })).status).toBe(403);
    expect((await client.get('/oauth/github', { code: 'code-hubot', state })).body.success).toBe(true);
    expect((await client.get('/oauth/github', { code: 'code-hubot', state })).status).toBe(403);
  });

  it('when GitHub refuses the code, then its reason is shown', async () => {
    const res = await githubCallback(new Client(url), 'code-unknown');
    expect(res.body).toEqual({ success: false, message: 'GitHub 授权失败：The code passed is incorrect or expired.' });
  });

  it('when a logged-in user comes back from GitHub, then the account is bound, and another user cannot take it', async () => {
    const { client, id } = await newUser(url);
    const res = await githubCallback(client, 'code-binder');
    expect(res.body).toEqual({ success: true, message: 'bind' });
    expect((await client.get<UserData>('/user/self')).body.data?.github_id).toBe('binder-gh');
    const other = await newUser(url);
    expect((await githubCallback(other.client, 'code-binder')).body).toEqual({
      success: false,
      message: '该 GitHub 账户已被绑定',
    });
    const login = await githubCallback(new Client(url), 'code-binder');
    expect(login.body.data?.id).toBe(id);
  });

  it('when registration is closed, then a new GitHub account cannot log in but a bound one can', async () => {
    await setOptions(root, { RegisterEnabled: 'false' });
    expect((await githubCallback(new Client(url), 'code-late')).body).toEqual({
      success: false,
      message: '管理员关闭了新用户注册',
    });
    expect((await githubCallback(new Client(url), 'code-octo')).body.success).toBe(true);
    await setOptions(root, { RegisterEnabled: 'true' });
  });

  it('when a banned user logs in with GitHub, then it is refused', async () => {
    const { client, id } = await newUser(url);
    const gh = 'code-ban';
    GITHUB_ACCOUNTS[gh] = { login: 'banned-gh', name: 'B', email: null };
    await githubCallback(client, gh);
    await root.post('/user/manage', { id, action: 'disable' });
    const res = await githubCallback(new Client(url), gh);
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('用户已被封禁');
  });

  it('when the messaging-app server vouches for a code, then its account logs in or binds', async () => {
    const off = await new Client(url).get('/oauth/wechat', { code: 'ok-1' });
    expect(off.body).toEqual({ success: false, message: '管理员未开启通过微信登录以及注册' });
    expect((await root.put('/option/', { key: 'WeChatAuthEnabled', value: 'true' })).body.message).toBe(
      '无法启用微信登录，请先填入微信登录相关配置信息！',
    );
    await setOptions(root, {
      WeChatServerAddress: `${wechat.url}/`,
      WeChatServerToken: 'wx-token',
      WeChatAccountQRCodeImageURL: 'https://example.com/qr.png',
      WeChatAuthEnabled: 'true',
    });
    const status = await new Client(url).get<{ wechat_login: boolean; wechat_qrcode: string }>('/status');
    expect(status.body.data).toMatchObject({ wechat_login: true, wechat_qrcode: 'https://example.com/qr.png' });

    const bad = await new Client(url).get('/oauth/wechat', { code: 'nope' });
    expect(bad.body).toEqual({ success: false, message: '验证码错误或已过期' });
    const client = new Client(url);
    const login = await client.get<UserData>('/oauth/wechat', { code: 'ok-alice' });
    expect(login.body.success).toBe(true);
    expect(login.body.data?.wechat_id).toBe('openid-alice');
    expect(wechat.requests.at(-1)?.path).toBe('/api/wechat/user');

    const { client: binder } = await newUser(url);
    expect((await binder.get('/oauth/wechat/bind', { code: 'ok-bob' })).body).toEqual({
      success: true,
      message: 'bind',
    });
    expect((await binder.get<UserData>('/user/self')).body.data?.wechat_id).toBe('openid-bob');
    expect((await binder.get('/oauth/wechat/bind', { code: 'ok-alice' })).body.message).toBe('该微信账号已被绑定');
    expect((await new Client(url).get('/oauth/wechat/bind', { code: 'ok-carol' })).status).toBe(401);
  });

  it('when the chat-app widget signs the fields with the bot token, then a bound account logs in', async () => {
    const now = String(Math.floor(Date.now() / 1000));
    const fields = telegramFields({ id: '777', first_name: 'Tele', username: 'tele_user', auth_date: now });
    expect((await new Client(url).get('/oauth/telegram/login', fields)).body.message).toBe(
      '管理员未开启通过 Telegram 登录以及注册',
    );
    await setOptions(root, { TelegramBotToken: BOT_TOKEN, TelegramBotName: 'gw_bot', TelegramOAuthEnabled: 'true' });
    const status = await new Client(url).get<{ telegram_oauth: boolean; telegram_bot_name: string }>('/status');
    expect(status.body.data).toMatchObject({ telegram_oauth: true, telegram_bot_name: 'gw_bot' });

    expect((await new Client(url).get('/oauth/telegram/login', fields)).body).toEqual({
      success: false,
      message: '该 Telegram 账户未绑定',
    });
    const { client, id } = await newUser(url);
    const forged = { ...fields, id: '778' };
    expect((await client.get('/oauth/telegram/bind', forged)).body).toEqual({ success: false, message: '无效的请求' });
    expect(
      (await client.get('/oauth/telegram/bind', telegramFields({ id: '777', auth_date: now }, 'other:token'))).body
        .message,
    ).toBe('无效的请求');
    expect((await client.get('/oauth/telegram/bind', fields)).body).toEqual({ success: true, message: 'bind' });
    expect((await client.get<UserData>('/user/self')).body.data?.telegram_id).toBe('777');
    const login = await new Client(url).get<UserData>('/oauth/telegram/login', fields);
    expect(login.body.data?.id).toBe(id);
    const stale = telegramFields({ id: '777', auth_date: String(Math.floor(Date.now() / 1000) - 2 * 86400) });
    expect((await new Client(url).get('/oauth/telegram/login', stale)).body.message).toBe('登录信息已过期，请重试');
  });
});
