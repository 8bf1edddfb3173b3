import { randomInt } from 'node:crypto';
import { invalid } from '@aigw/common/errors';
import type { OptionsReader } from './ports.ts';

/** Client-facing messages (spec 01 section 5 where it gives them, one-api's wording otherwise). */
export const MSG = {
  usernameRequired: '用户名不能为空',
  usernameTooLong: '用户名长度不得大于 12 位！',
  displayNameTooLong: '显示名称长度不得大于 20 位！',
  passwordTooShort: '密码长度不得小于 8 位！',
  passwordTooLong: '密码长度不得大于 20 位！',
  passwordsDiffer: '两次输入的密码不一致',
  loginEmpty: '请输入用户名和密码！',
  loginFailed: '用户名或密码错误，或用户已被封禁',
  passwordLoginOff: '管理员关闭了密码登录',
  registerOff: '管理员关闭了新用户注册',
  passwordRegisterOff: '管理员关闭了通过密码进行注册，请使用第三方账户验证的形式进行注册',
  emailCodeRequired: '管理员开启了邮箱验证，请输入邮箱地址和验证码',
  codeInvalid: '验证码错误或已过期',
  usernameTaken: '用户名已存在，或已注销',
  emailTaken: '邮箱地址已被占用',
  emailInvalid: '无效的邮箱地址',
  emailDomainRestricted: '管理员启用了邮箱域名白名单，您的邮箱地址的域名不在白名单中',
  emailAliasRestricted: '管理员已启用邮箱地址别名限制，您的邮箱地址由于包含特殊符号而被拒绝。',
  resendTooSoon: '发送过于频繁，请 30 秒后再试',
  emailNotRegistered: '该邮箱地址未注册',
  resetLinkInvalid: '重置链接非法或已过期',
  userNotFound: '用户不存在',
  userBanned: '用户已被封禁',
  noHigherRole: '无权更新同权限等级或更高权限等级的用户信息',
  noRaiseRole: '无权将其他用户权限等级提升到大于等于自己的权限等级',
  noCreateRole: '无法创建权限大于等于自己的用户',
  cannotDisableRoot: '无法禁用超级管理员用户',
  cannotDeleteRoot: '无法删除超级管理员用户',
  cannotDemoteRoot: '无法降级超级管理员用户',
  alreadyAdmin: '该用户已经是管理员',
  alreadyCommon: '该用户已经是普通用户',
  adminCannotPromote: '普通管理员用户无法提升其他用户为管理员',
  rootSelfDelete: '不能删除超级管理员账户',
  originalPasswordWrong: '原密码错误',
  affTooLow: '划转金额最低为',
  affShort: '邀请额度不足！',
  creditPending: '额度服务暂时不可用，划转会在恢复后自动到账',
} as const;

/** Checks a username (required, at most 12 characters) and returns it trimmed. */
export function checkUsername(raw: string): string {
  const username = raw.trim();
  if (!username) throw invalid(MSG.usernameRequired);
  if ([...username].length > 12) throw invalid(MSG.usernameTooLong);
  return username;
}

/** Checks a password: 8 to 20 characters (spec 01 section 5). */
export function checkPassword(password: string): string {
  if (password.length < 8) throw invalid(MSG.passwordTooShort);
  if (password.length > 20) throw invalid(MSG.passwordTooLong);
  return password;
}

export function checkDisplayName(raw: string | undefined, fallback: string): string {
  const name = (raw ?? '').trim() || fallback;
  if ([...name].length > 20) throw invalid(MSG.displayNameTooLong);
  return name;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Checks an email address against the format and the admin's restrictions: the domain whitelist
 * (EmailDomainRestrictionEnabled) and aliases (EmailAliasRestrictionEnabled: '+' or '.' in the
 * local part). Returns it trimmed and lower-cased.
 */
export function checkEmail(raw: string, options: OptionsReader): string {
  const email = raw.trim().toLowerCase();
  if (!EMAIL.test(email) || email.length > 50) throw invalid(MSG.emailInvalid);
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (options.bool('EmailDomainRestrictionEnabled')) {
    const allowed = options
      .text('EmailDomainWhitelist')
      .split(',')
      .map((d) => d.trim().toLowerCase())
      .filter(Boolean);
    if (!allowed.includes(domain)) throw invalid(MSG.emailDomainRestricted);
  }
  if (options.bool('EmailAliasRestrictionEnabled') && /[+.]/.test(local)) throw invalid(MSG.emailAliasRestricted);
  return email;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random string from a cryptographic source. */
export function randomString(length: number, alphabet = ALNUM): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** The email verification code: 6 digits. */
export const newVerificationCode = () => randomString(6, '0123456789');

/** Formats a quota amount the way the console shows it (dollars when DisplayInCurrency is on). */
export function formatQuota(quota: number, options: OptionsReader): string {
  const perUnit = options.number('QuotaPerUnit');
  if (options.bool('DisplayInCurrencyEnabled')) return `$${(quota / perUnit).toFixed(2)}`;
  return `${quota} 点额度`;
}
