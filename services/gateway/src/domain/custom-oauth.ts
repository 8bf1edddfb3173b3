import { conflict, invalid } from '@aigw/common/errors';

/**
 * Custom OAuth providers configured by admins (new-api's custom_oauth_providers, same field
 * names). They are kept in the write-only option CustomOAuthProviders; the client secret never
 * leaves the server.
 */
export interface CustomOAuthProvider {
  id: number;
  name: string;
  /** The URL name: /oauth/<slug> in the console, /api/oauth/<slug> for the callback. */
  slug: string;
  icon: string;
  enabled: boolean;
  client_id: string;
  client_secret: string;
  authorization_endpoint: string;
  token_endpoint: string;
  user_info_endpoint: string;
  scopes: string;
  user_id_field: string;
  username_field: string;
  display_name_field: string;
  email_field: string;
  well_known: string;
  /** How the client authenticates at the token endpoint: 0 auto (in the body), 1 in the body, 2 HTTP Basic. */
  auth_style: number;
}

export type CustomOAuthView = Omit<CustomOAuthProvider, 'client_secret'>;

/** Names taken by the built-in providers and the other /api/oauth routes. */
const RESERVED = new Set(['github', 'wechat', 'telegram', 'oidc', 'linuxdo', 'discord', 'state', 'email']);

const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

function httpUrl(v: string, label: string): string {
  if (!v) throw invalid(`${label}不能为空`);
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw invalid(`${label}不是合法的 URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid(`${label}必须是 http 或 https 地址`);
  return v;
}

/** The option's value: the providers and the next id to give (ids are never reused, bindings name them). */
export interface ProviderStore {
  next_id: number;
  providers: CustomOAuthProvider[];
}

/** Reads the stored value, skipping entries that are not providers. */
export function parseStore(raw: unknown): ProviderStore {
  const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Partial<ProviderStore>;
  const providers = (Array.isArray(o.providers) ? o.providers : []).filter(
    (p): p is CustomOAuthProvider => typeof p === 'object' && p !== null && Number(p.id) > 0,
  );
  const next = Math.max(Number(o.next_id) || 1, ...providers.map((p) => p.id + 1));
  return { next_id: next, providers };
}

export const viewOf = ({ client_secret: _secret, ...rest }: CustomOAuthProvider): CustomOAuthView => rest;

/**
 * Checks an admin's create or update body against the others (new-api's rules: a name, a slug of
 * lowercase letters, digits and hyphens not used by another provider, the client id and the three
 * endpoints; field paths and scopes get OIDC defaults). On update a missing secret keeps the old one.
 */
export function normaliseProvider(
  body: Record<string, unknown>,
  others: CustomOAuthProvider[],
  existing?: CustomOAuthProvider,
): Omit<CustomOAuthProvider, 'id'> {
  const name = text(body.name);
  if (!name) throw invalid('提供商名称不能为空');
  if ([...name].length > 64) throw invalid('提供商名称不能超过 64 个字符');
  const slug = text(body.slug).toLowerCase();
  if (!slug) throw invalid('标识符不能为空');
  if (!/^[a-z0-9-]{1,64}$/.test(slug)) throw invalid('标识符只能包含小写字母、数字和连字符');
  if (RESERVED.has(slug)) throw invalid(`标识符 ${slug} 为内置登录方式保留`);
  if (others.some((p) => p.slug === slug)) throw conflict('标识符已存在');
  const clientId = text(body.client_id);
  if (!clientId) throw invalid('Client ID 不能为空');
  const clientSecret = text(body.client_secret) || existing?.client_secret || '';
  if (!clientSecret) throw invalid('Client Secret 不能为空');
  const authStyle = body.auth_style === undefined ? 0 : Number(body.auth_style);
  if (![0, 1, 2].includes(authStyle)) throw invalid('auth_style 必须是 0、1 或 2');
  const wellKnown = text(body.well_known);
  return {
    name,
    slug,
    icon: text(body.icon).slice(0, 128),
    enabled: body.enabled === true,
    client_id: clientId,
    client_secret: clientSecret,
    authorization_endpoint: httpUrl(text(body.authorization_endpoint), '授权端点'),
    token_endpoint: httpUrl(text(body.token_endpoint), 'Token 端点'),
    user_info_endpoint: httpUrl(text(body.user_info_endpoint), '用户信息端点'),
    scopes: text(body.scopes) || 'openid profile email',
    user_id_field: text(body.user_id_field) || 'sub',
    username_field: text(body.username_field) || 'preferred_username',
    display_name_field: text(body.display_name_field) || 'name',
    email_field: text(body.email_field) || 'email',
    well_known: wellKnown ? httpUrl(wellKnown, 'Well-Known URL ') : '',
    auth_style: authStyle,
  };
}
