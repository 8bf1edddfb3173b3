import { randomBytes } from 'node:crypto';
import { ok } from '@aigw/common';
import { AppError, invalid } from '@aigw/common/errors';
import type { Request, RequestHandler, Response, Router } from 'express';
import { z } from 'zod';
import { sessionUserOf, userJson } from '../../../domain/user-view.ts';
import { walletGateway } from '../../grpc/wallet-gateway.ts';
import type { RouteDeps } from '../deps.ts';
import { isProofScope, securityProofs } from '../middleware/security-proof.ts';
import { originOf } from '../middleware/session.ts';
import { body, optText, pathId } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { actorOf, caller } from './wire.ts';

/** How long a ceremony's challenge waits for the browser (new-api: 2 minutes). */
export const PASSKEY_FLOW_SECONDS = 120;

type Purpose = 'register' | 'login' | 'verify';
interface Flow {
  purpose: Purpose;
  userId: number;
  sid: string;
  scope: string;
  challenge: string;
}

const Finish = validate({
  body: body({ flow_token: optText, credential: z.record(z.string(), z.unknown()).nullish() }),
});
const VerifyBegin = validate({ body: body({ scope: optText }) });
const NoInput = validate({ body: body({}) });
const ById = validate({ params: pathId });

const noStore: RequestHandler = (_req, res, next) => {
  res.set('Cache-Control', 'no-store');
  next();
};
const INCOMPLETE = 'Passkey 流程参数不完整';
const EXPIRED = 'Passkey 流程已过期，请重新开始';

/** A flow's key in Redis, under its token. */
const flowKey = (token: string) => `passkey:flow:${token}`;

/** The ceremonies' shared steps: a flow started and taken back, the login session, 2FA and the audit. */
function passkeyFlows(deps: RouteDeps) {
  const { clients, redis, audit } = deps;
  /** Keeps the flow under a new token and answers the browser's options with it. */
  const start = async (res: Response, flow: Flow, optionsJson: string) => {
    const token = randomBytes(24).toString('base64url');
    await redis.set(flowKey(token), JSON.stringify(flow), 'EX', PASSKEY_FLOW_SECONDS);
    const expiresAt = Math.floor(Date.now() / 1000) + PASSKEY_FLOW_SECONDS;
    ok(res, { options: JSON.parse(optionsJson) as unknown, flow_token: token, expires_at: expiresAt });
  };
  /** The body's credential and its flow, taken (a second finish with the same token fails). */
  const take = async (req: Request, purpose: Purpose) => {
    const b = input(req, Finish).body;
    const token = b.flow_token?.trim();
    if (!token || !b.credential) throw invalid(INCOMPLETE);
    const raw = /^[\w-]{16,64}$/.test(token) ? await redis.getdel(flowKey(token)) : null;
    const flow = raw ? (JSON.parse(raw) as Flow) : undefined;
    if (!flow || flow.purpose !== purpose) throw invalid(EXPIRED);
    if (purpose !== 'login' && (flow.userId !== caller(req).id || flow.sid !== req.sessionId)) throw invalid(EXPIRED);
    return { flow, credentialJson: JSON.stringify(b.credential) };
  };
  /** The ceremonies of a logged-in user are bound to its login session (new-api's identity). */
  const sessionOf = (req: Request) => {
    if (!req.sessionId) throw new AppError('UNAUTHENTICATED', '当前认证方式不支持安全验证');
    return req.sessionId;
  };
  const twoFactorOn = async (userId: number) => (await clients.users.getTwoFactorStatus({ userId })).enabled;
  const logSelf = (req: Request, content: string) => {
    const me = caller(req);
    return audit({ userId: me.id, username: me.username, type: 4, content, actorUserId: me.id, ip: req.ip ?? '' });
  };
  return { start, take, sessionOf, twoFactorOn, logSelf, proofs: securityProofs(redis) };
}

type Flows = ReturnType<typeof passkeyFlows>;

/** Login with a passkey (no session yet). */
function passkeyLoginRoutes(api: Router, deps: RouteDeps, flows: Flows): void {
  const { clients, sessions, critical, config } = deps;
  const wallets = walletGateway(clients.wallet, deps.logger);
  const secure = (req: Request) => config.COOKIE_SECURE === 'true' || req.secure;

  api.post('/user/passkey/login/begin', critical, noStore, NoInput, async (_req, res) => {
    const r = await clients.passkeys.beginPasskeyAssertion({ userId: 0 });
    await flows.start(res, { purpose: 'login', userId: 0, sid: '', scope: '', challenge: r.challenge }, r.optionsJson);
  });

  api.post('/user/passkey/login/finish', critical, noStore, Finish, async (req, res) => {
    const { flow, credentialJson } = await flows.take(req, 'login');
    const { user } = await clients.passkeys.finishPasskeyAssertion({
      userId: 0,
      credentialJson,
      expectedChallenge: flow.challenge,
    });
    if (!user) throw invalid('Passkey 登录状态异常');
    await sessions.create(res, sessionUserOf(user), secure(req), originOf(req, 'passkey'));
    ok(res, userJson(user, await wallets.get(user.id)), '登录成功！');
  });
}

/** The caller's own passkey: its status, registration, a verification (a security proof) and removal. */
function passkeySelfRoutes(api: Router, { clients, guard }: RouteDeps, flows: Flows): void {
  const { passkeys } = clients;
  const { start, take, sessionOf, twoFactorOn, logSelf, proofs } = flows;
  api.get('/user/passkey', guard.user, noStore, async (req, res) => {
    const s = await passkeys.getPasskeyStatus({ userId: caller(req).id });
    ok(
      res,
      s.enabled
        ? { enabled: true, last_used_at: s.lastUsedAt ? new Date(s.lastUsedAt * 1000).toISOString() : null }
        : { enabled: false },
    );
  });

  api.post('/user/passkey/register/begin', guard.user, noStore, NoInput, async (req, res) => {
    const sid = sessionOf(req);
    const me = caller(req);
    // As new-api: with 2FA on, a new passkey needs a fresh 2FA proof.
    if ((await twoFactorOn(me.id)) && !(await proofs.check(req, res, 'passkey.register', ['2fa']))) return;
    const r = await passkeys.beginPasskeyRegistration({ userId: me.id });
    await start(res, { purpose: 'register', userId: me.id, sid, scope: '', challenge: r.challenge }, r.optionsJson);
  });

  api.post('/user/passkey/register/finish', guard.user, noStore, Finish, async (req, res) => {
    sessionOf(req);
    const me = caller(req);
    if ((await twoFactorOn(me.id)) && !(await proofs.check(req, res, 'passkey.register', ['2fa']))) return;
    const { flow, credentialJson } = await take(req, 'register');
    await passkeys.finishPasskeyRegistration({ userId: me.id, credentialJson, expectedChallenge: flow.challenge });
    await logSelf(req, '注册 Passkey');
    ok(res, undefined, 'Passkey 注册成功');
  });

  api.post('/user/passkey/verify/begin', guard.user, noStore, VerifyBegin, async (req, res) => {
    const sid = sessionOf(req);
    const scope = input(req, VerifyBegin).body.scope ?? '';
    if (!isProofScope(scope)) throw invalid('不支持的安全验证范围');
    const me = caller(req);
    const r = await passkeys.beginPasskeyAssertion({ userId: me.id });
    await start(res, { purpose: 'verify', userId: me.id, sid, scope, challenge: r.challenge }, r.optionsJson);
  });

  api.post('/user/passkey/verify/finish', guard.user, noStore, Finish, async (req, res) => {
    sessionOf(req);
    const me = caller(req);
    const { flow, credentialJson } = await take(req, 'verify');
    if (!isProofScope(flow.scope)) throw invalid('不支持的安全验证范围');
    await passkeys.finishPasskeyAssertion({ userId: me.id, credentialJson, expectedChallenge: flow.challenge });
    ok(res, await proofs.issue(req, 'passkey', flow.scope), 'Passkey 验证成功');
  });

  api.delete('/user/passkey', guard.user, noStore, async (req, res) => {
    sessionOf(req);
    const me = caller(req);
    // As new-api: the second factor the user has proves the removal (2FA when on, else the passkey).
    if (await twoFactorOn(me.id)) {
      if (!(await proofs.check(req, res, 'passkey.delete', ['2fa']))) return;
    } else {
      if (!(await passkeys.getPasskeyStatus({ userId: me.id })).enabled) throw invalid('该用户尚未绑定 Passkey');
      if (!(await proofs.check(req, res, 'passkey.delete', ['passkey']))) return;
    }
    await passkeys.deletePasskey({ userId: me.id });
    await logSelf(req, '解绑 Passkey');
    ok(res, undefined, 'Passkey 已解绑');
  });
}

/**
 * Passkeys (new-api's /api/user/passkey/*): each ceremony is a begin, which answers the options for
 * navigator.credentials and a flow token, and a finish with the browser's credential and that
 * token. The challenge waits in Redis under the token for two minutes and is taken once (GETDEL),
 * bound to the purpose and, for a logged-in user, to the user and login session. The users service
 * verifies the answers and keeps the credentials.
 */
export function passkeyRoutes(api: Router, deps: RouteDeps): void {
  const flows = passkeyFlows(deps);
  passkeyLoginRoutes(api, deps, flows);
  passkeySelfRoutes(api, deps, flows);

  // --- administration -----------------------------------------------------------------------------
  api.delete('/user/:id/reset_passkey', deps.guard.admin, ById, async (req, res) => {
    const { id } = input(req, ById).params;
    await deps.clients.passkeys.adminResetPasskey({ actor: actorOf(req), id });
    // As new-api: every session of the user ends.
    await deps.sessions.destroyAllOf(id);
    ok(res, undefined, 'Passkey 已重置');
  });
}
