import { baseEnv, infraDefaults, infraEnv, loadConfig, peerDefaults } from '@aigw/common';
import { z } from 'zod';

const schema = baseEnv.extend(infraEnv.shape).extend({
  MONGO_DB: z.string().default('aigw_billing'),
  /** Prefix of billing's Redis keys (the settle lag that relays read); the relays' prefix. */
  REDIS_KEY_PREFIX: z.string().default(''),
  /** Encrypts API token keys at rest and keys their lookup HMAC (64 hex characters). */
  TOKEN_KEY_SECRET: z.string().regex(/^[0-9a-fA-F]{64}$/, 'TOKEN_KEY_SECRET must be 64 hex characters'),
  /**
   * Earlier TOKEN_KEY_SECRETs during a rotation (comma-separated): still read, and every token is
   * sealed and indexed again under the current secret at start (docs/security.md, "Rotating").
   */
  TOKEN_KEY_SECRET_PREVIOUS: z
    .string()
    .regex(
      /^([0-9a-fA-F]{64}(,[0-9a-fA-F]{64})*)?$/,
      'TOKEN_KEY_SECRET_PREVIOUS must be 64-hex secrets, comma-separated',
    )
    .default(''),
  /** Stripe's API (tests point it at a fake); empty: https://api.stripe.com. */
  STRIPE_API_BASE: z.string().default(''),
  /** Creem's API; empty: https://api.creem.io, or https://test-api.creem.io with CreemTestMode. */
  CREEM_API_BASE: z.string().default(''),
  /**
   * Folds wallet ledger entries older than the horizon into checkpoints (docs/adr/0003-wallet-ledger.md,
   * "Compaction"). Turn on only once every billing replica runs a version whose reads check the
   * head's folded seq (this one or later).
   */
  LEDGER_FOLD: z.enum(['true', 'false']).default('false'),
  /**
   * The fold's horizon in hours: no operation older than this may arrive again. Unset: the usage
   * topic's retention (read from Kafka) + 24 h. At least 2 (reads trust entries younger than 1 h).
   */
  LEDGER_FOLD_HORIZON_HOURS: z.coerce.number().min(2).optional(),
  /** Time between fold passes (the first runs a minute after start). */
  LEDGER_FOLD_INTERVAL_MS: z.coerce.number().int().min(1_000).default(3_600_000),
  /**
   * The fold runs on one replica at a time, the one holding this Redis lease (renewed every third
   * of it); another takes over this long after the holder died.
   */
  LEDGER_FOLD_LEASE_MS: z.coerce.number().int().min(1_000).default(30_000),
  USERS_ADDR: z.string(),
  CHANNELS_ADDR: z.string(),
  BILLING_ADDR: z.string(),
  RELAY_ADDR: z.string(),
  LOGS_ADDR: z.string(),
  TASKS_ADDR: z.string(),
});

export type Config = z.infer<typeof schema>;

/** Parses the billing service's environment once (fail fast). */
export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  return loadConfig(schema, env, { ...infraDefaults, ...peerDefaults, HTTP_PORT: '9467', GRPC_PORT: '50053' });
}
