import { optionAccessors } from '@aigw/common/option-catalogue';
import { describe, expect, it } from 'vitest';
import type { OptionsReader } from './ports.ts';
import { checkEmail, checkPassword, checkUsername, formatQuota, randomString } from './user-rules.ts';

// The cache's own accessors over a plain record: an option left out reads as its catalogue default.
const optionsOf = (values: Record<string, string>): OptionsReader => optionAccessors((k) => values[k]);

describe('user rules', () => {
  it('when a username is blank or longer than 12 characters, then it is refused', () => {
    expect(() => checkUsername('  ')).toThrow('用户名不能为空');
    expect(() => checkUsername('abcdefghijklm')).toThrow('用户名长度不得大于 12 位！');
    expect(checkUsername(' 中文用户名 ')).toBe('中文用户名');
  });

  it('when a password is outside 8 to 20 characters, then the spec message is given', () => {
    expect(() => checkPassword('1234567')).toThrow('密码长度不得小于 8 位！');
    expect(() => checkPassword('x'.repeat(21))).toThrow('密码长度不得大于 20 位！');
    expect(checkPassword('12345678')).toBe('12345678');
  });

  it('when the domain whitelist is on, then only listed domains pass (case-insensitive)', () => {
    const options = optionsOf({ EmailDomainRestrictionEnabled: 'true', EmailDomainWhitelist: 'Example.com, qq.com' });
    expect(checkEmail('A@EXAMPLE.com', options)).toBe('a@example.com');
    expect(() => checkEmail('a@other.com', options)).toThrow('白名单');
  });

  it('when aliases are restricted, then a plus or a dot in the local part is refused', () => {
    const options = optionsOf({ EmailAliasRestrictionEnabled: 'true' });
    expect(() => checkEmail('me+x@example.com', options)).toThrow('别名限制');
    expect(() => checkEmail('m.e@example.com', options)).toThrow('别名限制');
    expect(checkEmail('me@mail.example.com', options)).toBe('me@mail.example.com');
    expect(() => checkEmail('no-at-sign', optionsOf({}))).toThrow('无效的邮箱地址');
  });

  it('when quota is formatted, then it follows DisplayInCurrencyEnabled and QuotaPerUnit', () => {
    expect(formatQuota(500000, optionsOf({}))).toBe('$1.00');
    expect(formatQuota(250000, optionsOf({ QuotaPerUnit: '500000' }))).toBe('$0.50');
    expect(formatQuota(1234, optionsOf({ DisplayInCurrencyEnabled: 'false' }))).toBe('1234 点额度');
  });

  it('when random strings are drawn, then they have the length and alphabet asked for', () => {
    expect(randomString(32)).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(randomString(6, '0123456789')).toMatch(/^\d{6}$/);
  });
});
