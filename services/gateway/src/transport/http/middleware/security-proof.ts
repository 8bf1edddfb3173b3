import { randomBytes } from 'node:crypto';
import type { Redis } from '@aigw/common';
import type { Request, RequestHandler, Response } from 'express';

/** How long a re-verification stays good (new-api's SecurityProofTTL: 5 minutes). */
export const PROOF_SECONDS = 300;

/** How the caller proved it is still them: new-api's 2fa and passkey, and our password. */
export type ProofMethod = '2fa' | 'passkey' | 'password';

/**
 * What a proof may unlock (new-api's scope names; token.key.read and password.change are ours).
 * channel.key.read is accepted for new-api's clients; no route of ours reads it yet.
 */
export const PROOF_SCOPES = [
  'channel.key.read',
  'passkey.register',
  'passkey.delete',
  'token.key.read',
  'password.change',
] as const;
export type ProofScope = (typeof PROOF_SCOPES)[number];
export const isProofScope = (s: unknown): s is ProofScope => PROOF_SCOPES.includes(s as ProofScope);

interface ProofRecord {
  userId: number;
  sid: string;
  method: ProofMethod;
  scope: ProofScope;
}

/** new-api's answer when a proof is missing or wrong: 403 with a machine-readable code. */
function refuse(res: Response, code: string, message: string): void {
  res.status(403).json({ success: false, message, code });
}

/**
 * Re-verification before sensitive actions (new-api's security proof): after the caller verified
 * again (POST /api/verify, or the passkey verify ceremony) it receives a proof token bound to its
 * login session, one scope and the method used, good for five minutes. Sensitive routes require
 * it in the `X-Security-Proof` header. Kept in Redis so that every gateway replica honours it and
 * a logout (the session gone) leaves it useless.
 */
export function securityProofs(redis: Redis) {
  const key = (token: string) => `proof:${token}`;
  return {
    async issue(req: Request, method: ProofMethod, scope: ProofScope) {
      const userId = req.user?.id;
      const sid = req.sessionId;
      if (!userId || !sid) throw new Error('a proof needs a session');
      const token = randomBytes(32).toString('base64url');
      const record: ProofRecord = { userId, sid, method, scope };
      await redis.set(key(token), JSON.stringify(record), 'EX', PROOF_SECONDS);
      return { proof_token: token, expires_at: Math.floor(Date.now() / 1000) + PROOF_SECONDS, method, scope };
    },

    /**
     * Answers 403 (new-api's SECURITY_PROOF_* codes) and false unless the request carries a live
     * proof of this session and user for `scope`, made with one of `methods`.
     */
    async check(req: Request, res: Response, scope: ProofScope, methods: readonly ProofMethod[]): Promise<boolean> {
      const userId = req.user?.id;
      const sid = req.sessionId;
      if (!userId || !sid) {
        refuse(res, 'SECURITY_PROOF_INVALID', '安全验证状态无效');
        return false;
      }
      const raw = String(req.headers['x-security-proof'] ?? '').trim();
      if (!raw) {
        refuse(res, 'SECURITY_PROOF_REQUIRED', '需要安全验证');
        return false;
      }
      const stored = /^[\w-]{20,64}$/.test(raw) ? await redis.get(key(raw)) : null;
      const proof = stored ? (JSON.parse(stored) as ProofRecord) : undefined;
      if (!proof) {
        refuse(res, 'SECURITY_PROOF_EXPIRED', '安全验证已过期');
        return false;
      }
      if (proof.userId !== userId || proof.sid !== sid) {
        refuse(res, 'SECURITY_PROOF_INVALID', '安全验证状态无效');
        return false;
      }
      if (proof.scope !== scope) {
        refuse(res, 'SECURITY_PROOF_SCOPE_MISMATCH', '安全验证范围不匹配');
        return false;
      }
      if (!methods.includes(proof.method)) {
        refuse(res, 'SECURITY_PROOF_METHOD_MISMATCH', '安全验证方式不匹配');
        return false;
      }
      return true;
    },

    /** The check as a route step. */
    require(scope: ProofScope, methods: readonly ProofMethod[] = ['2fa', 'passkey', 'password']): RequestHandler {
      return async (req, res, next) => {
        if (await this.check(req, res, scope, methods)) next();
      };
    },
  };
}

export type SecurityProofs = ReturnType<typeof securityProofs>;
