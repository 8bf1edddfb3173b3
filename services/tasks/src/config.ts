import { baseEnv, infraDefaults, infraEnv, loadConfig, peerDefaults, proxyList } from '@aigw/common';
import { z } from 'zod';

const int = (d: number) => z.coerce.number().int().min(0).default(d);

const schema = baseEnv.extend(infraEnv.shape).extend({
  MONGO_DB: z.string().default('aigw_tasks'),
  /** /readyz and /metrics (the public port, HTTP_PORT, serves /healthz and the task routes). */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535),
  USERS_ADDR: z.string(),
  CHANNELS_ADDR: z.string(),
  BILLING_ADDR: z.string(),
  RELAY_ADDR: z.string(),
  LOGS_ADDR: z.string(),
  TASKS_ADDR: z.string(),
  /**
   * Peers whose X-Forwarded-For names the client (the gateway's proxy, the ingress): addresses,
   * CIDRs, loopback, linklocal, uniquelocal. Default none: the client is the socket's peer.
   */
  TRUSTED_PROXIES: proxyList,
  /** How often an unfinished task is fetched from its upstream. */
  TASKS_POLL_INTERVAL_MS: int(5_000),
  /** How often a replica looks for tasks due for a poll. */
  TASKS_POLL_TICK_MS: int(1_000),
  /** A poll lease: another replica may take a task whose lease is this old. */
  TASKS_LEASE_MS: int(30_000),
  /** Tasks claimed per tick and replica. */
  TASKS_POLL_BATCH: int(200),
  /** A task not finished this long after its submit fails and is refunded (reference: an hour). */
  TASKS_TIMEOUT_MS: int(60 * 60 * 1000),
  /**
   * How long billing keeps a reservation before giving it back (billing's hold expiry, an hour).
   * A task running longer has its hold renewed before then (task-billing.ts renewHold), so a
   * TASKS_TIMEOUT_MS above an hour keeps the charge reserved until SUCCESS or the timeout refund.
   */
  TASKS_HOLD_TTL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(60 * 60 * 1000),
  /**
   * How often one replica rebuilds the Redis poll schedules from Mongo (a scan of unfinished
   * tasks): a wiped Redis is noticed at the next tick, drift (a submit that could not reach
   * Redis) within this time.
   */
  TASKS_SCHEDULE_REBUILD_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(10 * 60 * 1000),
  /** Upper bound of the per-upstream backoff after failed polls. */
  TASKS_BACKOFF_MAX_MS: int(60_000),
  /** notifyHook calls: attempts per change and the timeout of each. */
  TASKS_NOTIFY_ATTEMPTS: int(3),
  TASKS_NOTIFY_TIMEOUT_MS: int(5_000),
  /**
   * Let notifyHook URLs reach loopback, private and link-local addresses. Off by default: a hook
   * is the client's URL, and this service sits inside the cluster (transport/http/notify.ts).
   */
  TASKS_NOTIFY_PRIVATE: z.enum(['true', 'false']).default('false'),
  /** Upstream request timeout (submits, fetches, image proxy). */
  TASKS_UPSTREAM_TIMEOUT_MS: int(60_000),
  /** Token and user cache lifetime. */
  TASKS_CACHE_TTL_MS: int(10_000),
  /** How often the retention of task records (option TaskRetentionDays) runs a pass. */
  TASKS_CLEANUP_INTERVAL_MS: z.coerce.number().int().min(1_000).default(3_600_000),
  /** Set to false to run a replica that serves HTTP/gRPC but does not poll. */
  TASKS_POLLER: z.enum(['true', 'false']).default('true'),
});

export type Config = z.infer<typeof schema>;

/** Parses the tasks service's environment once (fail fast). */
export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  return loadConfig(schema, env, {
    ...infraDefaults,
    ...peerDefaults,
    HTTP_PORT: '3002',
    GRPC_PORT: '50056',
    METRICS_PORT: '9470',
  });
}
