import { AppError, precondition } from '@aigw/common/errors';
import nodemailer from 'nodemailer';
import { OPTION_CATALOGUE } from '../domain/option-catalogue.ts';
import type { Mailer, OptionsReader } from '../domain/ports.ts';

/**
 * Sends mail through the SMTP options (SMTPServer, SMTPPort, SMTPAccount, SMTPToken, SMTPFrom,
 * SMTPSSLEnabled), read on every send so that a settings change applies at once. Port 465 always
 * uses implicit TLS; other ports upgrade with STARTTLS when the server offers it.
 */
export function smtpMailer(options: OptionsReader, onError: (err: unknown) => void = () => {}): Mailer {
  return {
    async send(to, subject, html) {
      const host = options.text('SMTPServer').trim();
      if (!host) throw precondition('SMTP 服务器未配置，请联系管理员');
      const port = options.number('SMTPPort');
      const account = options.text('SMTPAccount').trim();
      const from = options.text('SMTPFrom').trim() || account;
      const transport = nodemailer.createTransport({
        host,
        port,
        secure: port === 465 || options.bool('SMTPSSLEnabled'),
        ...(account ? { auth: { user: account, pass: options.text('SMTPToken') } } : {}),
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 20_000,
      });
      try {
        // A name the admin cleared reads as unset: the mail's sender is never nameless.
        const name = options.text('SystemName') || OPTION_CATALOGUE.SystemName.default;
        await transport.sendMail({ from: `${name} <${from}>`, to, subject, html });
      } catch (err) {
        onError(err);
        throw new AppError('FAILED_PRECONDITION', '邮件发送失败，请检查邮箱地址或联系管理员', { cause: err });
      } finally {
        transport.close();
      }
    },
  };
}
