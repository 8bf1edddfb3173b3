import { optionAccessors } from '@aigw/common/option-catalogue';
import { describe, expect, it } from 'vitest';
import { relyingParty } from './passkeys.ts';
import type { OptionsReader } from './ports.ts';

const optionsOf = (values: Record<string, string>): OptionsReader => optionAccessors((k) => values[k]);

describe('relyingParty', () => {
  it('when only ServerAddress is set, then its origin is the origin and its host name the RP ID', () => {
    expect(
      relyingParty(optionsOf({ ServerAddress: 'https://api.example.com:8443/console', SystemName: 'Gate' })),
    ).toEqual({ id: 'api.example.com', name: 'Gate', origins: ['https://api.example.com:8443'] });
  });
  it('when passkey.origins and passkey.rp_id are set, then they win over ServerAddress', () => {
    const rp = relyingParty(
      optionsOf({
        ServerAddress: 'https://old.example.com',
        'passkey.origins': ' https://a.example.com , https://b.example.com ,',
        'passkey.rp_id': 'example.com',
        'passkey.rp_display_name': 'My Gateway',
      }),
    );
    expect(rp).toEqual({
      id: 'example.com',
      name: 'My Gateway',
      origins: ['https://a.example.com', 'https://b.example.com'],
    });
  });
  it('when an origin is plain HTTP, then only loopback hosts pass unless insecure origins are allowed', () => {
    expect(relyingParty(optionsOf({ ServerAddress: 'http://localhost:3000' })).id).toBe('localhost');
    expect(() => relyingParty(optionsOf({ ServerAddress: 'http://gw.example.com' }))).toThrow(
      'Passkey 不允许使用不安全的 Origin: http://gw.example.com',
    );
    const allowed = optionsOf({ ServerAddress: 'http://gw.example.com', 'passkey.allow_insecure_origin': 'true' });
    expect(relyingParty(allowed).origins).toEqual(['http://gw.example.com']);
  });
  it('when no origin can be told, then the answer says where to set one', () => {
    expect(() => relyingParty(optionsOf({ ServerAddress: 'not a url' }))).toThrow(/无法确定 Passkey 的 Origin/);
  });
});
