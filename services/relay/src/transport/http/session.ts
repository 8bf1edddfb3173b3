/**
 * Reads the console session of /pg/chat/completions: the gateway's signed `session` cookie and
 * its Redis record (sess:<id>, shared by the gateway replicas). Read only: the gateway owns
 * sessions. The New-Api-User header must name the session's user, as on the console's /api.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Redis } from '@aigw/common';
import { RelayError } from '../../domain/relay-error.ts';

export interface SessionUser {
  id: number;
  username: string;
  role: number;
  status: number;
  group: string;
}

function cookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined; // a malformed escape: no session, not an error
      }
    }
  }
  return undefined;
}

export function sessionReader(redis: Redis, secret: string) {
  return async (req: IncomingMessage): Promise<SessionUser | undefined> => {
    if (!secret) return undefined;
    const raw = cookie(req, 'session');
    const dot = raw?.lastIndexOf('.') ?? -1;
    if (!raw || dot <= 0) return undefined;
    const sid = raw.slice(0, dot);
    const mac = Buffer.from(raw.slice(dot + 1));
    const want = Buffer.from(createHmac('sha256', secret).update(sid).digest('base64url'));
    if (mac.length !== want.length || !timingSafeEqual(mac, want)) return undefined;
    let json: string | null;
    try {
      json = await redis.get(`sess:${sid}`);
    } catch {
      // Sessions live in Redis only: without it the console's playground cannot be served (fail
      // closed), but say so instead of an internal error. API keys keep working.
      throw new RelayError(503, '会话服务暂不可用，请稍后重试', 'session_unavailable');
    }
    if (!json) return undefined;
    let user: SessionUser;
    try {
      user = JSON.parse(json) as SessionUser;
    } catch {
      return undefined;
    }
    const claimed = req.headers['new-api-user'];
    if (claimed === undefined || String(claimed) !== String(user.id)) return undefined;
    return user;
  };
}
