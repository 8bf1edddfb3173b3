/**
 * Requests and tokens per minute per token and per user, and a token's concurrent requests,
 * shared by every relay replica through Redis. A sliding window approximated by two fixed one-minute buckets (the previous bucket
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

/**
 * new-api's model request limits (options ModelRequestRateLimit*): per user, within a window of
 * `minutes`, at most `total` requests (failures included; 0 = no limit) and `success` successful
 * ones; a group of ModelRequestRateLimitGroup ({"vip": [total, success]}) has its own pair.
 */
export interface ModelRequestLimits {
  enabled: boolean;
  minutes: number;
  total: number;
  success: number;
  groups: Record<string, unknown>;
}

// KEYS: [all requests, successful requests] (sorted sets of times in ms, Redis's own clock)
// ARGV: [window ms, total limit, success limit, member]
// Returns {0, 0} when allowed (the request is counted in KEYS[1]), else {1 total | 2 success,
// ms until a slot frees}.
const MODEL_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local win = tonumber(ARGV[1])
local limits = { tonumber(ARGV[2]), tonumber(ARGV[3]) }
for _, i in ipairs({ 2, 1 }) do
  if limits[i] > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - win)
    local n = redis.call('ZCARD', KEYS[i])
    if n >= limits[i] then
      local oldest = redis.call('ZRANGE', KEYS[i], n - limits[i], n - limits[i], 'WITHSCORES')
      return { i, tonumber(oldest[2]) + win - now }
    end
  end
end
if limits[1] > 0 then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], win)
end
return { 0, 0 }
`;

// KEYS: [successful requests]; ARGV: [window ms, success limit, member]
const SUCCESS_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[2]) + 1))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 0
`;

// KEYS: [the token's leases] (a sorted set: member per request, score its lease's end in ms)
// ARGV: [limit, lease ms, member]
// Returns -1 when a slot was taken, else the ms until the earliest lease ends.
const ACQUIRE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[1]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return math.max(0, tonumber(first[2]) - now)
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
redis.call('PEXPIRE', KEYS[1], lease)
return -1
`;

// KEYS: [the token's leases]; ARGV: [lease ms, member]. Extends a lease still held.
const RENEW_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 0
`;

/** The lower of two limits, 0 meaning none. */
const lowest = (a: number, b: number) => (a > 0 && b > 0 ? Math.min(a, b) : a > 0 ? a : b);

export type LimitVerdict =
  | { ok: true }
  | { ok: false; subject: 'token' | 'user'; what: 'rpm' | 'tpm' }
  | {
      ok: false;
      subject: 'user';
      /** new-api's total (failures included) or successful request limit. */
      what: 'model_total' | 'model_success';
      limit: number;
      minutes: number;
      /** Seconds until the window lets one more request in. */
      retryAfter: number;
    };

/** A token's own limits (its rpm_limit, tpm_limit and concurrency_limit; 0 no limit). */
export interface TokenLimits {
  rpm: number;
  tpm: number;
  concurrency: number;
}

/** A concurrency slot: released once (later calls do nothing). */
export type Slot = { ok: true; release(): void } | { ok: false; limit: number; retryAfter: number };

export interface RateLimiter {
  /** Whether any limit applies now (the model request limits follow their options). */
  readonly enabled: boolean;
  /** Requests allowed unchecked since Redis last answered a check. */
  failedOpen(): number;
  /**
   * `group`: the request's group, for ModelRequestRateLimitGroup; `token`: the token's own
   * limits (the lower of its own and the TOKEN_RPM/TPM defaults applies).
   */
  check(tokenId: number, userId: number, group?: string, token?: TokenLimits): Promise<LimitVerdict>;
  /**
   * Takes one of the token's `limit` concurrent-request slots, shared by every replica: a lease
   * in Redis renewed while the request runs, so the slot of a relay that was killed frees itself
   * within the lease. Fails open like the other limits.
   */
  acquire(tokenId: number, limit: number): Promise<Slot>;
  /** `tokenTpm`: the token's own TPM limit (its tokens are counted when it has one). */
  addTokens(tokenId: number, userId: number, tokens: number, tokenTpm?: number): void;
  /** Counts a successful request for the model request limits. */
  success(userId: number, group?: string): void;
}

/** The total and success limits of a group (its own pair in `groups`, else the defaults). */
function modelLimitsOf(m: ModelRequestLimits, group: string | undefined): { total: number; success: number } {
  const pair = group === undefined ? undefined : m.groups[group];
  if (Array.isArray(pair) && pair.length >= 2) return { total: Number(pair[0]) || 0, success: Number(pair[1]) || 0 };
  return { total: m.total, success: m.success };
}

const member = () => `${Date.now()}-${Math.random().toString(36).slice(2, 10)}`;

/**
 * The checks allowed without counting since Redis last answered one (Redis not ready or the
 * check failed): `onOpen` hears of the first and every 1,000th.
 */
function failOpenCounter(onOpen: (err: unknown) => void) {
  let opened = 0;
  return {
    /** Allows the request unchecked. */
    fail(err: unknown): LimitVerdict {
      opened++;
      if (opened === 1 || opened % 1000 === 0) onOpen(err);
      return { ok: true };
    },
    /** Redis answered a check. */
    answered() {
      opened = 0;
    },
    count: () => opened,
  };
}

/** Where the limits are counted: Redis, the key prefix, and the fail-open count. */
interface LimitStore {
  redis: Redis;
  prefix: string;
  open: ReturnType<typeof failOpenCounter>;
}

/** Requests and tokens per minute of the token and the user (the fixed limits and the token's own). */
async function checkPerMinute(
  store: LimitStore,
  limits: RateLimits,
  tokenId: number,
  userId: number,
  token?: TokenLimits,
): Promise<LimitVerdict> {
  const { redis, prefix, open } = store;
  const b = Math.floor(Date.now() / 60_000);
  const keys = (kind: string, id: number) => [
    `${prefix}rl:${kind}:${id}:r:${b}`,
    `${prefix}rl:${kind}:${id}:r:${b - 1}`,
    `${prefix}rl:${kind}:${id}:t:${b}`,
    `${prefix}rl:${kind}:${id}:t:${b - 1}`,
  ];
  const frac = 1 - (Date.now() % 60_000) / 60_000;
  const k: string[] = [];
  const argv: (string | number)[] = [frac];
  const subjects: ('token' | 'user')[] = [];
  const tokenRpm = lowest(limits.tokenRpm, token?.rpm ?? 0);
  const tokenTpm = lowest(limits.tokenTpm, token?.tpm ?? 0);
  if (tokenId && (tokenRpm || tokenTpm)) {
    k.push(...keys('tok', tokenId));
    argv.push(tokenRpm, tokenTpm);
    subjects.push('token');
  }
  if (limits.userRpm || limits.userTpm) {
    k.push(...keys('usr', userId));
    argv.push(limits.userRpm, limits.userTpm);
    subjects.push('user');
  }
  if (k.length === 0) return { ok: true };
  // Not connected: commands would queue for the reconnects (seconds per request).
  if (redis.status !== 'ready') return open.fail(new Error(`redis ${redis.status}`));
  let r: number;
  try {
    r = Number(await redis.eval(SCRIPT, k.length, ...k, ...argv));
  } catch (err) {
    return open.fail(err);
  }
  open.answered();
  if (r === 0) return { ok: true };
  return { ok: false, subject: subjects[Math.abs(r) - 1] ?? 'user', what: r > 0 ? 'rpm' : 'tpm' };
}

/** new-api's model request limits; run after the per-minute ones allowed the request. */
async function checkModelLimits(
  store: LimitStore,
  m: ModelRequestLimits,
  userId: number,
  group: string | undefined,
): Promise<LimitVerdict> {
  const { redis, prefix, open } = store;
  const { total, success } = modelLimitsOf(m, group);
  if (total <= 0 && success <= 0) return { ok: true };
  if (redis.status !== 'ready') return open.fail(new Error(`redis ${redis.status}`));
  const minutes = Math.max(1, m.minutes);
  let r: [number, number];
  try {
    r = (await redis.eval(
      MODEL_SCRIPT,
      2,
      `${prefix}mrl:t:${userId}`,
      `${prefix}mrl:s:${userId}`,
      minutes * 60_000,
      total,
      success,
      member(),
    )) as [number, number];
  } catch (err) {
    return open.fail(err);
  }
  open.answered();
  if (Number(r[0]) === 0) return { ok: true };
  const what = Number(r[0]) === 1 ? 'model_total' : 'model_success';
  return {
    ok: false,
    subject: 'user',
    what,
    limit: what === 'model_total' ? total : success,
    minutes,
    retryAfter: Math.max(1, Math.ceil(Number(r[1]) / 1000)),
  };
}

/** Takes one of the token's `limit` concurrency slots: a lease renewed until released (fails open). */
async function acquireSlot(store: LimitStore, tokenId: number, limit: number, leaseMs: number): Promise<Slot> {
  const { redis, prefix, open } = store;
  const free: Slot = { ok: true, release: () => undefined };
  if (!tokenId || limit <= 0) return free;
  if (redis.status !== 'ready') {
    open.fail(new Error(`redis ${redis.status}`));
    return free;
  }
  const key = `${prefix}cc:tok:${tokenId}`;
  const id = member();
  let r: number;
  try {
    r = Number(await redis.eval(ACQUIRE_SCRIPT, 1, key, limit, leaseMs, id));
  } catch (err) {
    open.fail(err);
    return free;
  }
  open.answered();
  if (r >= 0) return { ok: false, limit, retryAfter: 1 };
  // Renewed while the request runs; a killed relay stops renewing and the lease ends.
  const timer = setInterval(
    () => {
      redis.eval(RENEW_SCRIPT, 1, key, leaseMs, id).catch(() => undefined);
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  timer.unref();
  let held = true;
  return {
    ok: true,
    release() {
      if (!held) return;
      held = false;
      clearInterval(timer);
      redis.zrem(key, id).catch(() => undefined);
    },
  };
}

export function rateLimiter(
  redis: Redis,
  limits: RateLimits,
  prefix = '',
  onOpen: (err: unknown) => void = () => undefined,
  modelLimits: () => ModelRequestLimits | undefined = () => undefined,
  /** How long a concurrency slot outlives a relay that stopped renewing it (killed). */
  leaseMs = 60_000,
): RateLimiter {
  const fixed = Object.values(limits).some((v) => v > 0);
  const model = () => {
    const m = modelLimits();
    return m?.enabled ? m : undefined;
  };
  const store: LimitStore = { redis, prefix, open: failOpenCounter(onOpen) };
  return {
    get enabled() {
      return fixed || model() !== undefined;
    },
    failedOpen: () => store.open.count(),
    async check(tokenId, userId, group, token) {
      const m = model();
      const own = !!tokenId && !!token && (token.rpm > 0 || token.tpm > 0);
      if (!fixed && !own) return m ? checkModelLimits(store, m, userId, group) : { ok: true };
      const v = await checkPerMinute(store, limits, tokenId, userId, token);
      return v.ok && m ? checkModelLimits(store, m, userId, group) : v;
    },
    acquire: (tokenId, limit) => acquireSlot(store, tokenId, limit, leaseMs),
    success(userId, group) {
      const m = model();
      if (!m || redis.status !== 'ready') return;
      const { success } = modelLimitsOf(m, group);
      if (success <= 0) return;
      const key = `${prefix}mrl:s:${userId}`;
      redis.eval(SUCCESS_SCRIPT, 1, key, Math.max(1, m.minutes) * 60_000, success, member()).catch(() => undefined);
    },
    addTokens(tokenId, userId, tokens, tokenTpm = 0) {
      if ((!fixed && !(tokenId && tokenTpm > 0)) || tokens <= 0 || redis.status !== 'ready') return;
      const b = Math.floor(Date.now() / 60_000);
      const m = redis.multi();
      if (tokenId && (limits.tokenTpm || tokenTpm > 0))
        m.incrby(`${prefix}rl:tok:${tokenId}:t:${b}`, tokens).expire(`${prefix}rl:tok:${tokenId}:t:${b}`, 120);
      if (limits.userTpm)
        m.incrby(`${prefix}rl:usr:${userId}:t:${b}`, tokens).expire(`${prefix}rl:usr:${userId}:t:${b}`, 120);
      m.exec().catch(() => undefined);
    },
  };
}
