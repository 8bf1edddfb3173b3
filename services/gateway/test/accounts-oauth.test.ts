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
import { startFakeOAuth2, startFakeOidc } from './fake-idp.ts';

interface UserData {
  id: number;
  username: string;
  display_name: string;
  email: string;
  github_id: string;
  wechat_id: string;
  telegram_id: string;
  oidc_id: string;
  linux_do_id: string;
  discord_id: string;
}

/** Linux DO Connect's /api/user answers, by account key. */
const LINUXDO_USERS: Record<string, { id: number; username: string; name: string; trust_level: number }> = {
  ldo: { id: 4242, username: 'ldo_user', name: 'LDO User', trust_level: 2 },
  newbie: { id: 4243, username: 'ldo_newbie', name: 'Newbie', trust_level: 0 },
};

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
  let oidc: Awaited<ReturnType<typeof startFakeOidc>>;
  let linuxdo: Awaited<ReturnType<typeof startFakeOAuth2>>;
  let discord: Awaited<ReturnType<typeof startFakeOAuth2>>;
  let custom: Awaited<ReturnType<typeof startFakeOAuth2>>;

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
    oidc = await startFakeOidc({ id: 'oidc-client', secret: 'oidc-secret' });
    linuxdo = await startFakeOAuth2({
      client: { id: 'ldo-client', secret: 'ldo-secret' },
      auth: 'basic',
      paths: { authorize: '/oauth2/authorize', token: '/oauth2/token', user: '/api/user' },
      user: (key) => ({ ...LINUXDO_USERS[key], active: true, silenced: false, avatar_url: '' }),
      badGrant: { error: 'invalid_grant', error_description: 'The provided authorization grant is invalid' },
    });
    discord = await startFakeOAuth2({
      client: { id: 'dc-client', secret: 'dc-secret' },
      auth: 'post',
      paths: { authorize: '/oauth2/authorize', token: '/api/v10/oauth2/token', user: '/api/v10/users/@me' },
      user: () => ({
        id: '80351110224678912',
        username: 'nelly',
        discriminator: '0',
        global_name: 'Nelly',
        avatar: null,
        email: 'nelly@discord.example',
        verified: true,
        mfa_enabled: false,
      }),
      badGrant: { error: 'invalid_grant', error_description: 'Invalid "code" in request.' },
    });
    custom = await startFakeOAuth2({
      client: { id: 'acme-client', secret: 'acme-secret' },
      auth: 'post',
      paths: { authorize: '/auth', token: '/token', user: '/me' },
      user: (key) => ({ code: 0, data: { uid: `acme-${key}`, login: `acme_${key}`, nick: 'Acme Person' } }),
      badGrant: { error: 'invalid_grant' },
    });
    stack = await startAccountsStack({
      GITHUB_OAUTH_URL: github.url,
      GITHUB_API_URL: github.url,
      LINUX_DO_AUTHORIZATION_ENDPOINT: `${linuxdo.url}/oauth2/authorize`,
      LINUX_DO_TOKEN_ENDPOINT: `${linuxdo.url}/oauth2/token`,
      LINUX_DO_USER_ENDPOINT: `${linuxdo.url}/api/user`,
      DISCORD_OAUTH_URL: discord.url,
      DISCORD_API_URL: `${discord.url}/api/v10`,
    });
    url = stack.gatewayUrl;
    root = await rootClient(url);
  });
  afterAll(async () => {
    await stack?.stop();
    await github?.close();
    await wechat?.close();
    await Promise.all([oidc?.close(), linuxdo?.close(), discord?.close(), custom?.close()]);
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
  /**
   * The browser's round trip: start at /api/oauth/:provider/authorize, follow the provider's
   * authorization page (which redirects back with a code), then the console page's callback call.
   */
  const ssoStart = async (client: Client, provider: string) => {
    const start = await client.get<{ url: string; state: string; action: string }>(`/oauth/${provider}/authorize`);
    expect(start.body.success, start.body.message).toBe(true);
    return start.body.data!;
  };
  const ssoReturn = async (authorizeUrl: string) => {
    const back = await fetch(authorizeUrl, { redirect: 'manual' });
    expect(back.status).toBe(302);
    const location = new URL(back.headers.get('location')!);
    return {
      path: location.pathname,
      code: location.searchParams.get('code')!,
      state: location.searchParams.get('state')!,
    };
  };
  const ssoLogin = async (client: Client, provider: string) => {
    const { url: authorize } = await ssoStart(client, provider);
    const { code, state } = await ssoReturn(authorize);
    return client.get<UserData>(`/oauth/${provider}`, { code, state });
  };

  it('when OIDC is configured with discovery, then a login runs code + PKCE (S256) + nonce and makes the account', async () => {
    expect((await new Client(url).get('/oauth/oidc/authorize')).body).toEqual({
      success: false,
      message: '管理员未开启通过 OIDC 登录以及注册',
    });
    expect((await root.put('/option/', { key: 'oidc.enabled', value: 'true' })).body.message).toBe(
      '无法启用 OIDC 登录，请先填入 Client Id、Client Secret 以及 Well-Known URL！',
    );
    await setOptions(root, {
      'oidc.client_id': 'oidc-client',
      'oidc.client_secret': 'oidc-secret',
      'oidc.well_known': `${oidc.url}/.well-known/openid-configuration`,
      'oidc.enabled': 'true',
    });
    const status = await new Client(url).get<Record<string, unknown>>('/status');
    expect(status.body.data).toMatchObject({
      oidc_enabled: true,
      oidc_client_id: 'oidc-client',
      oidc_display_name: 'OIDC',
    });
    expect(JSON.stringify(status.body.data)).not.toContain('oidc-secret');

    oidc.next.account = {
      sub: 'sub-alice',
      email: 'alice@idp.example',
      name: 'Alice IdP',
      preferred_username: 'alice_idp',
    };
    const client = new Client(url);
    const start = await ssoStart(client, 'oidc');
    const q = new URL(start.url).searchParams;
    expect(start.url.startsWith(`${oidc.url}/authorize?`)).toBe(true);
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(q.get('nonce')).toBeTruthy();
    expect(q.get('scope')).toBe('openid profile email');
    expect(q.get('redirect_uri')).toBe('http://localhost:3000/oauth/oidc');
    const back = await ssoReturn(start.url);
    expect(back.path).toBe('/oauth/oidc');
    const res = await client.get<UserData>('/oauth/oidc', { code: back.code, state: back.state });
    expect(res.body).toMatchObject({ success: true, message: '登录成功！' });
    expect(res.body.data).toMatchObject({
      username: 'alice_idp',
      display_name: 'Alice IdP',
      email: 'alice@idp.example',
      oidc_id: 'sub-alice',
    });
    client.userId = res.body.data!.id;
    expect((await client.get<UserData>('/user/self')).body.data?.oidc_id).toBe('sub-alice');
    // The token endpoint saw the verifier and Basic client credentials (discovery offers only client_secret_basic).
    const tokenCall = oidc.requests.find((r) => r.path === '/token')!;
    expect(new URLSearchParams(tokenCall.body).get('code_verifier')).toBeTruthy();
    expect(tokenCall.headers.authorization).toMatch(/^Basic /);

    const again = await ssoLogin(new Client(url), 'oidc');
    expect(again.body.data?.id).toBe(res.body.data!.id);
  });

  it('when the id_token has a wrong signature, audience, issuer or nonce or is expired, then the login is refused with no session', async () => {
    oidc.next.account = { sub: 'sub-mallory', email: 'm@idp.example', name: 'M', preferred_username: 'mallory' };
    const cases = [
      ['signature', 'OIDC id_token 校验失败：签名无效'],
      ['audience', 'OIDC id_token 校验失败：受众（aud）不匹配'],
      ['issuer', 'OIDC id_token 校验失败：签发者（iss）不匹配'],
      ['nonce', 'OIDC id_token 校验失败：nonce 不匹配'],
      ['expired', 'OIDC id_token 校验失败：已过期'],
    ] as const;
    for (const [spoil, message] of cases) {
      const client = new Client(url);
      oidc.next.spoil = spoil;
      const res = await ssoLogin(client, 'oidc');
      expect([res.status, res.body], spoil).toEqual([403, { success: false, message }]);
      expect(client.hasSession()).toBe(false);
    }
    expect(
      (await root.get<{ items: UserData[] }>('/user/search', { keyword: 'mallory' })).body.data?.items ?? [],
    ).toEqual([]);
  });

  it('when a code is replayed into another browser login (wrong PKCE verifier) or the state is not this browser own, then it is refused', async () => {
    oidc.next.account = { sub: 'sub-victim', email: 'v@idp.example', name: 'V', preferred_username: 'victim' };
    const attacker = new Client(url);
    const victim = new Client(url);
    const attackerCode = (await ssoReturn((await ssoStart(attacker, 'oidc')).url)).code;
    const victimBack = await ssoReturn((await ssoStart(victim, 'oidc')).url);
    // The attacker's code, injected into the victim's callback: the victim's verifier does not match.
    const injected = await victim.get('/oauth/oidc', { code: attackerCode, state: victimBack.state });
    expect([injected.status, injected.body]).toEqual([
      403,
      { success: false, message: 'OIDC 获取 Token 失败：PKCE verification failed' },
    ]);
    expect(victim.hasSession()).toBe(false);
    // The state was used once; another browser cannot use a state either.
    expect((await victim.get('/oauth/oidc', { code: victimBack.code, state: victimBack.state })).status).toBe(403);
    const other = await ssoReturn((await ssoStart(victim, 'oidc')).url);
    expect((await new Client(url).get('/oauth/oidc', { code: other.code, state: other.state })).status).toBe(403);
  });

  it('when a logged-in user signs in with OIDC, then the identity is bound, once', async () => {
    const { client } = await newUser(url);
    oidc.next.account = { sub: 'sub-binder', email: 'b@idp.example', name: 'B', preferred_username: 'b' };
    const start = await ssoStart(client, 'oidc');
    expect(start.action).toBe('bind');
    const back = await ssoReturn(start.url);
    expect((await client.get('/oauth/oidc', { code: back.code, state: back.state })).body).toEqual({
      success: true,
      message: 'bind',
    });
    expect((await client.get<UserData>('/user/self')).body.data?.oidc_id).toBe('sub-binder');
    const other = await newUser(url);
    expect((await ssoLogin(other.client, 'oidc')).body).toEqual({ success: false, message: '该 OIDC 账户已被绑定' });
  });

  it('when Linux DO vouches for an account, then it logs in; under the minimum trust level it is refused', async () => {
    expect((await new Client(url).get('/oauth/linuxdo/authorize')).body.message).toBe(
      '管理员未开启通过 Linux DO 登录以及注册',
    );
    await setOptions(root, {
      LinuxDOClientId: 'ldo-client',
      LinuxDOClientSecret: 'ldo-secret',
      LinuxDOMinimumTrustLevel: '1',
      LinuxDOOAuthEnabled: 'true',
    });
    const status = await new Client(url).get<Record<string, unknown>>('/status');
    expect(status.body.data).toMatchObject({
      linuxdo_oauth: true,
      linuxdo_client_id: 'ldo-client',
      linuxdo_minimum_trust_level: 1,
    });
    linuxdo.next.key = 'ldo';
    const res = await ssoLogin(new Client(url), 'linuxdo');
    expect(res.body.data).toMatchObject({ username: 'ldo_user', display_name: 'LDO User', linux_do_id: '4242' });
    expect(linuxdo.requests.find((r) => r.path === '/oauth2/token')?.headers.authorization).toBe(
      `Basic ${Buffer.from('ldo-client:ldo-secret').toString('base64')}`,
    );
    linuxdo.next.key = 'newbie';
    const low = new Client(url);
    const refused = await ssoLogin(low, 'linuxdo');
    expect([refused.status, refused.body.message]).toEqual([403, 'Linux DO 信任等级未达到管理员设置的最低信任等级']);
    expect(low.hasSession()).toBe(false);
  });

  it('when Discord vouches for an account, then it logs in with its snowflake id, and a bad code shows Discord reason', async () => {
    await setOptions(root, {
      'discord.client_id': 'dc-client',
      'discord.client_secret': 'dc-secret',
      'discord.enabled': 'true',
    });
    discord.next.key = 'nelly';
    const client = new Client(url);
    const res = await ssoLogin(client, 'discord');
    expect(res.body.data).toMatchObject({
      username: 'nelly',
      display_name: 'Nelly',
      email: 'nelly@discord.example',
      discord_id: '80351110224678912',
    });
    const form = new URLSearchParams(discord.requests.find((r) => r.path === '/api/v10/oauth2/token')!.body);
    expect([form.get('client_id'), form.get('client_secret'), form.get('grant_type')]).toEqual([
      'dc-client',
      'dc-secret',
      'authorization_code',
    ]);
    const start = await ssoStart(new Client(url), 'discord');
    expect(new URL(start.url).searchParams.get('scope')).toBe('identify email');
    const bad = new Client(url);
    const { state } = await ssoReturn((await ssoStart(bad, 'discord')).url);
    expect((await bad.get('/oauth/discord', { code: 'forged', state })).body.message).toBe(
      'Discord 获取 Token 失败：Invalid "code" in request.',
    );
  });

  it('when root adds a custom OAuth provider, then its users log in through the field mapping, and can list and unbind it', async () => {
    const body = {
      name: 'Acme SSO',
      slug: 'acme',
      enabled: true,
      client_id: 'acme-client',
      client_secret: 'acme-secret',
      authorization_endpoint: `${custom.url}/auth`,
      token_endpoint: `${custom.url}/token`,
      user_info_endpoint: `${custom.url}/me`,
      scopes: 'profile',
      user_id_field: 'data.uid',
      username_field: 'data.login',
      display_name_field: 'data.nick',
    };
    // A plain admin is not root: the providers are root's.
    const admin = await newUser(url);
    await root.post('/user/manage', { id: admin.id, action: 'promote' });
    await admin.client.login(admin.username, 'password123');
    expect((await admin.client.post('/custom-oauth-provider/', body)).status).toBe(403);
    expect((await root.post('/custom-oauth-provider/', { ...body, slug: 'Bad Slug!' })).body).toEqual({
      success: false,
      message: '标识符只能包含小写字母、数字和连字符',
    });
    expect((await root.post('/custom-oauth-provider/', { ...body, slug: 'oidc' })).body.success).toBe(false);
    // The form can read an OIDC discovery document (new-api's discovery route).
    const found = await root.post<{ well_known_url: string; discovery: Record<string, string> }>(
      '/custom-oauth-provider/discovery',
      { issuer_url: `${oidc.url}/` },
    );
    expect(found.body.data).toMatchObject({
      well_known_url: `${oidc.url}/.well-known/openid-configuration`,
      discovery: { token_endpoint: `${oidc.url}/token`, userinfo_endpoint: `${oidc.url}/userinfo` },
    });
    expect((await root.post('/custom-oauth-provider/discovery', { issuer_url: 'ftp://x' })).body.message).toBe(
      'Discovery URL 无效，仅支持 http/https',
    );
    const created = await root.post<{ id: number }>('/custom-oauth-provider/', body);
    expect(created.body.success, created.body.message).toBe(true);
    const id = created.body.data!.id;
    expect((await root.post('/custom-oauth-provider/', body)).body.message).toBe('标识符已存在');
    const list = await root.get<Record<string, unknown>[]>('/custom-oauth-provider/');
    expect(list.body.data).toEqual([expect.objectContaining({ id, slug: 'acme', client_id: 'acme-client' })]);
    expect(JSON.stringify(list.body.data)).not.toContain('acme-secret');
    expect(JSON.stringify((await root.get('/option/')).body)).not.toContain('acme-secret');
    const status = await new Client(url).get<{ custom_oauth_providers: unknown[] }>('/status');
    expect(status.body.data?.custom_oauth_providers).toEqual([
      {
        id,
        name: 'Acme SSO',
        slug: 'acme',
        icon: '',
        client_id: 'acme-client',
        authorization_endpoint: `${custom.url}/auth`,
        scopes: 'profile',
      },
    ]);

    custom.next.key = 'k1';
    const client = new Client(url);
    const res = await ssoLogin(client, 'acme');
    expect(res.body.data).toMatchObject({ username: 'acme_k1', display_name: 'Acme Person' });
    client.userId = res.body.data!.id;
    expect((await client.get('/user/self/oauth/bindings')).body.data).toEqual([
      {
        provider_id: id,
        provider_name: 'Acme SSO',
        provider_slug: 'acme',
        provider_icon: '',
        provider_user_id: 'acme-k1',
      },
    ]);
    expect(
      new URLSearchParams(custom.requests.find((r) => r.path === '/token')!.body).get('code_verifier'),
    ).toBeTruthy();

    // An admin sees and removes a user's binding, never root's; the user binds again from the session.
    expect((await admin.client.get('/user/1/oauth/bindings')).status).toBe(403);
    expect((await admin.client.get(`/user/${client.userId}/oauth/bindings`)).body.data).toEqual([
      expect.objectContaining({ provider_id: id, provider_user_id: 'acme-k1' }),
    ]);
    expect((await admin.client.del(`/user/${client.userId}/oauth/bindings/${id}`)).body.success).toBe(true);
    expect((await client.get('/user/self/oauth/bindings')).body.data).toEqual([]);
    expect((await ssoLogin(client, 'acme')).body).toEqual({ success: true, message: 'bind' });
    expect((await client.del(`/user/self/oauth/bindings/${id}`)).body).toEqual({ success: true, message: '解绑成功' });
    expect((await client.get('/user/self/oauth/bindings')).body.data).toEqual([]);
    expect((await client.del(`/user/self/oauth/bindings/${id}`)).body).toEqual({
      success: false,
      message: 'OAuth 绑定不存在',
    });

    // An update without a secret keeps it; disabling turns the login off.
    expect(
      (await root.put(`/custom-oauth-provider/${id}`, { ...body, client_secret: '', enabled: false })).body.success,
    ).toBe(true);
    expect((await new Client(url).get('/oauth/acme/authorize')).body.message).toBe(
      '管理员未开启通过 Acme SSO 登录以及注册',
    );
    expect((await root.del(`/custom-oauth-provider/${id}`)).body.success).toBe(true);
    expect((await new Client(url).get('/oauth/acme/authorize')).body.message).toBe('未知的 OAuth 提供商');
  });
});
