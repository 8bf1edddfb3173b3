import { baseEnv, infraDefaults, infraEnv, loadConfig, peerDefaults } from '@aigw/common';
import { z } from 'zod';

const schema = baseEnv.extend(infraEnv.shape).extend({
  MONGO_DB: z.string().default('aigw_users'),
  /** Seeded on first start when no user exists. */
  ROOT_PASSWORD: z.string().min(6).default('123456'),
  /** billing's WalletService, for the quota the users service grants (new users, invites, aff transfers). */
  BILLING_ADDR: z.string(),
  /** How often undelivered quota credits are retried. */
  CREDIT_RETRY_MS: z.coerce.number().int().positive().default(30_000),
  /** How long email codes and reset links stay valid (10 minutes). */
  VERIFICATION_CODE_TTL_MS: z.coerce.number().int().positive().default(600_000),
  /** Encrypts TOTP secrets at rest and keys the backup-code digests (AES-256-GCM, HMAC). */
  TOTP_KEY_SECRET: z.string().regex(/^[0-9a-fA-F]{64}$/, 'TOTP_KEY_SECRET must be 64 hex characters'),
  /** Earlier TOTP_KEY_SECRETs still read during a rotation (comma-separated; docs/security.md). */
  TOTP_KEY_SECRET_PREVIOUS: z
    .string()
    .regex(
      /^([0-9a-fA-F]{64}(,[0-9a-fA-F]{64})*)?$/,
      'TOTP_KEY_SECRET_PREVIOUS must be 64-hex secrets, comma-separated',
    )
    .default(''),
});

export type Config = z.infer<typeof schema>;

/** Parses the users service's environment once (fail fast). */
export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  return loadConfig(schema, env, {
    ...infraDefaults,
    BILLING_ADDR: peerDefaults.BILLING_ADDR,
    HTTP_PORT: '9465',
    GRPC_PORT: '50051',
  });
}
