import {
  baseEnv,
  infraDefaults,
  infraEnv,
  loadConfig,
  peerDefaults,
  proxyList,
  RELAY_LEASE_FENCE_MS,
} from '@aigw/common';
import { z } from 'zod';

const int = (d: number) => z.coerce.number().int().min(0).default(d);

const schema = baseEnv.extend(infraEnv.shape).extend({
  USERS_ADDR: z.string(),
  CHANNELS_ADDR: z.string(),
  BILLING_ADDR: z.string(),
  LOGS_ADDR: z.string(),
  REDIS_KEY_PREFIX: z.string().default(''),
  /** /readyz and /metrics (the public port serves /healthz only). */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535),
  /** The gateway's session secret: /pg/chat/completions reads console sessions (read only). */
  SESSION_SECRET: z.string().default(''),
  /** Token and user cache lifetime (entity-changed events drop entries sooner). */
  RELAY_CACHE_TTL_MS: int(30_000),
  /** Full reload of the channel snapshot and ratios (events trigger reloads sooner). */
  RELAY_SNAPSHOT_REFRESH_MS: int(60_000),
  /** Upstream response-header and body-idle timeout. */
  RELAY_UPSTREAM_TIMEOUT_MS: int(300_000),
  /** A stream whose first token takes longer fails over to another channel; 0 disables. */
  RELAY_FIRST_TOKEN_TIMEOUT_MS: int(60_000),
  /**
   * Skip pre-consume only while this replica's unsettled skips of a user, with the request's upper
   * bound, stay within 1/factor of the user's (and a limited token's) balance.
   */
  RELAY_TRUST_FACTOR: z.coerce.number().int().min(1).default(100),
  /** A seen balance older than this is not trusted for skipping pre-consume (and is re-read at half of it). */
  RELAY_BALANCE_TTL_MS: z.coerce.number().int().min(100).default(10_000),
  /**
   * Wallet slices (domain/wallet-slices.ts): `1` draws the reservations of requests that would
   * pre-consume from a hold this process takes per user, instead of one billing round each.
   */
  RELAY_WALLET_SLICES: z.enum(['0', '1']).default('0'),
  /** A slice holds this many of the requesting request's bound (never more than the balance). */
  RELAY_WALLET_SLICE_REQUESTS: z.coerce.number().int().min(1).max(1_000).default(8),
  /** A slice not drawn from for this long is released. */
  RELAY_WALLET_SLICE_IDLE_MS: z.coerce.number().int().min(50).default(5_000),
  /** A slice older than this takes no more requests (billing gives back holds older than an hour). */
  RELAY_WALLET_SLICE_MAX_AGE_MS: z.coerce.number().int().min(1_000).max(1_800_000).default(300_000),
  /**
   * Backpressure: while billing's settles lag by more than this (ms) or these many events, or
   * billing's lag key is missing, every request pre-consumes. RELAY_SETTLE_MAX_LAG_MS=0 turns it off.
   */
  RELAY_SETTLE_MAX_LAG_MS: int(5_000),
  RELAY_SETTLE_MAX_LAG_EVENTS: int(10_000),
  /** Output token limits reserved for requests without max_tokens: JSON {model prefix: tokens} over the built-in table. */
  RELAY_OUTPUT_LIMITS: z
    .string()
    .default('{}')
    .transform((s, ctx) => {
      try {
        const v = JSON.parse(s) as unknown;
        if (v && typeof v === 'object' && Object.values(v).every((n) => Number.isInteger(n) && (n as number) > 0))
          return v as Record<string, number>;
      } catch {}
      ctx.addIssue({ code: 'custom', message: 'RELAY_OUTPUT_LIMITS must be a JSON object of positive integers' });
      return z.NEVER;
    }),
  /** The output limit of models the table does not know. */
  RELAY_DEFAULT_OUTPUT_LIMIT: z.coerce.number().int().min(1).default(32_768),
  /** Largest request body of multipart uploads (audio transcriptions, image edits). */
  RELAY_MAX_BODY_BYTES: int(64 * 1024 * 1024),
  /** Largest JSON request body (chat, messages, completions, embeddings...): 413 beyond it. */
  RELAY_MAX_JSON_BYTES: int(10 * 1024 * 1024),
  /** Requests and tokens per minute, per token and per user, shared through Redis; 0 = no limit. */
  RELAY_TOKEN_RPM: int(0),
  RELAY_TOKEN_TPM: int(0),
  RELAY_USER_RPM: int(0),
  RELAY_USER_TPM: int(0),
  /**
   * Usage events wait at most this long to be sent together (or until 1,000 are queued). Each
   * send encodes the batch in one go on the event loop: shorter batches, shorter pauses.
   */
  RELAY_USAGE_LINGER_MS: z.coerce.number().int().min(1).default(100),
  /**
   * The lease fence (docs/security.md), 5 s by default (at most half the lapse; 0 turns it off):
   * without a lease renewal confirmed for this long, by Redis itself or by billing writing it for
   * the relay, the relay ends its requests that hold a reservation, before billing could give their
   * holds back (the lapse, 10 s). While billing answers that it cannot reach Redis either, nothing
   * can lapse and the fence waits.
   */
  RELAY_LEASE_FENCE_MS: z.coerce.number().int().min(0).max(RELAY_LEASE_FENCE_MS).default(RELAY_LEASE_FENCE_MS),
  /**
   * Usage events kept in memory while Kafka does not take them (about 0.3 KB each): beyond it the
   * relay refuses new requests (503) until the backlog is sent, instead of dropping events.
   */
  RELAY_USAGE_BUFFER_MAX: z.coerce.number().int().min(1_000).default(100_000),
  /**
   * A directory of this replica's own (an emptyDir in Kubernetes) where usage events are appended
   * until Kafka acknowledges them, so an answered request is billed even when the relay is killed
   * (kill -9, OOM) before sending its event: the next relay process with the directory sends what
   * is left. Empty: events wait in memory only (tests that run several relays in one process).
   */
  RELAY_USAGE_SPOOL_DIR: z.string().default(''),
  /**
   * How long SIGTERM waits for in-flight requests (streams, long completions) to finish: 5 min by
   * default. The chart sets it (relay.drainSeconds), with the pod's grace period above it.
   */
  RELAY_DRAIN_MS: int(300_000),
  /**
   * On SIGTERM /readyz answers 503 at once, but the relay keeps accepting and serving this long
   * (every answer with Connection: close) before it closes its listener: a load balancer that
   * polls readiness still sends requests here until its next probe, and closing the listener
   * before then resets requests it has already sent (which it cannot retry for a POST). It must
   * exceed the balancer's readiness probe period (with its failure threshold). In Kubernetes the
   * chart's preStop sleep already covers the endpoint removal; this covers balancers that poll
   * the pods themselves. Part of RELAY_DRAIN_MS (which counts from SIGTERM): default 5 s, or
   * RELAY_DRAIN_MS when that is shorter; set above RELAY_DRAIN_MS it is refused.
   */
  RELAY_DRAIN_DELAY_MS: z.coerce.number().int().min(0).optional(),
  /**
   * When a stopping relay exits whatever it is doing: after the drain, the usage events still
   * queued are flushed to Kafka within the headroom left. Default RELAY_DRAIN_MS + 20 s; must be
   * above RELAY_DRAIN_MS.
   */
  RELAY_FORCE_EXIT_MS: z.coerce.number().int().min(1).optional(),
  /**
   * Proxies whose X-Forwarded-For is believed for the client address (token IP allow-lists, logs):
   * addresses, CIDRs, loopback, linklocal, uniquelocal. Default none. The local stack names
   * loopback (the gateway proxies /v1 there); a cluster names the ingress controller's addresses.
   */
  TRUSTED_PROXIES: proxyList,
});

/** Headroom between the end of the drain and the forced exit, for the usage flush (default). */
export const FLUSH_HEADROOM_MS = 20_000;
/** How long a stopping relay serves on before it closes its listener (default). */
export const DRAIN_DELAY_MS = 5_000;

export type Config = Omit<z.infer<typeof schema>, 'RELAY_FORCE_EXIT_MS' | 'RELAY_DRAIN_DELAY_MS'> & {
  RELAY_FORCE_EXIT_MS: number;
  RELAY_DRAIN_DELAY_MS: number;
};

/** Parses the relay's environment once (fail fast). */
export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  const c = loadConfig(
    schema
      .refine((v) => v.RELAY_FORCE_EXIT_MS === undefined || v.RELAY_FORCE_EXIT_MS > v.RELAY_DRAIN_MS, {
        path: ['RELAY_FORCE_EXIT_MS'],
        message: 'must be greater than RELAY_DRAIN_MS (the drain would be cut short, and the usage flush with it)',
      })
      .refine((v) => v.RELAY_DRAIN_DELAY_MS === undefined || v.RELAY_DRAIN_DELAY_MS <= v.RELAY_DRAIN_MS, {
        path: ['RELAY_DRAIN_DELAY_MS'],
        message: 'must be at most RELAY_DRAIN_MS (the delay is part of the drain)',
      }),
    env,
    {
      ...infraDefaults,
      ...peerDefaults,
      HTTP_PORT: '3001',
      GRPC_PORT: '50054',
      METRICS_PORT: '9468',
    },
  );
  return {
    ...c,
    RELAY_FORCE_EXIT_MS: c.RELAY_FORCE_EXIT_MS ?? c.RELAY_DRAIN_MS + FLUSH_HEADROOM_MS,
    RELAY_DRAIN_DELAY_MS: c.RELAY_DRAIN_DELAY_MS ?? Math.min(DRAIN_DELAY_MS, c.RELAY_DRAIN_MS),
  };
}
