import { baseEnv, infraDefaults, infraEnv, loadConfig, peerDefaults } from '@aigw/common';
import { z } from 'zod';

const schema = baseEnv.extend(infraEnv.shape).extend({
  USERS_ADDR: z.string(),
  CHANNELS_ADDR: z.string(),
  BILLING_ADDR: z.string(),
  LOGS_ADDR: z.string(),
});

export type Config = z.infer<typeof schema>;

/** Parses the relay's environment once (fail fast). */
export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  return loadConfig(schema, env, { ...infraDefaults, ...peerDefaults, HTTP_PORT: '3001', GRPC_PORT: '50054' });
}
