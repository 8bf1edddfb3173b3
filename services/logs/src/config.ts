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
  /**
   * How often consumption logs are folded into the dashboard's hourly buckets. 0 (default):
   * every DataExportInterval minutes, as the option says; tests set a few hundred ms.
   */
  LOGS_DATA_FLUSH_MS: z.coerce.number().int().min(0).default(0),
});

export type Config = z.infer<typeof schema>;

/** Parses the logs service's environment once (fail fast). */
export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  return loadConfig(schema, env, { ...infraDefaults, ...peerDefaults, HTTP_PORT: '9469', GRPC_PORT: '50055' });
}
