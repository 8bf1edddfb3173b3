import { conflict, invalid, notFound, precondition } from '@aigw/common/errors';
import { EMAIL_CODE } from './accounts.ts';
import { OPTION_CATALOGUE } from './option-catalogue.ts';
import { hashPassword } from './password.ts';
import type { CodeStore, Mailer, OptionsReader, UserRecord, UserStore } from './ports.ts';
import { checkEmail, MSG, newVerificationCode, randomString } from './user-rules.ts';

/** Codes and reset links stay valid this long (one-api: 10 minutes). */
export const CODE_TTL_MS = 10 * 60_000;
/** A new code for the same address waits this long (spec 01 section 9: 30 s). */
export const RESEND_GUARD_MS = 30_000;
const RESET = 'reset';

export interface EmailFlowDeps {
  users: UserStore;
  codes: CodeStore;
  mailer: Mailer;
  options: OptionsReader;
  /** Overrides CODE_TTL_MS (tests of expiry). */
  codeTtlMs?: number;
}

/** Email verification codes, email binding and password reset by mail. */
export function emailFlows({ users, codes, mailer, options, codeTtlMs = CODE_TTL_MS }: EmailFlowDeps) {
  const minutes = Math.max(1, Math.round(codeTtlMs / 60_000));
  // A name the admin cleared reads as unset: the mails never sign with an empty name.
  const systemName = () => options.text('SystemName') || OPTION_CATALOGUE.SystemName.default;

  /** Stores a code (30 s resend guard) and mails it; the code is dropped when the mail fails. */
  async function issueAndSend(purpose: string, email: string, code: string, subject: string, html: string) {
    if (!(await codes.issue(purpose, email, code, codeTtlMs, RESEND_GUARD_MS))) {
      throw precondition(MSG.resendTooSoon);
    }
    try {
      await mailer.send(email, subject, html);
    } catch (err) {
      await codes.discard(purpose, email);
      throw err;
    }
  }

  return {
    /** GET /api/verification: a 6-digit code for registration or binding. */
    async sendVerification(rawEmail: string): Promise<void> {
      const email = checkEmail(rawEmail, options);
      if (await users.findBy('email', email)) throw conflict(MSG.emailTaken);
      const code = newVerificationCode();
      const name = systemName();
      await issueAndSend(
        EMAIL_CODE,
        email,
        code,
        `${name}邮箱验证邮件`,
        `<p>您好，你正在进行${name}邮箱验证。</p><p>您的验证码为: <strong>${code}</strong></p>` +
          `<p>验证码 ${minutes} 分钟内有效，如果不是本人操作，请忽略。</p>`,
      );
    },

    /** GET /api/oauth/email/bind. */
    async bindEmail(userId: number, rawEmail: string, code: string): Promise<UserRecord> {
      if (!rawEmail.trim()) throw invalid('请输入邮箱！');
      if (!code.trim()) throw invalid('请输入邮箱验证码！');
      const email = checkEmail(rawEmail, options);
      const holder = await users.findBy('email', email);
      if (holder && holder.id !== userId) throw conflict(MSG.emailTaken);
      if (!(await codes.consume(EMAIL_CODE, email, code.trim()))) throw invalid(MSG.codeInvalid);
      const user = await users.update(userId, { email });
      if (!user) throw notFound(MSG.userNotFound);
      return user;
    },

    /** GET /api/reset_password: mails a link to /user/reset with a one-time token. */
    async sendReset(rawEmail: string): Promise<void> {
      const email = rawEmail.trim().toLowerCase();
      if (!email) throw invalid(MSG.emailInvalid);
      if (!(await users.findBy('email', email))) throw notFound(MSG.emailNotRegistered);
      const token = randomString(32);
      const address = options.text('ServerAddress').replace(/\/+$/, '');
      const link = `${address}/user/reset?email=${encodeURIComponent(email)}&token=${token}`;
      const name = systemName();
      await issueAndSend(
        RESET,
        email,
        token,
        `${name}密码重置`,
        `<p>您好，你正在进行${name}密码重置。</p><p>点击 <a href="${link}">此处</a> 进行密码重置。</p>` +
          `<p>如果链接无法点击，请尝试点击下面的链接或将其复制到浏览器中打开：<br> ${link} </p>` +
          `<p>重置链接 ${minutes} 分钟内有效，如果不是本人操作，请忽略。</p>`,
      );
    },

    /** POST /api/user/reset: checks the mailed token once; sets and returns a new password. */
    async resetPassword(rawEmail: string, token: string): Promise<{ user: UserRecord; password: string }> {
      const email = rawEmail.trim().toLowerCase();
      if (!email || !token || !(await codes.consume(RESET, email, token))) throw invalid(MSG.resetLinkInvalid);
      const user = await users.findBy('email', email);
      if (!user) throw invalid(MSG.resetLinkInvalid);
      const password = randomString(12);
      const updated = await users.update(user.id, { password_hash: await hashPassword(password) });
      if (!updated) throw invalid(MSG.resetLinkInvalid);
      return { user: updated, password };
    },
  };
}

export type EmailFlows = ReturnType<typeof emailFlows>;
