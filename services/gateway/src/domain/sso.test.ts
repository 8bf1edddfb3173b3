import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { normaliseProvider, parseStore, viewOf } from './custom-oauth.ts';
import { authorizeUrl, discordAccount, linuxdoAccount, mappedAccount, oidcAccount, pick, pkcePair } from './sso.ts';

const fields = { user_id_field: 'data.uid', username_field: 'data.login', display_name_field: '', email_field: '' };

describe('single sign-on: reading what a provider vouches for', () => {
  it('when a PKCE pair is made, then the challenge is the S256 of the verifier (RFC 7636)', () => {
    const { verifier, challenge } = pkcePair();
    expect(verifier).toMatch(/^[\w-]{43,128}$/);
    expect(challenge).toBe(createHash('sha256').update(verifier).digest('base64url'));
  });

  it('when field paths are dotted, then nested user-info fields are read, and a missing id is refused', () => {
    expect(pick({ data: { user: { id: 7 } } }, 'data.user.id')).toBe(7);
    expect(pick({ a: 'x' }, 'a.b')).toBeUndefined();
    expect(mappedAccount({ data: { uid: 42, login: 'u' }, name: 'N', email: 'e@x' }, fields, 'Acme')).toEqual({
      id: '42',
      username: 'u',
      displayName: 'N',
      email: 'e@x',
    });
    expect(() => mappedAccount({ data: {} }, fields, 'Acme')).toThrow('无法从 Acme 的响应中提取用户 ID');
  });

  it('when Discord has not verified the email, then it is not taken; Linux DO under the minimum trust level is refused', () => {
    const user = { id: '80351110224678912', username: 'nelly', global_name: 'Nelly', email: 'n@x', verified: false };
    expect(discordAccount(user).email).toBe('');
    expect(discordAccount({ ...user, verified: true }).email).toBe('n@x');
    expect(() => discordAccount({ id: '1' })).toThrow('Discord 获取用户信息为空');
    expect(linuxdoAccount({ id: 5, username: 'l', name: 'L', trust_level: 2 }, 2).id).toBe('5');
    expect(() => linuxdoAccount({ id: 5, trust_level: 1 }, 2)).toThrow(
      'Linux DO 信任等级未达到管理员设置的最低信任等级',
    );
  });

  it('when the user-info sub differs from the id_token sub, then the login is refused', () => {
    expect(oidcAccount({ sub: 's1', email: 'a@x' }, { sub: 's1', preferred_username: 'p' })).toEqual({
      id: 's1',
      username: 'p',
      displayName: '',
      email: 'a@x',
    });
    expect(() => oidcAccount({ sub: 's1' }, { sub: 's2' })).toThrow('OIDC 用户信息的 sub 与 id_token 不一致');
  });

  it('when an authorization URL is built, then the endpoint query is kept and empty parameters are left out', () => {
    const url = new URL(authorizeUrl('https://idp.example/auth?tenant=t1', { client_id: 'c', scope: '', state: 's' }));
    expect(Object.fromEntries(url.searchParams)).toEqual({ tenant: 't1', client_id: 'c', state: 's' });
    expect(() => authorizeUrl('not a url', {})).toThrow('授权端点地址无效，请检查设置');
  });
});

describe('custom OAuth providers: what root may save', () => {
  const body = {
    name: 'Acme',
    slug: 'Acme-SSO',
    client_id: 'c',
    client_secret: 's',
    authorization_endpoint: 'https://a.example/auth',
    token_endpoint: 'https://a.example/token',
    user_info_endpoint: 'https://a.example/me',
  };

  it('when fields are left out, then new-api defaults apply and the slug is lowercased', () => {
    expect(normaliseProvider(body, [])).toMatchObject({
      slug: 'acme-sso',
      enabled: false,
      scopes: 'openid profile email',
      user_id_field: 'sub',
      username_field: 'preferred_username',
      display_name_field: 'name',
      email_field: 'email',
      auth_style: 0,
    });
  });

  it('when a field is wrong, then it is refused with the reason', () => {
    expect(() => normaliseProvider({ ...body, slug: 'discord' }, [])).toThrow('标识符 discord 为内置登录方式保留');
    expect(() => normaliseProvider({ ...body, token_endpoint: 'ftp://x' }, [])).toThrow(
      'Token 端点必须是 http 或 https 地址',
    );
    expect(() => normaliseProvider({ ...body, client_secret: '' }, [])).toThrow('Client Secret 不能为空');
    expect(() => normaliseProvider({ ...body, auth_style: 5 }, [])).toThrow('auth_style 必须是 0、1 或 2');
    const stored = { id: 1, ...normaliseProvider(body, []) };
    expect(() => normaliseProvider(body, [stored])).toThrow('标识符已存在');
  });

  it('when an update leaves the secret empty, then the stored one is kept, and views never carry it', () => {
    const stored = { id: 1, ...normaliseProvider(body, []) };
    expect(normaliseProvider({ ...body, client_secret: '' }, [], stored).client_secret).toBe('s');
    expect(viewOf(stored)).not.toHaveProperty('client_secret');
  });

  it('when the stored value is read, then next_id stays above every id (ids are never reused)', () => {
    expect(parseStore({ next_id: 1, providers: [{ id: 4 }, { nope: true }] })).toEqual({
      next_id: 5,
      providers: [{ id: 4 }],
    });
    expect(parseStore('garbage')).toEqual({ next_id: 1, providers: [] });
  });
});
