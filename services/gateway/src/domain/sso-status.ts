import type { OptionAccessors } from '@aigw/common/option-catalogue';
import { parseStore } from './custom-oauth.ts';

/** A custom provider as /api/status shows it (new-api's custom_oauth_providers entries). */
export interface CustomOAuthInfo {
  id: number;
  name: string;
  slug: string;
  icon: string;
  client_id: string;
  authorization_endpoint: string;
  scopes: string;
}

/** The single sign-on part of /api/status, with new-api's field names; no secret. */
export interface SsoStatus {
  oidc_enabled: boolean;
  oidc_client_id: string;
  oidc_authorization_endpoint: string;
  oidc_display_name: string;
  linuxdo_oauth: boolean;
  linuxdo_client_id: string;
  linuxdo_minimum_trust_level: number;
  discord_oauth: boolean;
  discord_client_id: string;
  custom_oauth_providers: CustomOAuthInfo[];
}

export function ssoStatus(r: OptionAccessors): SsoStatus {
  return {
    oidc_enabled: r.bool('oidc.enabled'),
    oidc_client_id: r.text('oidc.client_id'),
    oidc_authorization_endpoint: r.text('oidc.authorization_endpoint'),
    oidc_display_name: r.text('oidc.display_name').trim() || 'OIDC',
    linuxdo_oauth: r.bool('LinuxDOOAuthEnabled'),
    linuxdo_client_id: r.text('LinuxDOClientId'),
    linuxdo_minimum_trust_level: r.number('LinuxDOMinimumTrustLevel'),
    discord_oauth: r.bool('discord.enabled'),
    discord_client_id: r.text('discord.client_id'),
    custom_oauth_providers: parseStore(r.json<unknown>('CustomOAuthProviders'))
      .providers.filter((p) => p.enabled)
      .map((p) => ({
        id: p.id,
        name: p.name,
        slug: p.slug,
        icon: p.icon,
        client_id: p.client_id,
        authorization_endpoint: p.authorization_endpoint,
        scopes: p.scopes,
      })),
  };
}
