/**
 * The poll schedule of one platform in Redis, so that "which tasks are due" needs no collection
 * scan (FerretDB indexes only `_id`; a due query over 10,000 tasks took 45 s).
 *
 * - `due` is a sorted set: member = task `_id`, score = next poll time (ms). A submit adds the
 *   task; every poll result, release or deferral moves it; a final task leaves it.
 * - claim() takes the due members atomically (a Lua script) and moves each to `now + leaseMs`: that
 *   claim is the poll lease. No other replica sees them until it expires, so the replica polls them
 *   without any Mongo write; release() moves them to their next poll only while their score is still
 *   this claim's (a round that overran its lease does not move a task another replica now holds).
 *   Mongo is written only when a poll changes a task, and a final transition once through its
 *   final record (leased-tasks.ts); when Redis fails, pollers fall back to the Mongo lease.
 * - `billing` is a set of final tasks whose settle or refund is not done yet (repair reads it).
 * - Recovery: Redis is a cache of Mongo. `built` is a marker that expires every `rebuildMs`; a
 *   replica that finds it missing (expired, or Redis was wiped or replaced) takes it and re-adds
 *   every unfinished task from Mongo (one scan), keeping scores already present, and every final
 *   task with billing still open. A lost Redis therefore loses no task, only delays polls by one
 *   scan.
 */
import type { Redis } from '@aigw/common';

const CLAIM = `
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do redis.call('ZADD', KEYS[1], ARGV[3], id) end
return ids`;

const RELEASE = `
local n = 0
for i = 3, #ARGV do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) == tonumber(ARGV[1]) then
    redis.call('ZADD', KEYS[1], ARGV[2], ARGV[i])
    n = n + 1
  end
end
return n`;

export interface DueSchedule {
  /** Adds or moves tasks to poll at `at` (ms). */
  schedule(ids: number[], at: number): Promise<void>;
  /** Takes up to `limit` due tasks and hides them until `now + leaseMs`. */
  claim(now: number, limit: number, leaseMs: number): Promise<number[]>;
  /** Moves claimed tasks to `at`, those still held by the claim that ends at `until`; how many. */
  release(ids: number[], until: number, at: number): Promise<number>;
  /** Takes tasks out (final, or gone). */
  remove(ids: number[]): Promise<void>;
  /** Re-adds tasks without moving those present (rebuild). */
  restore(entries: { id: number; at: number }[]): Promise<void>;
  billingOpen(ids: number[]): Promise<void>;
  billingDone(ids: number[]): Promise<void>;
  billingPending(limit: number): Promise<number[]>;
  /** True when this replica should rebuild now (the marker was missing; it now holds it). */
  takeRebuild(rebuildMs: number): Promise<boolean>;
  /** Forgets that a rebuild happened (a failed rebuild is retried at the next tick). */
  dropRebuild(): Promise<void>;
}

/** The schedules of one database's platforms (keys carry the database name: tests share Redis). */
export function dueSchedules(redis: Redis, db: string): (platform: string) => DueSchedule {
  return (platform) => {
    const base = `tasks:${db}:${platform}`;
    const due = `${base}:due`;
    const billing = `${base}:billing`;
    const built = `${base}:built`;
    const zadd = async (ids: number[], at: number, nx: boolean) => {
      if (ids.length === 0) return;
      const args = ids.flatMap((id) => [at, String(id)]);
      if (nx) await redis.zadd(due, 'NX', ...args);
      else await redis.zadd(due, ...args);
    };
    return {
      schedule: (ids, at) => zadd(ids, at, false),
      async claim(now, limit, leaseMs) {
        const ids = (await redis.eval(CLAIM, 1, due, now, limit, now + leaseMs)) as string[];
        return ids.map(Number);
      },
      async release(ids, until, at) {
        if (ids.length === 0) return 0;
        return (await redis.eval(RELEASE, 1, due, String(until), at, ...ids.map(String))) as number;
      },
      async remove(ids) {
        if (ids.length > 0) await redis.zrem(due, ...ids.map(String));
      },
      async restore(entries) {
        for (let i = 0; i < entries.length; i += 1000) {
          const part = entries.slice(i, i + 1000);
          await redis.zadd(due, 'NX', ...part.flatMap((e) => [e.at, String(e.id)]));
        }
      },
      async billingOpen(ids) {
        if (ids.length > 0) await redis.sadd(billing, ...ids.map(String));
      },
      async billingDone(ids) {
        if (ids.length > 0) await redis.srem(billing, ...ids.map(String));
      },
      async billingPending(limit) {
        return (await redis.srandmember(billing, limit)).map(Number);
      },
      async takeRebuild(rebuildMs) {
        return (await redis.set(built, '1', 'PX', rebuildMs, 'NX')) === 'OK';
      },
      async dropRebuild() {
        await redis.del(built);
      },
    };
  };
}
