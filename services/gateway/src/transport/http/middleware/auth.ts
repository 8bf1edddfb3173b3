import { AppError } from '@aigw/common/errors';
import type { RequestHandler } from 'express';
import type { SessionUser } from './session.ts';

export const ROLE = { common: 1, admin: 10, root: 100 } as const;

declare global {
  namespace Express {
    interface Request {
      /** The authenticated caller, set by `requireRole`. */
      user?: SessionUser;
    }
  }
}

/** Finds the user of a system access token (`Authorization: <token>`); undefined when none. */
export type AccessTokenLookup = (token: string) => Promise<SessionUser | undefined>;

/**
 * Guards a route: the caller is the session's user, or the owner of the system access token in
 * `Authorization`. The `New-Api-User` header must name that same user (401 otherwise), the user
 * must be enabled, and their role at least `minRole` (403 otherwise).
 */
export function requireRole(minRole: number, lookup: AccessTokenLookup): RequestHandler & { minRole: number } {
  const guard: RequestHandler = async (req, _res, next) => {
    let user = req.sessionUser;
    if (!user) {
      const header = req.headers.authorization?.replace(/^Bearer\s+/i, '').trim();
      if (header) user = await lookup(header);
    }
    if (!user) throw new AppError('UNAUTHENTICATED', '无权进行此操作，未登录且未提供 access token');
    const claimed = req.headers['new-api-user'];
    if (claimed === undefined || claimed === '') {
      throw new AppError('UNAUTHENTICATED', '无权进行此操作，未提供 New-Api-User');
    }
    if (String(claimed) !== String(user.id)) {
      throw new AppError('UNAUTHENTICATED', '无权进行此操作，New-Api-User 与登录用户不符');
    }
    if (user.status !== 1) throw new AppError('PERMISSION_DENIED', '用户已被封禁');
    if (user.role < minRole) throw new AppError('PERMISSION_DENIED', '无权进行此操作，权限不足');
    req.user = user;
    next();
  };
  // The route table (OpenAPI document, role matrix test) reads each route's guard from here.
  return Object.assign(guard, { minRole });
}
