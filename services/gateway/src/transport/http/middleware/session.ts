import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from '@aigw/common';
import type { Request, RequestHandler, Response } from 'express';

/** What a session remembers about its user (refreshed from the users service on login). */
export interface SessionUser {
  id: number;
  username: string;
  role: number;
  status: number;
  group: string;
}

const COOKIE = 'session';
const TTL_SECONDS = 30 * 24 * 3600;

declare global {
  namespace Express {
    interface Request {
      /** The session's user, when the request carries a valid session cookie. */
      sessionUser?: SessionUser;
      sessionId?: string;
    }
  }
}

function sign(sid: string, secret: string): string {
  return createHmac('sha256', secret).update(sid).digest('base64url');
}

/** One cookie of a request, decoded; undefined when absent. */
export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined; // a malformed escape: the cookie is ignored, not an error
      }
    }
  }
  return undefined;
}

/**
 * Sessions in Redis (shared by every gateway replica): an HttpOnly, SameSite=Strict cookie holding
 * a random id and its HMAC, 30 days. Each user's session ids are indexed so that a ban, a deletion
 * or a password change can end them all.
 */
export function sessions(redis: Redis, secret: string) {
  const key = (sid: string) => `sess:${sid}`;
  const userKey = (id: number) => `sess:user:${id}`;

  const load: RequestHandler = async (req, _res, next) => {
    const raw = readCookie(req, COOKIE);
    const dot = raw?.lastIndexOf('.') ?? -1;
    if (raw && dot > 0) {
      const sid = raw.slice(0, dot);
      const mac = Buffer.from(raw.slice(dot + 1));
      const want = Buffer.from(sign(sid, secret));
      if (mac.length === want.length && timingSafeEqual(mac, want)) {
        const json = await redis.get(key(sid));
        if (json) {
          req.sessionUser = JSON.parse(json) as SessionUser;
          req.sessionId = sid;
        }
      }
    }
    next();
  };

  return {
    load,
    /** Starts a session for a user and sets the cookie. */
    async create(res: Response, user: SessionUser, secure: boolean): Promise<void> {
      const sid = randomBytes(24).toString('base64url');
      await redis
        .multi()
        .set(key(sid), JSON.stringify(user), 'EX', TTL_SECONDS)
        .sadd(userKey(user.id), sid)
        .expire(userKey(user.id), TTL_SECONDS)
        .exec();
      res.cookie(COOKIE, `${sid}.${sign(sid, secret)}`, {
        httpOnly: true,
        sameSite: 'strict',
        secure,
        maxAge: TTL_SECONDS * 1000,
        path: '/',
      });
    },
    /** Ends the request's session. */
    async destroy(req: Request, res: Response): Promise<void> {
      if (req.sessionId) await redis.del(key(req.sessionId));
      if (req.sessionUser && req.sessionId) await redis.srem(userKey(req.sessionUser.id), req.sessionId);
      res.clearCookie(COOKIE, { path: '/' });
    },
    /** Ends every session of a user (ban, delete, password change). */
    async destroyAllOf(userId: number): Promise<void> {
      const sids = await redis.smembers(userKey(userId));
      if (sids.length > 0) await redis.del(...sids.map(key));
      await redis.del(userKey(userId));
    },
    /** Rewrites the stored user of every session of a user (role or group change). */
    async refresh(user: SessionUser): Promise<void> {
      const sids = await redis.smembers(userKey(user.id));
      for (const sid of sids) await redis.set(key(sid), JSON.stringify(user), 'KEEPTTL');
    },
  };
}

export type Sessions = ReturnType<typeof sessions>;
