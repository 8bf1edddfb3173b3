import type { UserRecord } from './account.ts';
import { request } from './request.ts';
import type { Status } from './types.ts';

/** A custom OAuth provider as /api/status lists it (new-api's custom_oauth_providers). */
export interface CustomOAuthInfo {
  id: number;
  name: string;
  slug: string;
  icon: string;
  client_id: string;
  authorization_endpoint: string;
  scopes: string;
}

/** The single sign-on fields of /api/status (new-api's names). */
export interface SsoStatus {
  oidc_enabled?: boolean;
  oidc_client_id?: string;
  oidc_display_name?: string;
  linuxdo_oauth?: boolean;
  linuxdo_client_id?: string;
  linuxdo_minimum_trust_level?: number;
  discord_oauth?: boolean;
  discord_client_id?: string;
  custom_oauth_providers?: CustomOAuthInfo[];
}

/** A provider the console offers: its route name (oidc, linuxdo, discord or a slug) and its label. */
export interface SsoProvider {
  name: string;
  label: string;
  /** The users field of a built-in provider; custom providers are listed by /api/user/self/oauth/bindings. */
  field?: 'oidc_id' | 'linux_do_id' | 'discord_id';
  customId?: number;
}

/** The enabled providers, in new-api's order. */
export function ssoProviders(status: Status): SsoProvider[] {
  const s = status as Status & SsoStatus;
  const list: SsoProvider[] = [];
  if (s.oidc_enabled) list.push({ name: 'oidc', label: s.oidc_display_name || 'OIDC', field: 'oidc_id' });
  if (s.linuxdo_oauth) list.push({ name: 'linuxdo', label: 'Linux DO', field: 'linux_do_id' });
  if (s.discord_oauth) list.push({ name: 'discord', label: 'Discord', field: 'discord_id' });
  for (const p of s.custom_oauth_providers ?? []) list.push({ name: p.slug, label: p.name, customId: p.id });
  return list;
}

/** GET /api/oauth/:provider/authorize: the provider's authorization URL (state, PKCE and nonce kept by the server). */
export const ssoAuthorize = (provider: string, aff = '') =>
  request<{ url: string; state: string; action: 'login' | 'bind' }>(
    'GET',
    `/api/oauth/${encodeURIComponent(provider)}/authorize`,
    { params: aff ? { aff } : {} },
  );

/** Sends the browser to the provider's consent page. */
export async function startSso(provider: string): Promise<void> {
  const aff = localStorage.getItem('aff') ?? '';
  const res = await ssoAuthorize(provider, aff);
  if (res.success && res.data) window.location.assign(res.data.url);
}

/** GET /api/oauth/:provider: message 'bind' for a binding, else data is the user. */
export const ssoCallback = (provider: string, code: string, state: string) =>
  request<UserRecord>('GET', `/api/oauth/${encodeURIComponent(provider)}`, { params: { code, state }, toast: false });

/** A custom-provider binding of the caller (new-api's shape). */
export interface OAuthBinding {
  provider_id: number;
  provider_name: string;
  provider_slug: string;
  provider_icon: string;
  provider_user_id: string;
}

export const getOAuthBindings = () => request<OAuthBinding[]>('GET', '/api/user/self/oauth/bindings');
export const unbindOAuth = (providerId: number) => request('DELETE', `/api/user/self/oauth/bindings/${providerId}`);

/** A custom OAuth provider as root manages it (/api/custom-oauth-provider; the secret is write-only). */
export interface CustomOAuthProvider {
  id: number;
  name: string;
  slug: string;
  icon: string;
  enabled: boolean;
  client_id: string;
  client_secret?: string;
  authorization_endpoint: string;
  token_endpoint: string;
  user_info_endpoint: string;
  scopes: string;
  user_id_field: string;
  username_field: string;
  display_name_field: string;
  email_field: string;
  well_known: string;
  auth_style: number;
}

export const listCustomOAuth = () => request<CustomOAuthProvider[]>('GET', '/api/custom-oauth-provider/');
export const createCustomOAuth = (p: Partial<CustomOAuthProvider>) =>
  request<CustomOAuthProvider>('POST', '/api/custom-oauth-provider/', { body: p });
export const updateCustomOAuth = (id: number, p: Partial<CustomOAuthProvider>) =>
  request<CustomOAuthProvider>('PUT', `/api/custom-oauth-provider/${id}`, { body: p });
export const deleteCustomOAuth = (id: number) => request('DELETE', `/api/custom-oauth-provider/${id}`);

/** POST /api/custom-oauth-provider/discovery: an OIDC discovery document, to fill the provider form. */
export const discoverCustomOAuth = (wellKnownUrl: string) =>
  request<{
    well_known_url: string;
    discovery: { authorization_endpoint: string; token_endpoint: string; userinfo_endpoint: string };
  }>('POST', '/api/custom-oauth-provider/discovery', { body: { well_known_url: wellKnownUrl } });
