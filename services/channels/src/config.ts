import { baseEnv, infraDefaults, infraEnv, loadConfig, peerDefaults } from '@aigw/common';
import { z } from 'zod';

const schema = baseEnv.extend(infraEnv.shape).extend({
  MONGO_DB: z.string().default('aigw_channels'),
  USERS_ADDR: z.string(),
  CHANNELS_ADDR: z.string(),
  BILLING_ADDR: z.string(),
  RELAY_ADDR: z.string(),
  LOGS_ADDR: z.string(),
  TASKS_ADDR: z.string(),
  /** AES-256-GCM key of channel keys at rest: 32 bytes as 64 hex characters. */
  CHANNEL_KEY_SECRET: z.string().regex(/^[0-9a-fA-F]{64}$/, 'CHANNEL_KEY_SECRET must be 64 hex characters'),
  /**
   * Earlier CHANNEL_KEY_SECRETs during a rotation (comma-separated): still read, and every channel
   * key is sealed again with the current secret at start (docs/security.md, "Rotating").
   */
  CHANNEL_KEY_SECRET_PREVIOUS: z
    .string()
    .regex(
      /^([0-9a-fA-F]{64}(,[0-9a-fA-F]{64})*)?$/,
      'CHANNEL_KEY_SECRET_PREVIOUS must be 64-hex secrets, comma-separated',
    )
    .default(''),
  /** How often the monitor re-tests auto-disabled channels (AutomaticEnableChannelEnabled). */
  CHANNEL_MONITOR_INTERVAL_SEC: z.coerce.number().int().min(5).default(600),
  /** Where the model catalogue's sync reads new-api's metadata lists (`api/newapi/models.json`, `vendors.json`). */
  SYNC_UPSTREAM_BASE: z.string().url().default('https://basellm.github.io/llm-metadata'),
  /** How long one fetch of the sync may take. */
  SYNC_HTTP_TIMEOUT_SECONDS: z.coerce.number().int().min(1).default(15),
});

export type Config = z.infer<typeof schema>;

/** Parses the channels service's environment once (fail fast). */
export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  return loadConfig(schema, env, { ...infraDefaults, ...peerDefaults, HTTP_PORT: '9466', GRPC_PORT: '50052' });
}
