import { z } from 'zod';
import { recordBuildInfo } from './metrics.ts';

/** Environment shared by every service. Ports of 0 mean "pick a free one" (tests). */
export const baseEnv = z.object({
  SERVICE_NAME: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  HTTP_PORT: z.coerce.number().int().min(0).max(65535),
  GRPC_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  /** Let notifications and admin alerts (webhook, Bark, Gotify) reach loopback and private addresses (local setups, tests). */
  NOTIFY_PRIVATE: z.enum(['true', 'false']).default('false'),
});

/** Connection settings for the three infrastructure servers. */
export const infraEnv = z.object({
  MONGO_URL: z.string().startsWith('mongodb'),
  KAFKA_BROKERS: z
    .string()
    .min(1)
    .transform((s) =>
      s
        .split(',')
        .map((b) => b.trim())
        .filter(Boolean),
    ),
  REDIS_URL: z.string().startsWith('redis'),
  /**
   * The kind of MongoDB-compatible server behind MONGO_URL: `ferretdb` (the local stack and the
   * tests: FerretDB v1 on SQLite, which answers only `_id` from an index) or `mongodb` (production:
   * MongoDB, whose secondary indexes serve ordinary queries). What exists only for FerretDB is
   * behind it (docs/adr/0001, "What exists only for the embedded store").
   */
  MONGO_FLAVOR: z.enum(['ferretdb', 'mongodb']).default('ferretdb'),
});

/** The kind of store behind MONGO_URL (infraEnv's MONGO_FLAVOR). */
export type MongoFlavor = z.infer<typeof infraEnv>['MONGO_FLAVOR'];

/** Thrown when the environment does not satisfy a service's schema; the process exits on it. */
export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n  ${issues.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses the environment once against a schema (fail fast). `defaults` fill unset variables, so
 * the local stack and tests can run without an .env file while production sets everything.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
  defaults: Record<string, string> = {},
): z.infer<S> {
  const merged: Record<string, string | undefined> = { ...defaults };
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') merged[k] = v;
  const parsed = schema.safeParse(merged);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  // build_info{service} of every service: each reads its configuration once, with its SERVICE_NAME.
  if (merged.SERVICE_NAME) recordBuildInfo(merged.SERVICE_NAME);
  return parsed.data;
}

/** Default addresses of the peers' gRPC servers in the local stack (see docs/development.md). */
export const peerDefaults = {
  USERS_ADDR: '127.0.0.1:50051',
  CHANNELS_ADDR: '127.0.0.1:50052',
  BILLING_ADDR: '127.0.0.1:50053',
  RELAY_ADDR: '127.0.0.1:50054',
  LOGS_ADDR: '127.0.0.1:50055',
  TASKS_ADDR: '127.0.0.1:50056',
} as const;

/** Local-stack defaults for the infrastructure URLs (deploy/local/bin/infra.sh). */
export const infraDefaults = {
  MONGO_URL: 'mongodb://127.0.0.1:27027/',
  KAFKA_BROKERS: '127.0.0.1:9094',
  REDIS_URL: 'redis://127.0.0.1:6390',
} as const;
