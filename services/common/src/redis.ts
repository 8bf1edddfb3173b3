import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export type { Redis };

/**
 * Creates a Redis client that fails fast on start-up and reconnects afterwards. A lost connection
 * is logged once per outage (a warning, then an info line when it answers again): without an error
 * listener ioredis printed an unstructured "[ioredis] Unhandled error event" with a stack trace to
 * stderr on every reconnect attempt, several a second in every service while Redis was down.
 */
export async function connectRedis(url: string, keyPrefix = '', logger?: Logger): Promise<Redis> {
  const client = new Redis(url, {
    keyPrefix,
    lazyConnect: true,
    maxRetriesPerRequest: 3,
    enableAutoPipelining: true,
  });
  let lostAt = 0;
  let failures = 0;
  client.on('error', (err: Error) => {
    failures++;
    if (lostAt) return;
    lostAt = Date.now();
    logger?.warn({ err: err.message }, 'redis: connection lost, reconnecting');
  });
  client.on('ready', () => {
    if (!lostAt) return;
    logger?.info({ downMs: Date.now() - lostAt, failedAttempts: failures }, 'redis: connection back');
    lostAt = 0;
    failures = 0;
  });
  await client.connect();
  return client;
}

/** Readiness probe for a Redis client. */
export async function pingRedis(client: Redis): Promise<void> {
  await client.ping();
}

/**
 * Relay process leases (docs/reliability.md, scenario 1): each relay process renews its instance id
 * (the prefix of its request ids) in this sorted set every RELAY_LEASE_RENEW_MS; billing gives back
 * the holds of a process whose lease lapsed instead of keeping them for an hour.
 */
export const RELAY_LEASES_KEY = 'relay:leases';
export const RELAY_LEASE_RENEW_MS = 2_000;
/** A lease not renewed for this long (as billing sees it) has lapsed: its process is gone. */
export const RELAY_LEASE_LAPSE_MS = 10_000;
/** Leases are forgotten this long after their last renewal (then holds fall back to their TTL). */
const LEASE_KEEP_MS = 2 * 60 * 60 * 1000;

/**
 * The longest fence a relay may set (RELAY_LEASE_FENCE_MS, off by default): half the lapse. Billing
 * counts on it: a hold placed more than this, less one lease read, after the last renewal billing
 * saw came from a relay that was still alive then (fenced, or renewing in vain) and is not given
 * back by the lapse.
 */
export const RELAY_LEASE_FENCE_MS = RELAY_LEASE_LAPSE_MS / 2;

/**
 * Renews a relay process's lease until stop() (which leaves it to lapse). Errors are retried at
 * the next tick. When no renewal has succeeded for `fenceMs` (the relay cannot reach Redis, or its
 * event loop was stuck) `onFence(true)` is called once: billing may give back this process's holds
 * from RELAY_LEASE_LAPSE_MS on, so the relay ends the requests that hold a reservation before
 * then; `onFence(false)` once a renewal succeeds again.
 */
export function renewRelayLease(
  client: Redis,
  instance: string,
  everyMs = RELAY_LEASE_RENEW_MS,
  opts: { fenceMs?: number; onFence?: (fenced: boolean) => void; clock?: () => number } = {},
): { stop(): void; fenced(): boolean; age(): number } {
  const clock = opts.clock ?? Date.now;
  // 0: no fence (the default of the relay's RELAY_LEASE_FENCE_MS).
  const fenceMs = opts.fenceMs ?? RELAY_LEASE_FENCE_MS;
  let beat = 0;
  let okAt = clock();
  let fenced = false;
  const setFenced = (v: boolean) => {
    if (fenced === v) return;
    fenced = v;
    opts.onFence?.(v);
  };
  const watch = () => {
    if (fenceMs > 0 && clock() - okAt > fenceMs) setFenced(true);
  };
  const renew = () => {
    watch();
    const sentAt = clock();
    // The score only has to change: billing times leases on its own clock.
    client
      .zadd(RELAY_LEASES_KEY, Date.now() * 1000 + (beat++ % 1000), instance)
      .then(() => {
        okAt = Math.max(okAt, sentAt);
        if (fenced && clock() - okAt <= fenceMs) setFenced(false);
      })
      .catch(() => undefined);
  };
  renew();
  // Renewed often enough that a fence shorter than the usual period (tests) is not reached between two.
  const timer = setInterval(renew, fenceMs > 0 ? Math.max(10, Math.min(everyMs, fenceMs / 3)) : everyMs);
  timer.unref();
  // The fence is checked more often than the renewals: it must act well before the lapse.
  const watcher = fenceMs > 0 ? setInterval(watch, Math.max(10, Math.min(everyMs, fenceMs / 4))) : undefined;
  watcher?.unref();
  return {
    stop: () => {
      clearInterval(timer);
      clearInterval(watcher);
    },
    fenced: () => fenced,
    /** Milliseconds since the last renewal Redis confirmed (its send time), on this process's clock. */
    age: () => Math.max(0, Math.round(clock() - okAt)),
  };
}

/**
 * Billing's view of the relay leases, read every `everyMs`. lapsed(instance) holds only for an
 * instance seen renewing before whose score has not moved for RELAY_LEASE_LAPSE_MS of billing's
 * clock, while the view is fresh (read within 3 x everyMs). After a failed read (Redis down, so the
 * relays could not renew either) every lease starts its lapse time again: nothing lapses because
 * of a Redis outage.
 *
 * Which holds of a lapsed instance go back: a hold whose relay sent its lease age (how long before
 * the pre-consume its last renewal was confirmed, on the relay's own clock) counts when that age was
 * at most RELAY_LEASE_FENCE_MS: a process killed mid-request placed its last holds within a renewal
 * period of its last renewal, however late billing got to them; a hold sent later came from a relay
 * still alive then (it could not reach Redis) and is left to its settle (or the hold TTL). A hold
 * without an age (callers without a lease) counts when billing placed it up to
 * `RELAY_LEASE_FENCE_MS - everyMs` after it last saw the lease move.
 */
export function watchRelayLeases(
  client: Redis,
  opts: { everyMs?: number; lapseMs?: number; holdGraceMs?: number; clock?: () => number } = {},
): {
  lapsed(instance: string, heldAt?: number, leaseAgeMs?: number): boolean;
  check(): Promise<void>;
  stop(): void;
} {
  const everyMs = opts.everyMs ?? RELAY_LEASE_RENEW_MS;
  const lapseMs = opts.lapseMs ?? RELAY_LEASE_LAPSE_MS;
  const holdGraceMs = opts.holdGraceMs ?? RELAY_LEASE_FENCE_MS - everyMs;
  const clock = opts.clock ?? Date.now;
  const seen = new Map<string, { score: string; movedAt: number }>();
  let readAt = 0;
  const check = async () => {
    let flat: string[];
    try {
      flat = await client.zrange(RELAY_LEASES_KEY, 0, -1, 'WITHSCORES');
    } catch {
      return;
    }
    const now = clock();
    const gap = now - readAt > 3 * everyMs;
    readAt = now;
    const present = new Set<string>();
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const id = flat[i] as string;
      const score = flat[i + 1] as string;
      present.add(id);
      const prev = seen.get(id);
      if (!prev || prev.score !== score || gap) seen.set(id, { score, movedAt: now });
    }
    for (const id of seen.keys()) if (!present.has(id)) seen.delete(id);
    client.zremrangebyscore(RELAY_LEASES_KEY, '-inf', (Date.now() - LEASE_KEEP_MS) * 1000).catch(() => undefined);
  };
  const timer = setInterval(() => void check(), everyMs);
  timer.unref();
  void check();
  return {
    lapsed(instance, heldAt, leaseAgeMs) {
      const now = clock();
      if (now - readAt > 3 * everyMs) return false;
      const s = seen.get(instance);
      if (s === undefined || now - s.movedAt <= lapseMs) return false;
      if (leaseAgeMs !== undefined) return leaseAgeMs <= RELAY_LEASE_FENCE_MS;
      return heldAt === undefined || heldAt <= s.movedAt + holdGraceMs;
    },
    check,
    stop: () => clearInterval(timer),
  };
}
