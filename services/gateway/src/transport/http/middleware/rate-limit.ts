import type { Redis } from '@aigw/common';
import { AppError } from '@aigw/common/errors';
import type { RequestHandler } from 'express';

/**
 * Sliding-window limit per client IP, in Redis so every gateway replica shares it: a sorted set of
 * request times per (bucket, ip), trimmed to the window on each call, all in one Lua script.
 */
const SCRIPT = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, 0, now - window)
local count = redis.call('ZCARD', key)
if count >= max then return 0 end
redis.call('ZADD', key, now, ARGV[4])
redis.call('PEXPIRE', key, window)
return 1
`;

export interface RateLimitRule {
  bucket: string;
  max: number;
  windowSeconds: number;
}

/** The reference limits: web 120/180 s, API 360/180 s, critical routes 20/20 min. */
export const RATE_LIMITS = {
  web: { bucket: 'web', max: 120, windowSeconds: 180 },
  api: { bucket: 'api', max: 360, windowSeconds: 180 },
  critical: { bucket: 'critical', max: 20, windowSeconds: 1200 },
} satisfies Record<string, RateLimitRule>;

let seq = 0;

export function rateLimit(redis: Redis, rule: RateLimitRule, enabled = true): RequestHandler {
  return async (req, _res, next) => {
    if (!enabled) return next();
    const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const now = Date.now();
    const member = `${now}-${process.pid}-${seq++}`;
    const allowed = await redis.eval(
      SCRIPT,
      1,
      `rl:${rule.bucket}:${ip}`,
      now,
      rule.windowSeconds * 1000,
      rule.max,
      member,
    );
    if (allowed !== 1) throw new AppError('RESOURCE_EXHAUSTED', '请求次数过多，请稍后再试');
    next();
  };
}
