import { baseEnv, infraDefaults, infraEnv, loadConfig } from '@aigw/common';
import { z } from 'zod';

const schema = baseEnv.extend(infraEnv.shape).extend({
  MONGO_DB: z.string().default('aigw_users'),
  /** Seeded on first start when no user exists. */
  ROOT_PASSWORD: z.string().min(6).default('123456'),
});

export type Config = z.infer<typeof schema>;

/** Parses the users service's environment once (fail fast). */
export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  return loadConfig(schema, env, { ...infraDefaults, HTTP_PORT: '9465', GRPC_PORT: '50051' });
}
