import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
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
/** Last activity is written at most this often per session (one Redis write, not one per request). */
const SEEN_EVERY_MS = 60_000;

/** A login session as its owner sees it (new-api's LoginSessionView). */
export interface LoginSessionView {
  /** A public id (a digest of the session id: the list never shows what the cookie holds). */
  sid: string;
  current: boolean;
  login_method: string;
  ip: string;
  user_agent: string;
  created_at: number;
  last_active_at: number;
  expires_at: number;
}

/** Where and how a session was made. */
export interface SessionOrigin {
  ip: string;
  userAgent: string;
  /** password, 2fa, github, wechat, telegram ... */
  method: string;
}

const TOUCH = `if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'last_active_at', ARGV[1]) end return 0`;

/** The origin of a session made by this request. */
export const originOf = (req: Request, method: string): SessionOrigin => ({
  ip: req.ip ?? '',
  userAgent: String(req.headers['user-agent'] ?? ''),
  method,
});

/** The public id of a session id. */
const publicId = (sid: string) => createHash('sha256').update(sid).digest('base64url').slice(0, 22);

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

const key = (sid: string) => `sess:${sid}`;
const metaKey = (sid: string) => `sess:meta:${sid}`;
const userKey = (id: number) => `sess:user:${id}`;

/** The session id a cookie value carries when its HMAC is right; undefined otherwise. */
export function signedSessionId(raw: string | undefined, secret: string): string | undefined {
  const dot = raw?.lastIndexOf('.') ?? -1;
  if (!raw || dot <= 0) return undefined;
  const sid = raw.slice(0, dot);
  const mac = Buffer.from(raw.slice(dot + 1));
  const want = Buffer.from(sign(sid, secret));
  return mac.length === want.length && timingSafeEqual(mac, want) ? sid : undefined;
}

/** A stored session as its owner sees it (`ttl` its seconds left, `meta` its origin and activity). */
export function sessionView(
  sid: string,
  currentSid: string | undefined,
  ttl: number,
  meta: Record<string, string>,
  nowSec: number,
): LoginSessionView {
  return {
    sid: publicId(sid),
    current: sid === currentSid,
    login_method: meta.login_method ?? '',
    ip: meta.ip ?? '',
    user_agent: meta.user_agent ?? '',
    created_at: Number(meta.created_at ?? 0),
    last_active_at: Number(meta.last_active_at ?? 0),
    expires_at: nowSec + ttl,
  };
}

/** Stores a new session (its user, origin and index entry) and sets its cookie. */
async function startSession(
  redis: Redis,
  secret: string,
  s: { res: Response; user: SessionUser; secure: boolean; origin?: SessionOrigin | undefined },
): Promise<void> {
  const { res, user, origin } = s;
  const sid = randomBytes(24).toString('base64url');
  const now = String(Math.floor(Date.now() / 1000));
  await redis
    .multi()
    .set(key(sid), JSON.stringify(user), 'EX', TTL_SECONDS)
    .hset(metaKey(sid), {
      created_at: now,
      last_active_at: now,
      ip: origin?.ip ?? '',
      user_agent: (origin?.userAgent ?? '').slice(0, 512),
      login_method: origin?.method ?? '',
    })
    .expire(metaKey(sid), TTL_SECONDS)
    .sadd(userKey(user.id), sid)
    .expire(userKey(user.id), TTL_SECONDS)
    .exec();
  res.cookie(COOKIE, `${sid}.${sign(sid, secret)}`, {
    httpOnly: true,
    sameSite: 'strict',
    secure: s.secure,
    maxAge: TTL_SECONDS * 1000,
    path: '/',
  });
}

/** A user's live sessions and the ids of those expired meanwhile (for the caller to end). */
async function liveSessions(redis: Redis, userId: number, currentSid: string | undefined) {
  const sids = await redis.smembers(userKey(userId));
  const out: LoginSessionView[] = [];
  const gone: string[] = [];
  if (sids.length === 0) return { out, gone };
  const pipe = redis.multi();
  for (const sid of sids) pipe.ttl(key(sid)).hgetall(metaKey(sid));
  const replies = (await pipe.exec()) ?? [];
  const nowSec = Math.floor(Date.now() / 1000);
  sids.forEach((sid, i) => {
    const ttl = Number(replies[2 * i]?.[1] ?? -2);
    const meta = (replies[2 * i + 1]?.[1] ?? {}) as Record<string, string>;
    if (ttl <= 0) gone.push(sid);
    else out.push(sessionView(sid, currentSid, ttl, meta, nowSec));
  });
  return { out, gone };
}

/**
 * Sessions in Redis (shared by every gateway replica): an HttpOnly, SameSite=Strict cookie holding
 * a random id and its HMAC, 30 days. Each user's session ids are indexed so that a ban, a deletion
 * or a password change can end them all, and the owner can list and end them one by one; each
 * session's origin and last activity live beside it (`sess:meta:<id>`). An ended session's key is
 * gone, so its cookie is refused on the next request.
 */
export function sessions(redis: Redis, secret: string) {
  /** When this replica last wrote each session's activity (bounded: cleared when it grows). */
  const seen = new Map<string, number>();
  const touch = async (sid: string) => {
    const now = Date.now();
    if (now - (seen.get(sid) ?? 0) < SEEN_EVERY_MS) return;
    if (seen.size > 10_000) seen.clear();
    seen.set(sid, now);
    // Only on a live record: a session ended meanwhile must not leave a record without expiry.
    await redis.eval(TOUCH, 1, metaKey(sid), String(Math.floor(now / 1000)));
  };
  const end = async (userId: number, sids: string[]) => {
    if (sids.length === 0) return;
    await redis
      .multi()
      .del(...sids.map(key), ...sids.map(metaKey))
      .srem(userKey(userId), ...sids)
      .exec();
    for (const sid of sids) seen.delete(sid);
  };

  const load: RequestHandler = async (req, _res, next) => {
    const sid = signedSessionId(readCookie(req, COOKIE), secret);
    const json = sid ? await redis.get(key(sid)) : null;
    if (sid && json) {
      req.sessionUser = JSON.parse(json) as SessionUser;
      req.sessionId = sid;
      await touch(sid);
    }
    next();
  };

  return {
    load,
    /** Starts a session for a user and sets the cookie. */
    create: (res: Response, user: SessionUser, secure: boolean, origin?: SessionOrigin): Promise<void> =>
      startSession(redis, secret, { res, user, secure, origin }),
    /** Ends the request's session. */
    async destroy(req: Request, res: Response): Promise<void> {
      if (req.sessionId) await redis.del(key(req.sessionId), metaKey(req.sessionId));
      if (req.sessionUser && req.sessionId) await redis.srem(userKey(req.sessionUser.id), req.sessionId);
      res.clearCookie(COOKIE, { path: '/' });
    },
    /** Ends every session of a user (ban, delete, password change). */
    async destroyAllOf(userId: number): Promise<void> {
      const sids = await redis.smembers(userKey(userId));
      if (sids.length > 0) await redis.del(...sids.map(key), ...sids.map(metaKey));
      await redis.del(userKey(userId));
    },
    /** A user's live sessions, newest first; `currentSid` is marked. Expired ones leave the index. */
    async list(userId: number, currentSid: string | undefined): Promise<LoginSessionView[]> {
      const { out, gone } = await liveSessions(redis, userId, currentSid);
      await end(userId, gone);
      return out.sort((a, b) => b.created_at - a.created_at);
    },
    /** Ends one of a user's sessions by its public id; false when the user has none such. */
    async revoke(userId: number, id: string): Promise<boolean> {
      const sid = (await redis.smembers(userKey(userId))).find((s) => publicId(s) === id);
      if (!sid) return false;
      await end(userId, [sid]);
      return true;
    },
    /** Ends every session of a user but `keepSid`; answers how many. */
    async revokeOthers(userId: number, keepSid: string | undefined): Promise<number> {
      const others = (await redis.smembers(userKey(userId))).filter((s) => s !== keepSid);
      await end(userId, others);
      return others.length;
    },
    /** The public id of a session id (to tell the caller which one is theirs). */
    publicId,
    /** Rewrites the stored user of every session of a user (role or group change). */
    async refresh(user: SessionUser): Promise<void> {
      const sids = await redis.smembers(userKey(user.id));
      for (const sid of sids) await redis.set(key(sid), JSON.stringify(user), 'KEEPTTL');
    },
  };
}

export type Sessions = ReturnType<typeof sessions>;
