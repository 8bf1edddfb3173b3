import { createHash } from 'node:crypto';
import type { Redis } from '@aigw/common';
import { AppError } from '@aigw/common/errors';

/**
 * Per-account login backoff, beside the per-address limit: whoever guesses one account's password
 * from many addresses slows down all the same. The first `freeFailures` wrong passwords in a row
 * cost nothing; each one after that locks the name for twice as long as the one before (1 s,
 * 2 s, 4 s ... at most `maxLockSeconds`). A successful login clears it. Keyed by a hash of the
 * normalised name whether or not such a user exists, so the answers say nothing about existence;
 * shared through Redis by every gateway replica.
 */
export interface LoginBackoffRule {
  freeFailures: number;
  maxLockSeconds: number;
  /** Failures are forgotten this long after the last one. */
  memorySeconds: number;
}

export const LOGIN_BACKOFF: LoginBackoffRule = { freeFailures: 5, maxLockSeconds: 900, memorySeconds: 3600 };

/** Counts a failure and sets the lock, atomically: returns the lock in ms (0 = none). */
const FAIL = `
local n = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
local over = n - tonumber(ARGV[1])
if over <= 0 then return 0 end
local ms = math.min(1000 * (2 ^ (over - 1)), 1000 * tonumber(ARGV[2]))
redis.call('SET', KEYS[2], '1', 'PX', ms)
return ms
`;

export function loginBackoff(redis: Redis, rule: LoginBackoffRule = LOGIN_BACKOFF) {
  const keys = (username: string) => {
    const h = createHash('sha256').update(username.trim().toLowerCase()).digest('base64url').slice(0, 22);
    return { fails: `lb:fails:${h}`, lock: `lb:lock:${h}` };
  };
  return {
    /** Refuses (429) while the name is locked. */
    async check(username: string): Promise<void> {
      if (!username.trim()) return;
      const ttl = await redis.pttl(keys(username).lock);
      if (ttl > 0) {
        throw new AppError('RESOURCE_EXHAUSTED', `登录失败次数过多，请 ${Math.ceil(ttl / 1000)} 秒后再试`);
      }
    },
    /** Counts a wrong password against the name (and locks it past the free failures). */
    async failed(username: string): Promise<void> {
      if (!username.trim()) return;
      const k = keys(username);
      await redis.eval(FAIL, 2, k.fails, k.lock, rule.freeFailures, rule.maxLockSeconds, rule.memorySeconds);
    },
    /** A successful login forgets the name's failures. */
    async succeeded(username: string): Promise<void> {
      const k = keys(username);
      await redis.del(k.fails, k.lock);
    },
  };
}

export type LoginBackoff = ReturnType<typeof loginBackoff>;
