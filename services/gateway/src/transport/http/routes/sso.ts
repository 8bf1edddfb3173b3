import { createHash } from 'node:crypto';
import { ok } from '@aigw/common';
import { denied, invalid, notFound, precondition } from '@aigw/common/errors';
import { OAuthProvider } from '@aigw/proto/users/v1/users';
import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import {
  type CustomOAuthProvider,
  normaliseProvider,
  type ProviderStore,
  parseStore,
  viewOf,
} from '../../../domain/custom-oauth.ts';
import {
  authorizeUrl,
  discordAccount,
  discover,
  exchangeCode,
  linuxdoAccount,
  mappedAccount,
  oidcAccount,
  pkcePair,
  randomToken,
  type SsoAccount,
  userInfo,
  verifyIdToken,
} from '../../../domain/sso.ts';
import { sessionUserOf, userJson } from '../../../domain/user-view.ts';
import { walletGateway } from '../../grpc/wallet-gateway.ts';
import type { RouteDeps } from '../deps.ts';
import { originOf, readCookie } from '../middleware/session.ts';
import { int, optText, pathId, id as schemaId } from '../schemas.ts';
import { input, validate } from '../validate.ts';

/** The browser cookie that holds the state of the login it started (only that browser can finish it). */
const FLOW_COOKIE = 'oauth_flow';
const FLOW_TTL_S = 600;
const flowKey = (state: string) => `oauth:flow:${state}`;

/** What the server keeps of a started login until its callback (never sent to the browser). */
interface Flow {
  provider: string;
  verifier: string;
  nonce: string;
  aff: string;
  /** Bind flows: the user and the session (digest) that started them. */
  userId: number;
  session: string;
}

/** A provider ready for a login: its endpoints and how to read the account it vouches for. */
interface Resolved {
  /** The route name: oidc, linuxdo, discord or a custom provider's slug. */
  name: string;
  label: string;
  provider: OAuthProvider;
  customProviderId: number;
  clientId: string;
  clientSecret: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  scope: string;
  auth: 'basic' | 'post';
  /** PKCE (S256) and, for OIDC, a nonce in the id_token. */
  pkce: boolean;
  account(code: string, flow: Flow, redirectUri: string): Promise<SsoAccount>;
}

const sidDigest = (sid: string | undefined) => (sid ? createHash('sha256').update(sid).digest('base64url') : '');

const name = z.object({ provider: z.string().max(64) });
const Start = validate({ params: name, query: z.object({ aff: optText }) });
const Callback = validate({
  params: name,
  query: z.object({ code: optText, state: optText, error: optText, error_description: optText }),
});
const id = pathId;
const providerBody = z.record(z.string(), z.unknown());
const Id = validate({ params: id });
const IdBody = validate({ params: id, body: providerBody });
const Body = validate({ body: providerBody });
const Discover = validate({ body: z.object({ well_known_url: optText, issuer_url: optText }) });
/** A custom provider's id (an int32 in the users service's contract). */
const providerId = int(1, 2 ** 31 - 1, '无效的 ID');
const ProviderId = validate({ params: z.object({ provider_id: providerId }) });
const UserProvider = validate({
  params: z.object({ id: schemaId(), provider_id: providerId }),
});

/**
 * Single sign-on: OIDC (discovery, authorization code with PKCE S256, the id_token checked against
 * the provider's JWKS: signature, iss, aud, exp and the nonce this browser's login sent), Linux DO,
 * Discord and the admins' custom OAuth providers, with new-api's routes and option names.
 *
 * GET /api/oauth/:provider/authorize starts a login (or, from a logged-in browser, a binding): it
 * keeps the PKCE verifier and nonce server-side under a one-time state that is also set as a
 * cookie, and answers the provider's authorization URL. The provider sends the browser to the
 * console's /oauth/:provider page, which calls GET /api/oauth/:provider with the code and state.
 */
export function ssoRoutes(api: Router, deps: RouteDeps): void {
  const { clients, sessions, guard, critical, options, config, redis } = deps;
  const wallets = walletGateway(clients.wallet, deps.logger);
  const secure = (req: Request) => config.COOKIE_SECURE === 'true' || req.secure;
  const redirectUri = (name: string) => `${options.text('ServerAddress').replace(/\/+$/, '')}/oauth/${name}`;
  const store = (): ProviderStore => parseStore(options.json<unknown>('CustomOAuthProviders'));
  const notEnabled = (label: string) => precondition(`管理员未开启通过 ${label} 登录以及注册`);

  /** The OIDC provider from the options and its discovery document; configured endpoints win. */
  async function oidc(): Promise<Resolved> {
    const label = options.text('oidc.display_name').trim() || 'OIDC';
    if (!options.bool('oidc.enabled')) throw notEnabled(label);
    const wellKnown = options.text('oidc.well_known');
    if (!wellKnown) throw precondition('OIDC 未配置 Well-Known URL');
    const d = await discover(wellKnown);
    const clientId = options.text('oidc.client_id');
    const methods = d.token_endpoint_auth_methods_supported;
    const userInfoEndpoint = options.text('oidc.user_info_endpoint') || d.userinfo_endpoint;
    const clientSecret = options.text('oidc.client_secret');
    const tokenEndpoint = options.text('oidc.token_endpoint') || d.token_endpoint;
    // Discovery's default is client_secret_basic; the body only when the provider takes no other.
    const auth = methods.length > 0 && !methods.includes('client_secret_basic') ? 'post' : 'basic';
    return {
      name: 'oidc',
      label,
      provider: OAuthProvider.OIDC,
      customProviderId: 0,
      clientId,
      clientSecret,
      authorizationEndpoint: options.text('oidc.authorization_endpoint') || d.authorization_endpoint,
      tokenEndpoint,
      scope: 'openid profile email',
      auth,
      pkce: true,
      async account(code, flow, redirect) {
        const token = await exchangeCode(
          tokenEndpoint,
          { code, redirectUri: redirect, clientId, clientSecret, auth, verifier: flow.verifier },
          label,
        );
        if (!token.id_token) throw denied(`${label} 未返回 id_token`);
        const claims = await verifyIdToken(token.id_token, {
          jwksUri: d.jwks_uri,
          issuer: d.issuer,
          clientId,
          nonce: flow.nonce,
        });
        const info = userInfoEndpoint ? await userInfo(userInfoEndpoint, token.access_token, label) : undefined;
        return oidcAccount(claims, info);
      },
    };
  }

  function linuxdo(): Resolved {
    if (!options.bool('LinuxDOOAuthEnabled')) throw notEnabled('Linux DO');
    const clientId = options.text('LinuxDOClientId');
    const clientSecret = options.text('LinuxDOClientSecret');
    return {
      name: 'linuxdo',
      label: 'Linux DO',
      provider: OAuthProvider.LINUXDO,
      customProviderId: 0,
      clientId,
      clientSecret,
      authorizationEndpoint: config.LINUX_DO_AUTHORIZATION_ENDPOINT,
      tokenEndpoint: config.LINUX_DO_TOKEN_ENDPOINT,
      scope: '',
      auth: 'basic',
      pkce: false,
      async account(code, _flow, redirect) {
        const token = await exchangeCode(
          config.LINUX_DO_TOKEN_ENDPOINT,
          { code, redirectUri: redirect, clientId, clientSecret, auth: 'basic' },
          'Linux DO',
        );
        const info = await userInfo(config.LINUX_DO_USER_ENDPOINT, token.access_token, 'Linux DO');
        return linuxdoAccount(info, options.number('LinuxDOMinimumTrustLevel'));
      },
    };
  }

  function discord(): Resolved {
    if (!options.bool('discord.enabled')) throw notEnabled('Discord');
    const api = config.DISCORD_API_URL.replace(/\/+$/, '');
    const clientId = options.text('discord.client_id');
    const clientSecret = options.text('discord.client_secret');
    return {
      name: 'discord',
      label: 'Discord',
      provider: OAuthProvider.DISCORD,
      customProviderId: 0,
      clientId,
      clientSecret,
      authorizationEndpoint: `${config.DISCORD_OAUTH_URL.replace(/\/+$/, '')}/oauth2/authorize`,
      tokenEndpoint: `${api}/oauth2/token`,
      scope: 'identify email',
      auth: 'post',
      pkce: false,
      async account(code, _flow, redirect) {
        const token = await exchangeCode(
          `${api}/oauth2/token`,
          { code, redirectUri: redirect, clientId, clientSecret, auth: 'post' },
          'Discord',
        );
        return discordAccount(await userInfo(`${api}/users/@me`, token.access_token, 'Discord'));
      },
    };
  }

  function custom(p: CustomOAuthProvider): Resolved {
    if (!p.enabled) throw notEnabled(p.name);
    const auth = p.auth_style === 2 ? 'basic' : 'post';
    return {
      name: p.slug,
      label: p.name,
      provider: OAuthProvider.CUSTOM,
      customProviderId: p.id,
      clientId: p.client_id,
      clientSecret: p.client_secret,
      authorizationEndpoint: p.authorization_endpoint,
      tokenEndpoint: p.token_endpoint,
      scope: p.scopes,
      auth,
      pkce: true,
      async account(code, flow, redirect) {
        const token = await exchangeCode(
          p.token_endpoint,
          {
            code,
            redirectUri: redirect,
            clientId: p.client_id,
            clientSecret: p.client_secret,
            auth,
            verifier: flow.verifier,
          },
          p.name,
        );
        return mappedAccount(await userInfo(p.user_info_endpoint, token.access_token, p.name), p, p.name);
      },
    };
  }

  const resolve = async (name: string): Promise<Resolved> => {
    if (name === 'oidc') return oidc();
    if (name === 'linuxdo') return linuxdo();
    if (name === 'discord') return discord();
    const p = store().providers.find((x) => x.slug === name);
    if (!p) throw notFound('未知的 OAuth 提供商');
    return custom(p);
  };

  api.get('/oauth/:provider/authorize', critical, Start, async (req, res) => {
    const { params, query } = input(req, Start);
    const p = await resolve(params.provider);
    const state = randomToken(24);
    const pkce = pkcePair();
    const flow: Flow = {
      provider: p.name,
      verifier: p.pkce ? pkce.verifier : '',
      nonce: p.provider === OAuthProvider.OIDC ? randomToken(24) : '',
      aff: (query.aff ?? '').slice(0, 32),
      userId: req.sessionUser?.id ?? 0,
      session: req.sessionUser ? sidDigest(req.sessionId) : '',
    };
    await redis.set(flowKey(state), JSON.stringify(flow), 'EX', FLOW_TTL_S);
    res.cookie(FLOW_COOKIE, state, {
      httpOnly: true,
      sameSite: 'lax',
      secure: secure(req),
      maxAge: FLOW_TTL_S * 1000,
      path: '/',
    });
    const url = authorizeUrl(p.authorizationEndpoint, {
      response_type: 'code',
      client_id: p.clientId,
      redirect_uri: redirectUri(p.name),
      scope: p.scope,
      state,
      nonce: flow.nonce,
      ...(p.pkce ? { code_challenge: pkce.challenge, code_challenge_method: 'S256' } : {}),
    });
    ok(res, { url, state, action: flow.userId ? 'bind' : 'login' });
  });

  /** Takes the flow of this callback once: the state must be this browser's, fresh and for this provider. */
  const takeFlow = async (req: Request, name: string, state: string): Promise<Flow> => {
    const refused = denied('state 参数无效，请刷新页面重试');
    if (!state || state !== readCookie(req, FLOW_COOKIE)) throw refused;
    const raw = await redis.getdel(flowKey(state));
    if (!raw) throw refused;
    const flow = JSON.parse(raw) as Flow;
    if (flow.provider !== name) throw refused;
    if (flow.userId && (req.sessionUser?.id !== flow.userId || sidDigest(req.sessionId) !== flow.session)) {
      throw refused;
    }
    return flow;
  };

  // Registered after the other /oauth/* routes (oauthRoutes is mounted first): oidc, linuxdo,
  // discord, then the admins' providers by slug.
  api.get('/oauth/:provider', critical, Callback, async (req: Request, res: Response) => {
    const { params, query: q } = input(req, Callback);
    const p = await resolve(params.provider);
    const flow = await takeFlow(req, p.name, q.state ?? '');
    res.clearCookie(FLOW_COOKIE, { path: '/' });
    if (q.error) throw invalid(q.error_description || q.error);
    const account = await p.account(q.code ?? '', flow, redirectUri(p.name));
    if (flow.userId) {
      await clients.users.bindOAuthIdentity({
        userId: flow.userId,
        provider: p.provider,
        customProviderId: p.customProviderId,
        providerId: account.id,
      });
      ok(res, undefined, 'bind');
      return;
    }
    const { user } = await clients.users.loginByOAuthIdentity({
      provider: p.provider,
      customProviderId: p.customProviderId,
      providerId: account.id,
      username: account.username,
      displayName: account.displayName,
      email: account.email,
      affCode: flow.aff,
      registerIfMissing: true,
    });
    if (!user) throw denied('登录失败');
    await sessions.create(res, sessionUserOf(user), secure(req), originOf(req, p.name));
    ok(res, userJson(user, await wallets.get(user.id)), '登录成功！');
  });

  /** A user's custom-provider bindings (new-api's shape); providers deleted since are left out. */
  const bindingsOf = (ids: Record<string, string>) => {
    const providers = store().providers;
    return Object.entries(ids).flatMap(([id, providerUserId]) => {
      const p = providers.find((x) => x.id === Number(id));
      return p
        ? [
            {
              provider_id: p.id,
              provider_name: p.name,
              provider_slug: p.slug,
              provider_icon: p.icon,
              provider_user_id: providerUserId,
            },
          ]
        : [];
    });
  };

  /** GET /api/user/self/oauth/bindings: the caller's custom-provider bindings. */
  api.get('/user/self/oauth/bindings', guard.user, async (req, res) => {
    const { user } = await clients.users.getUser({ id: req.user!.id });
    ok(res, bindingsOf(user?.customOauthIds ?? {}));
  });
  api.delete('/user/self/oauth/bindings/:provider_id', guard.user, ProviderId, async (req, res) => {
    await clients.users.unbindOAuthIdentity({
      userId: req.user!.id,
      provider: OAuthProvider.CUSTOM,
      customProviderId: input(req, ProviderId).params.provider_id,
    });
    ok(res, undefined, '解绑成功');
  });

  /** An admin's target: never a peer admin or a higher role (root may act on anyone). */
  const targetOf = async (req: Request, id: number) => {
    const { user } = await clients.users.getUser({ id });
    if (!user) throw notFound('用户不存在');
    const me = req.user!;
    if (user.role >= me.role && user.id !== me.id && me.role < 100) throw denied('无权操作同级或更高等级用户的绑定');
    return user;
  };
  /** GET /api/user/:id/oauth/bindings (admin): a user's custom-provider bindings. */
  api.get('/user/:id/oauth/bindings', guard.admin, Id, async (req, res) => {
    const user = await targetOf(req, input(req, Id).params.id);
    ok(res, bindingsOf(user.customOauthIds));
  });
  /** DELETE /api/user/:id/oauth/bindings/:provider_id (admin): removes one of a user's bindings. */
  api.delete('/user/:id/oauth/bindings/:provider_id', guard.admin, UserProvider, async (req, res) => {
    const { id, provider_id } = input(req, UserProvider).params;
    await targetOf(req, id);
    await clients.users.unbindOAuthIdentity({
      userId: id,
      provider: OAuthProvider.CUSTOM,
      customProviderId: provider_id,
    });
    ok(res, undefined, '解绑成功');
  });

  // Custom OAuth provider management (root only), new-api's /api/custom-oauth-provider.
  const save = async (req: Request, next: ProviderStore) => {
    const user = req.user!;
    const { option, version } = await clients.options.updateOption({
      actor: { userId: user.id, role: user.role, username: user.username },
      key: 'CustomOAuthProviders',
      value: JSON.stringify(next),
    });
    if (option) options.apply(option.key, option.value, version);
  };
  const find = (s: ProviderStore, id: number) => {
    const p = s.providers.find((x) => x.id === id);
    if (!p) throw notFound('自定义 OAuth 提供商不存在');
    return p;
  };

  /** POST /api/custom-oauth-provider/discovery: reads a discovery document for the provider form. */
  api.post('/custom-oauth-provider/discovery', guard.root, Discover, async (req, res) => {
    const { well_known_url: wellKnown, issuer_url: issuer } = input(req, Discover).body;
    const target =
      wellKnown?.trim() ||
      (issuer?.trim() ? `${issuer.trim().replace(/\/+$/, '')}/.well-known/openid-configuration` : '');
    if (!target) throw invalid('请先填写 Discovery URL 或 Issuer URL');
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw invalid('Discovery URL 无效，仅支持 http/https');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('Discovery URL 无效，仅支持 http/https');
    ok(res, { well_known_url: target, discovery: await discover(target, 'Discovery') });
  });
  api.get('/custom-oauth-provider/', guard.root, (_req, res) => ok(res, store().providers.map(viewOf)));
  api.get('/custom-oauth-provider/:id', guard.root, Id, (req, res) =>
    ok(res, viewOf(find(store(), input(req, Id).params.id))),
  );
  api.post('/custom-oauth-provider/', guard.root, Body, async (req, res) => {
    const s = store();
    const p: CustomOAuthProvider = { id: s.next_id, ...normaliseProvider(input(req, Body).body, s.providers) };
    await save(req, { next_id: s.next_id + 1, providers: [...s.providers, p] });
    ok(res, viewOf(p), '创建成功');
  });
  api.put('/custom-oauth-provider/:id', guard.root, IdBody, async (req, res) => {
    const s = store();
    const { params, body } = input(req, IdBody);
    const old = find(s, params.id);
    const others = s.providers.filter((x) => x.id !== old.id);
    const p: CustomOAuthProvider = { id: old.id, ...normaliseProvider(body, others, old) };
    await save(req, { ...s, providers: s.providers.map((x) => (x.id === p.id ? p : x)) });
    ok(res, viewOf(p), '更新成功');
  });
  api.delete('/custom-oauth-provider/:id', guard.root, Id, async (req, res) => {
    const s = store();
    const old = find(s, input(req, Id).params.id);
    await save(req, { ...s, providers: s.providers.filter((x) => x.id !== old.id) });
    ok(res, undefined, '删除成功');
  });
}
