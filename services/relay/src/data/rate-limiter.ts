/**
 * Requests and tokens per minute per token and per user, shared by every relay replica through
 * Redis. A sliding window approximated by two fixed one-minute buckets (the previous bucket
 * weighted by how much of it still overlaps the window): one round trip per request.
 *
 * Fails open: while Redis is unreachable (docs/reliability.md, scenario 5) requests are allowed
 * without counting, at once (no wait for the client's reconnects), and counted again as soon as it
 * answers. A rate limit protects upstream capacity, not money: the wallet's holds and settles do
 * that, and refusing every request for a Redis outage would turn it into a platform outage.
 */
import type { Redis } from '@aigw/common';

export interface RateLimits {
  tokenRpm: number;
  tokenTpm: number;
  userRpm: number;
  userTpm: number;
}

// KEYS: per subject [rpm current, rpm previous, tpm current, tpm previous]
// ARGV: [fraction of the previous bucket still in the window, then per subject: rpm limit, tpm limit]
// Returns 0 when allowed (and counts the request), else the index+1 of the subject over its limit
// (negative for a token-per-minute refusal).
const SCRIPT = `
local frac = tonumber(ARGV[1])
local n = #KEYS / 4
for i = 0, n - 1 do
  local rl = tonumber(ARGV[2 + i * 2])
  local tl = tonumber(ARGV[3 + i * 2])
  if rl > 0 then
    local used = tonumber(redis.call('GET', KEYS[i * 4 + 1]) or '0') + tonumber(redis.call('GET', KEYS[i * 4 + 2]) or '0') * frac
    if used + 1 > rl then return i + 1 end
  end
  if tl > 0 then
    local used = tonumber(redis.call('GET', KEYS[i * 4 + 3]) or '0') + tonumber(redis.call('GET', KEYS[i * 4 + 4]) or '0') * frac
    if used >= tl then return -(i + 1) end
  end
end
for i = 0, n - 1 do
  if tonumber(ARGV[2 + i * 2]) > 0 then
    redis.call('INCR', KEYS[i * 4 + 1])
    redis.call('EXPIRE', KEYS[i * 4 + 1], 120)
  end
end
return 0
`;

export type LimitVerdict = { ok: true } | { ok: false; subject: 'token' | 'user'; what: 'rpm' | 'tpm' };

export interface RateLimiter {
  readonly enabled: boolean;
  /** Requests allowed unchecked since Redis last answered a check. */
  failedOpen(): number;
  check(tokenId: number, userId: number): Promise<LimitVerdict>;
  addTokens(tokenId: number, userId: number, tokens: number): void;
}

export function rateLimiter(
  redis: Redis,
  limits: RateLimits,
  prefix = '',
  onOpen: (err: unknown) => void = () => undefined,
): RateLimiter {
  const enabled = Object.values(limits).some((v) => v > 0);
  let opened = 0;
  /** Allowed without a check (Redis not ready or the check failed). */
  const failOpen = (err: unknown): LimitVerdict => {
    opened++;
    if (opened === 1 || opened % 1000 === 0) onOpen(err);
    return { ok: true };
  };
  const bucket = () => Math.floor(Date.now() / 60_000);
  const keys = (kind: string, id: number, b: number) => [
    `${prefix}rl:${kind}:${id}:r:${b}`,
    `${prefix}rl:${kind}:${id}:r:${b - 1}`,
    `${prefix}rl:${kind}:${id}:t:${b}`,
    `${prefix}rl:${kind}:${id}:t:${b - 1}`,
  ];
  return {
    enabled,
    failedOpen: () => opened,
    async check(tokenId, userId) {
      if (!enabled) return { ok: true };
      const b = bucket();
      const frac = 1 - (Date.now() % 60_000) / 60_000;
      const k: string[] = [];
      const argv: (string | number)[] = [frac];
      const subjects: ('token' | 'user')[] = [];
      if (tokenId && (limits.tokenRpm || limits.tokenTpm)) {
        k.push(...keys('tok', tokenId, b));
        argv.push(limits.tokenRpm, limits.tokenTpm);
        subjects.push('token');
      }
      if (limits.userRpm || limits.userTpm) {
        k.push(...keys('usr', userId, b));
        argv.push(limits.userRpm, limits.userTpm);
        subjects.push('user');
      }
      if (k.length === 0) return { ok: true };
      // Not connected: commands would queue for the reconnects (seconds per request).
      if (redis.status !== 'ready') return failOpen(new Error(`redis ${redis.status}`));
      let r: number;
      try {
        r = Number(await redis.eval(SCRIPT, k.length, ...k, ...argv));
      } catch (err) {
        return failOpen(err);
      }
      opened = 0;
      if (r === 0) return { ok: true };
      return { ok: false, subject: subjects[Math.abs(r) - 1] ?? 'user', what: r > 0 ? 'rpm' : 'tpm' };
    },
    addTokens(tokenId, userId, tokens) {
      if (!enabled || tokens <= 0 || redis.status !== 'ready') return;
      const b = bucket();
      const m = redis.multi();
      if (tokenId && limits.tokenTpm)
        m.incrby(`${prefix}rl:tok:${tokenId}:t:${b}`, tokens).expire(`${prefix}rl:tok:${tokenId}:t:${b}`, 120);
      if (limits.userTpm)
        m.incrby(`${prefix}rl:usr:${userId}:t:${b}`, tokens).expire(`${prefix}rl:usr:${userId}:t:${b}`, 120);
      m.exec().catch(() => undefined);
    },
  };
}
