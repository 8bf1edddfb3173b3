import { ok } from '@aigw/common';
import { AppError, invalid } from '@aigw/common/errors';
import type { Request, RequestHandler, Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { isProofScope, type SecurityProofs, securityProofs } from '../middleware/security-proof.ts';
import { body, optText, pathId } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { caller } from './wire.ts';

const Verify = validate({ body: body({ method: optText, code: optText, password: optText, scope: optText }) });
const KeyOf = validate({ params: pathId, body: body({}) });

const METHOD_LABEL = { '2fa': '2FA', password: '密码' } as const;

/**
 * Re-verification (new-api's secure verification): POST /api/verify checks a 2FA code, or (ours)
 * the password, and answers a proof token for one scope, good for five minutes in this login
 * session; a passkey proves the same through /api/user/passkey/verify/*. Routes that reveal or
 * change secrets require the proof in `X-Security-Proof`: POST /api/token/:id/key (new-api's full
 * key of a token) here, and a password change (user.ts) through `passwordChangeProof`.
 */
export function secureVerificationRoutes(api: Router, deps: RouteDeps): void {
  const { clients, guard, critical, redis, audit } = deps;
  const proofs = securityProofs(redis);

  api.post('/verify', guard.user, critical, Verify, async (req, res) => {
    res.set('Cache-Control', 'no-store');
    if (!req.sessionId) throw new AppError('UNAUTHENTICATED', '当前认证方式不支持安全验证');
    const b = input(req, Verify).body;
    const method = b.method ?? '';
    if (method === 'passkey') throw invalid('Passkey 验证必须使用 Passkey verify 流程');
    if (method !== '2fa' && method !== 'password') throw invalid('不支持的验证方式');
    const scope = b.scope ?? '';
    if (!isProofScope(scope)) throw invalid('不支持的安全验证范围');
    const me = caller(req);
    if (method === '2fa') {
      if (!b.code?.trim()) throw invalid('验证码不能为空');
      await clients.users.verifyTwoFactor({ userId: me.id, code: b.code });
    } else {
      const password = b.password ?? b.code ?? '';
      if (!password) throw invalid('密码不能为空');
      const r = await clients.users.verifyPassword({ userId: me.id, password });
      if (!r.ok) throw invalid('密码错误');
    }
    await audit({
      userId: me.id,
      username: me.username,
      type: 4,
      content: `通用安全验证成功 (验证方式: ${METHOD_LABEL[method]})`,
      actorUserId: me.id,
      ip: req.ip ?? '',
    });
    ok(res, await proofs.issue(req, method, scope), '验证成功');
  });

  api.post('/token/:id/key', guard.user, critical, KeyOf, proofs.require('token.key.read'), async (req, res) => {
    res.set('Cache-Control', 'no-store');
    const { token } = await clients.tokens.getToken({ userId: caller(req).id, id: input(req, KeyOf).params.id });
    if (!token) throw invalid('令牌不存在');
    ok(res, { key: token.key });
  });
}

/**
 * The step before a password change (PUT /api/user/self with a password): the original password
 * in the body is checked by the users service; a user who also has 2FA or a passkey proves one of
 * them as well (scope password.change), so that a stolen session plus a known password is not enough.
 */
export function passwordChangeProof({ clients, redis }: Pick<RouteDeps, 'clients' | 'redis'>): RequestHandler {
  const proofs: SecurityProofs = securityProofs(redis);
  return async (req: Request, res, next) => {
    const b = req.body as { password?: unknown } | undefined;
    if (!b?.password) return next();
    const userId = caller(req).id;
    const [twoFa, passkey] = await Promise.all([
      clients.users.getTwoFactorStatus({ userId }),
      clients.passkeys.getPasskeyStatus({ userId }),
    ]);
    if (!twoFa.enabled && !passkey.enabled) return next();
    if (await proofs.check(req, res, 'password.change', ['2fa', 'passkey'])) next();
  };
}
