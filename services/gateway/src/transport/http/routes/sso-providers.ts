import type { OptionsCache } from '@aigw/common';
import { denied, notFound, precondition } from '@aigw/common/errors';
import { OAuthProvider } from '@aigw/proto/users/v1/users';
import type { Config } from '../../../config.ts';
import { type CustomOAuthProvider, type ProviderStore, parseStore } from '../../../domain/custom-oauth.ts';
import {
  discordAccount,
  discover,
  exchangeCode,
  linuxdoAccount,
  mappedAccount,
  oidcAccount,
  type SsoAccount,
  userInfo,
  verifyIdToken,
} from '../../../domain/sso.ts';

/** What the server keeps of a started login until its callback (never sent to the browser). */
export interface Flow {
  provider: string;
  verifier: string;
  nonce: string;
  aff: string;
  /** Bind flows: the user and the session (digest) that started them. */
  userId: number;
  session: string;
}

/** A provider ready for a login: its endpoints and how to read the account it vouches for. */
export interface Resolved {
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

type Options = Pick<OptionsCache, 'text' | 'bool' | 'number' | 'json'>;

const notEnabled = (label: string) => precondition(`管理员未开启通过 ${label} 登录以及注册`);

/** The admins' custom OAuth providers (the CustomOAuthProviders option). */
export const providerStore = (options: Options): ProviderStore =>
  parseStore(options.json<unknown>('CustomOAuthProviders'));

/** The OIDC provider from the options and its discovery document; configured endpoints win. */
export async function oidcProvider(options: Options): Promise<Resolved> {
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

/** Linux DO (LinuxDOOAuthEnabled, its client and the minimum trust level). */
export function linuxdoProvider(options: Options, config: Config): Resolved {
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

/** Discord (discord.enabled and its client). */
export function discordProvider(options: Options, config: Config): Resolved {
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

/** An admin's custom provider: its endpoints, and the account read through its field mapping. */
export function customProvider(p: CustomOAuthProvider): Resolved {
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

/** The provider a route names: oidc, linuxdo, discord, then the admins' providers by slug. */
export async function resolveProvider(name: string, options: Options, config: Config): Promise<Resolved> {
  if (name === 'oidc') return oidcProvider(options);
  if (name === 'linuxdo') return linuxdoProvider(options, config);
  if (name === 'discord') return discordProvider(options, config);
  const p = providerStore(options).providers.find((x) => x.slug === name);
  if (!p) throw notFound('未知的 OAuth 提供商');
  return customProvider(p);
}
