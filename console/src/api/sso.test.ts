import { describe, expect, it } from 'vitest';
import { ssoProviders } from './sso.ts';
import type { Status } from './types.ts';

describe('single sign-on providers from /api/status', () => {
  it('when providers are on, then each gets a button in new-api order with its label and binding field', () => {
    const status = {
      oidc_enabled: true,
      oidc_display_name: 'Corp SSO',
      linuxdo_oauth: true,
      discord_oauth: false,
      custom_oauth_providers: [
        {
          id: 3,
          name: 'Acme',
          slug: 'acme',
          icon: '',
          client_id: 'c',
          authorization_endpoint: 'https://acme.example/auth',
          scopes: 'openid',
        },
      ],
    } as unknown as Status;
    expect(ssoProviders(status)).toEqual([
      { name: 'oidc', label: 'Corp SSO', field: 'oidc_id' },
      { name: 'linuxdo', label: 'Linux DO', field: 'linux_do_id' },
      { name: 'acme', label: 'Acme', customId: 3 },
    ]);
  });

  it('when none is on, then there is no button', () => {
    expect(ssoProviders({} as Status)).toEqual([]);
  });
});
