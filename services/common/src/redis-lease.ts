import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A lease in Redis that one process holds at a time, for jobs that must run on one replica only
 * (the holder renews it; when it dies the lease expires after `ttlMs` and another takes it).
 * The value is the holder's own random id, so only the holder renews or releases it.
 */
export interface Lease {
  /** This process's id in the lease. */
  readonly owner: string;
  /** Takes the lease when free, or extends it when already ours; false while another holds it. */
  acquire(): Promise<boolean>;
  /** Extends the lease while it is ours; false once it is not (it expired, another took it). */
  renew(): Promise<boolean>;
  /** Gives the lease up at once if it is still ours (another replica need not wait for it to expire). */
  release(): Promise<void>;
}

const ACQUIRE = `local v = redis.call('get', KEYS[1])
if v == false then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
if v == ARGV[1] then redis.call('pexpire', KEYS[1], ARGV[2]) return 1 end
return 0`;

const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0`;

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0`;

export function redisLease(redis: Redis, key: string, ttlMs: number, owner: string = randomUUID()): Lease {
  const ttl = String(Math.max(1, Math.round(ttlMs)));
  return {
    owner,
    acquire: async () => Number(await redis.eval(ACQUIRE, 1, key, owner, ttl)) === 1,
    renew: async () => Number(await redis.eval(RENEW, 1, key, owner, ttl)) === 1,
    async release() {
      await redis.eval(RELEASE, 1, key, owner);
    },
  };
}
