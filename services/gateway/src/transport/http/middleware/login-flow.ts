import { randomBytes } from 'node:crypto';
import type { Redis } from '@aigw/common';
import type { Request, Response } from 'express';
import { readCookie } from './session.ts';

/** How long a password-checked login waits for its second factor (new-api: 5 minutes). */
export const LOGIN_FLOW_SECONDS = 300;
const COOKIE = 'login_flow';

/**
 * The pending second step of a password login of a user with 2FA: a random flow token naming the
 * user, in Redis for five minutes, answered to the client (new-api's `flow_token`) and also kept
 * in an HttpOnly cookie for clients that send only the code. Taken once.
 */
export function loginFlows(redis: Redis) {
  const key = (token: string) => `2fa:flow:${token}`;
  return {
    async start(res: Response, userId: number, secure: boolean): Promise<{ token: string; expiresAt: number }> {
      const token = randomBytes(24).toString('base64url');
      await redis.set(key(token), String(userId), 'EX', LOGIN_FLOW_SECONDS);
      res.cookie(COOKIE, token, {
        httpOnly: true,
        sameSite: 'strict',
        secure,
        maxAge: LOGIN_FLOW_SECONDS * 1000,
        path: '/api/user/login',
      });
      return { token, expiresAt: Math.floor(Date.now() / 1000) + LOGIN_FLOW_SECONDS };
    },
    /** The flow token of a request (body first, then the cookie). */
    tokenOf(req: Request, fromBody: string | undefined): string | undefined {
      const t = fromBody?.trim() || readCookie(req, COOKIE);
      return t && /^[\w-]{16,64}$/.test(t) ? t : undefined;
    },
    async userOf(token: string): Promise<number | undefined> {
      const id = Number(await redis.get(key(token)));
      return id > 0 ? id : undefined;
    },
    /** Consumes the flow; false when another request took it first. */
    async take(res: Response, token: string): Promise<boolean> {
      res.clearCookie(COOKIE, { path: '/api/user/login' });
      return (await redis.del(key(token))) === 1;
    },
  };
}

export type LoginFlows = ReturnType<typeof loginFlows>;
