import { ok } from '@aigw/common';
import type { Request, RequestHandler, Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { body, optText, pathId } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { actorOf, caller } from './wire.ts';

const Code = validate({ body: body({ code: optText }) });
const NoInput = validate({ body: body({}) });
const ById = validate({ params: pathId });

/** No cache for answers that carry secrets or codes. */
const noStore: RequestHandler = (_req, res, next) => {
  res.set('Cache-Control', 'no-store');
  next();
};
const codeOf = (req: Request) => input(req, Code).body.code ?? '';

/**
 * TOTP 2FA of the caller's own account and its administration (new-api's /api/user/2fa/*). The
 * second step of a password login (POST /api/user/login/2fa) is in account.ts with the login.
 */
export function twoFactorRoutes(api: Router, { clients, guard, audit, sessions }: RouteDeps): void {
  const { users } = clients;
  /** A system log entry (type 4) of the caller's own security change, as new-api records. */
  const logSelf = (req: Request, content: string) => {
    const me = caller(req);
    return audit({ userId: me.id, username: me.username, type: 4, content, actorUserId: me.id, ip: req.ip ?? '' });
  };

  api.get('/user/2fa/status', guard.user, async (req, res) => {
    const s = await users.getTwoFactorStatus({ userId: caller(req).id });
    ok(res, {
      enabled: s.enabled,
      locked: s.locked,
      ...(s.enabled ? { backup_codes_remaining: s.backupCodesRemaining } : {}),
    });
  });

  api.post('/user/2fa/setup', guard.user, noStore, NoInput, async (req, res) => {
    const s = await users.setupTwoFactor({ userId: caller(req).id });
    ok(
      res,
      { secret: s.secret, qr_code_data: s.qrCodeData, backup_codes: s.backupCodes },
      '2FA设置初始化成功，请使用认证器扫描二维码并输入验证码完成设置',
    );
  });

  api.post('/user/2fa/enable', guard.user, noStore, Code, async (req, res) => {
    await users.enableTwoFactor({ userId: caller(req).id, code: codeOf(req) });
    await logSelf(req, '成功启用两步验证');
    ok(res, undefined, '两步验证启用成功');
  });

  api.post('/user/2fa/disable', guard.user, noStore, Code, async (req, res) => {
    await users.disableTwoFactor({ userId: caller(req).id, code: codeOf(req) });
    await logSelf(req, '禁用两步验证');
    ok(res, undefined, '两步验证已禁用');
  });

  api.post('/user/2fa/backup_codes', guard.user, noStore, Code, async (req, res) => {
    const r = await users.regenerateBackupCodes({ userId: caller(req).id, code: codeOf(req) });
    ok(res, { backup_codes: r.backupCodes }, '备用码重新生成成功');
  });

  api.get('/user/2fa/stats', guard.admin, async (_req, res) => {
    const s = await users.getTwoFactorStats({});
    const rate = s.totalUsers > 0 ? (s.enabledUsers / s.totalUsers) * 100 : 0;
    ok(res, { total_users: s.totalUsers, enabled_users: s.enabledUsers, enabled_rate: `${rate.toFixed(1)}%` });
  });

  api.delete('/user/:id/2fa', guard.admin, ById, async (req, res) => {
    const { id } = input(req, ById).params;
    await users.adminDisableTwoFactor({ actor: actorOf(req), id });
    // As new-api: the user logs in again under the changed security settings.
    await sessions.destroyAllOf(id);
    ok(res, undefined, '用户2FA已被强制禁用');
  });
}
