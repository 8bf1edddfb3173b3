import { baseEnv, infraDefaults, infraEnv, loadConfig, peerDefaults } from '@aigw/common';
import { z } from 'zod';

const schema = baseEnv.extend(infraEnv.shape).extend({
  MONGO_DB: z.string().default('aigw_logs'),
  USERS_ADDR: z.string(),
  CHANNELS_ADDR: z.string(),
  BILLING_ADDR: z.string(),
  RELAY_ADDR: z.string(),
  LOGS_ADDR: z.string(),
  TASKS_ADDR: z.string(),
  /** How often the retention and cleanup pass runs (also at start and after each cleanup request). */
  LOG_CLEANUP_INTERVAL_MS: z.coerce.number().int().min(1_000).default(3_600_000),
  /** How often the cubes' job looks for closed hours and days to cube (also at start). */
  LOG_CUBE_INTERVAL_MS: z.coerce.number().int().min(1_000).default(60_000),
});

export type Config = z.infer<typeof schema>;

/** Parses the logs service's environment once (fail fast). */
export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  return loadConfig(schema, env, { ...infraDefaults, ...peerDefaults, HTTP_PORT: '9469', GRPC_PORT: '50055' });
}
