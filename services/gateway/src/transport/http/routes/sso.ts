import { createHash } from 'node:crypto';
import { ok, type Redis } from '@aigw/common';
import { denied, invalid, notFound } from '@aigw/common/errors';
import { OAuthProvider, type User } from '@aigw/proto/users/v1/users';
import type { Request, RequestHandler, Router } from 'express';
import { z } from 'zod';
import {
  type CustomOAuthProvider,
  normaliseProvider,
  type ProviderStore,
  viewOf,
} from '../../../domain/custom-oauth.ts';
import { authorizeUrl, discover, pkcePair, randomToken } from '../../../domain/sso.ts';
import { sessionUserOf, userJson } from '../../../domain/user-view.ts';
import { walletGateway } from '../../grpc/wallet-gateway.ts';
import type { RouteDeps } from '../deps.ts';
import { originOf, readCookie } from '../middleware/session.ts';
import { int, optText, pathId, id as schemaId } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { type Flow, providerStore, resolveProvider } from './sso-providers.ts';

/** The browser cookie that holds the state of the login it started (only that browser can finish it). */
const FLOW_COOKIE = 'oauth_flow';
const FLOW_TTL_S = 600;
const flowKey = (state: string) => `oauth:flow:${state}`;

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

/** The ServerAddress page a provider sends the browser back to. */
const redirectUri = ({ options }: RouteDeps, name: string) =>
  `${options.text('ServerAddress').replace(/\/+$/, '')}/oauth/${name}`;

/** Cookies are Secure when forced by COOKIE_SECURE or when this request came over HTTPS. */
const secure = ({ config }: RouteDeps, req: Request) => config.COOKIE_SECURE === 'true' || req.secure;

/** GET /api/oauth/:provider/authorize: keeps a new flow under a one-time state and answers the provider's URL. */
function startLogin(deps: RouteDeps): RequestHandler {
  return async (req, res) => {
    const { params, query } = input(req, Start);
    const p = await resolveProvider(params.provider, deps.options, deps.config);
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
    await deps.redis.set(flowKey(state), JSON.stringify(flow), 'EX', FLOW_TTL_S);
    res.cookie(FLOW_COOKIE, state, {
      httpOnly: true,
      sameSite: 'lax',
      secure: secure(deps, req),
      maxAge: FLOW_TTL_S * 1000,
      path: '/',
    });
    const url = authorizeUrl(p.authorizationEndpoint, {
      response_type: 'code',
      client_id: p.clientId,
      redirect_uri: redirectUri(deps, p.name),
      scope: p.scope,
      state,
      nonce: flow.nonce,
      ...(p.pkce ? { code_challenge: pkce.challenge, code_challenge_method: 'S256' } : {}),
    });
    ok(res, { url, state, action: flow.userId ? 'bind' : 'login' });
  };
}

/** Takes the flow of this callback once: the state must be this browser's, fresh and for this provider. */
async function takeFlow(redis: Redis, req: Request, name: string, state: string): Promise<Flow> {
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
}

/** GET /api/oauth/:provider: the provider's answer binds the account (a bind flow) or logs in, registering if new. */
function finishLogin(deps: RouteDeps): RequestHandler {
  const { clients, sessions } = deps;
  const wallets = walletGateway(clients.wallet, deps.logger);
  return async (req, res) => {
    const { params, query: q } = input(req, Callback);
    const p = await resolveProvider(params.provider, deps.options, deps.config);
    const flow = await takeFlow(deps.redis, req, p.name, q.state ?? '');
    res.clearCookie(FLOW_COOKIE, { path: '/' });
    if (q.error) throw invalid(q.error_description || q.error);
    const account = await p.account(q.code ?? '', flow, redirectUri(deps, p.name));
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
    await sessions.create(res, sessionUserOf(user), secure(deps, req), originOf(req, p.name));
    ok(res, userJson(user, await wallets.get(user.id)), '登录成功！');
  };
}

/** A user's custom-provider bindings (new-api's shape); providers deleted since are left out. */
export function bindingsOf(store: ProviderStore, ids: Record<string, string>) {
  return Object.entries(ids).flatMap(([id, providerUserId]) => {
    const p = store.providers.find((x) => x.id === Number(id));
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
}

/** The caller's and (admins) a user's custom-provider bindings: listed and removed. */
function bindingRoutes(api: Router, { clients, guard, options }: RouteDeps): void {
  /** GET /api/user/self/oauth/bindings: the caller's custom-provider bindings. */
  api.get('/user/self/oauth/bindings', guard.user, async (req, res) => {
    const { user } = await clients.users.getUser({ id: req.user!.id });
    ok(res, bindingsOf(providerStore(options), user?.customOauthIds ?? {}));
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
  const targetOf = async (req: Request, id: number): Promise<User> => {
    const { user } = await clients.users.getUser({ id });
    if (!user) throw notFound('用户不存在');
    const me = req.user!;
    if (user.role >= me.role && user.id !== me.id && me.role < 100) throw denied('无权操作同级或更高等级用户的绑定');
    return user;
  };
  /** GET /api/user/:id/oauth/bindings (admin): a user's custom-provider bindings. */
  api.get('/user/:id/oauth/bindings', guard.admin, Id, async (req, res) => {
    const user = await targetOf(req, input(req, Id).params.id);
    ok(res, bindingsOf(providerStore(options), user.customOauthIds));
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
}

/** POST /api/custom-oauth-provider/discovery: reads a discovery document for the provider form. */
const discoverProvider: RequestHandler = async (req, res) => {
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
};

/** Custom OAuth provider management (root only), new-api's /api/custom-oauth-provider. */
function customProviderRoutes(api: Router, { clients, guard, options }: RouteDeps): void {
  const store = () => providerStore(options);
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

  api.post('/custom-oauth-provider/discovery', guard.root, Discover, discoverProvider);
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
  api.get('/oauth/:provider/authorize', deps.critical, Start, startLogin(deps));
  // Registered after the other /oauth/* routes (oauthRoutes is mounted first): oidc, linuxdo,
  // discord, then the admins' providers by slug.
  api.get('/oauth/:provider', deps.critical, Callback, finishLogin(deps));
  bindingRoutes(api, deps);
  customProviderRoutes(api, deps);
}
