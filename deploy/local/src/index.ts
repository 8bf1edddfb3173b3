/**
 * Real infrastructure (MongoDB-compatible server, Kafka, Redis) for tests and the local stack.
 *
 * Order of choice (see `shared/design/architecture.md`, "Real infrastructure everywhere"):
 * 1. `MONGO_URL`, `KAFKA_BROKERS` and `REDIS_URL` all set in the environment: use them.
 * 2. A container runtime answers (testcontainers' own detection, bounded to a few seconds):
 *    start `mongo:7`, `apache/kafka:3.9.1` and `redis:7` containers.
 * 3. Otherwise `deploy/local/bin/infra.sh up`: FerretDB (SQLite) on 127.0.0.1:27027, Kafka 3.9
 *    (KRaft) on 127.0.0.1:9094 and Redis on 127.0.0.1:6390, from binaries that
 *    `deploy/local/bin/setup.sh` installed into `.local/`.
 *
 * `INFRA_SOURCE=local` or `INFRA_SOURCE=testcontainers` skips the detection and forces a source.
 *
 * Servers are shared by all tests: isolate with {@link uniqueName} (database, topic, group and
 * key-prefix names) rather than by starting servers per test.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the servers come from. */
export type InfraSource = 'env' | 'testcontainers' | 'local';

/** Connection details of running MongoDB-compatible, Kafka and Redis servers. */
export interface Infra {
  /** MongoDB connection string without a database, e.g. `mongodb://127.0.0.1:27027/`; pass `dbName` to the client. */
  mongoUrl: string;
  /** Kafka bootstrap brokers, e.g. `['127.0.0.1:9094']`. */
  kafkaBrokers: string[];
  /** Redis URL, e.g. `redis://127.0.0.1:6390`. */
  redisUrl: string;
  /** Which of the three ways provided the servers. */
  source: InfraSource;
  /**
   * Releases what this provider started. `env`: no-op. `testcontainers`: stops the containers.
   * `local`: no-op by default, so that the shared servers keep running for the next test run
   * and for other processes (stop them with `deploy/local/bin/infra.sh down`); with
   * `{ stopLocal: true }` it runs `infra.sh down` for the servers this call started, if any.
   */
  stop(): Promise<void>;
}

/** Options of {@link provideInfra}. */
export interface ProvideInfraOptions {
  /**
   * Local source only: make `stop()` stop the servers that this call started (never those that
   * were already running). Default `false`: local servers are left running.
   */
  stopLocal?: boolean;
  /** How long to wait for the container runtime detection, in ms. Default 5000. */
  runtimeDetectionTimeoutMs?: number;
}

const ENV_KEYS = ['MONGO_URL', 'KAFKA_BROKERS', 'REDIS_URL'] as const;

const here = path.dirname(fileURLToPath(import.meta.url));
/** Absolute path of `deploy/local/bin/infra.sh`. */
export const INFRA_SCRIPT = path.resolve(here, '../bin/infra.sh');

let cached: Promise<Infra> | undefined;

/**
 * Provides running MongoDB-compatible, Kafka and Redis servers: from the environment, else
 * containers (when a container runtime answers), else the local binaries (`infra.sh up`).
 * The result is memoized per process; `stop()` clears the memo.
 *
 * @example
 * const infra = await provideInfra();
 * await mongoose.connect(infra.mongoUrl, { dbName: uniqueName('users_test') });
 */
export function provideInfra(options: ProvideInfraOptions = {}): Promise<Infra> {
  if (!cached) {
    cached = resolveInfra(options).then((infra) => ({
      ...infra,
      stop: async () => {
        cached = undefined;
        await infra.stop();
      },
    }));
    cached.catch(() => {
      cached = undefined;
    });
  }
  return cached;
}

async function resolveInfra(options: ProvideInfraOptions): Promise<Infra> {
  const fromEnv = infraFromEnv(process.env);
  if (fromEnv) return fromEnv;

  const forced = process.env.INFRA_SOURCE;
  if (forced === 'local') return startLocal(options);
  if (forced === 'testcontainers') return startContainers();
  if (forced && forced !== 'auto') {
    throw new Error(`INFRA_SOURCE must be local, testcontainers or auto, not ${JSON.stringify(forced)}`);
  }

  if (await containerRuntimeAnswers(options.runtimeDetectionTimeoutMs ?? 5000)) {
    return startContainers();
  }
  return startLocal(options);
}

/**
 * Reads `MONGO_URL`, `KAFKA_BROKERS` (comma-separated) and `REDIS_URL`; returns `undefined`
 * unless all three are set.
 */
export function infraFromEnv(env: NodeJS.ProcessEnv): Infra | undefined {
  const mongoUrl = env.MONGO_URL?.trim();
  const brokers = env.KAFKA_BROKERS?.trim();
  const redisUrl = env.REDIS_URL?.trim();
  if (!mongoUrl || !brokers || !redisUrl) return undefined;
  return {
    mongoUrl,
    kafkaBrokers: brokers
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean),
    redisUrl,
    source: 'env',
    stop: async () => {},
  };
}

/** The three environment variables that describe `infra` (for child processes or a globalSetup). */
export function infraEnv(
  infra: Pick<Infra, 'mongoUrl' | 'kafkaBrokers' | 'redisUrl'>,
): Record<(typeof ENV_KEYS)[number], string> {
  return {
    MONGO_URL: infra.mongoUrl,
    KAFKA_BROKERS: infra.kafkaBrokers.join(','),
    REDIS_URL: infra.redisUrl,
  };
}

/**
 * A fresh name for a per-test database, topic, consumer group or key prefix:
 * `<prefix>_<time>_<random>`, only `[a-z0-9_]` (valid for MongoDB/FerretDB databases and
 * collections, Kafka topics and groups, Redis keys), at most 63 characters.
 *
 * @example uniqueName('billing') // 'billing_m3x8k2a1_4f9qz'
 */
export function uniqueName(prefix = 't'): string {
  const clean =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '') || 't';
  const suffix = `${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8).padEnd(6, '0')}`;
  return `${clean.slice(0, 63 - suffix.length - 1)}_${suffix}`;
}

// ---------------------------------------------------------------------------------------------
// Container runtime (testcontainers)
// ---------------------------------------------------------------------------------------------

/**
 * Cheap hints that a container runtime may exist; without any, testcontainers (whose import
 * alone takes seconds) is not even loaded. Mirrors testcontainers' strategies: DOCKER_HOST /
 * ~/.testcontainers.properties, the Docker socket, rootless and Desktop sockets, Windows pipes.
 */
function containerRuntimeHinted(): boolean {
  const env = process.env;
  if (env.DOCKER_HOST || env.TESTCONTAINERS_HOST_OVERRIDE || env.TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE) return true;
  if (process.platform === 'win32') return true;
  const home = os.homedir();
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const candidates = [
    path.join(home, '.testcontainers.properties'),
    '/var/run/docker.sock',
    env.XDG_RUNTIME_DIR ? path.join(env.XDG_RUNTIME_DIR, 'docker.sock') : '',
    path.join(home, '.docker', 'run', 'docker.sock'),
    path.join(home, '.docker', 'desktop', 'docker.sock'),
    uid !== undefined ? `/run/user/${uid}/docker.sock` : '',
  ];
  return candidates.some((p) => p !== '' && existsSync(p));
}

async function containerRuntimeAnswers(timeoutMs: number): Promise<boolean> {
  if (!containerRuntimeHinted()) return false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    const detect = import('testcontainers')
      .then(({ getContainerRuntimeClient }) => getContainerRuntimeClient())
      .then(() => true)
      .catch(() => false);
    return await Promise.race([detect, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A TCP port that is free on this machine right now (for a fixed host-port binding). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function startContainers(): Promise<Infra> {
  const { GenericContainer, Wait, getContainerRuntimeClient } = await import('testcontainers');
  const runtime = await getContainerRuntimeClient();
  const host = runtime.info.containerRuntime.host;
  // Kafka must advertise the address clients reach it on, so its host port is chosen up front.
  const kafkaHostPort = await freePort();

  const starts = [
    new GenericContainer('mongo:7')
      .withExposedPorts(27017)
      .withWaitStrategy(Wait.forLogMessage(/Waiting for connections/))
      .withStartupTimeout(120_000)
      .start(),
    new GenericContainer('apache/kafka:3.9.1')
      .withExposedPorts({ container: 9094, host: kafkaHostPort })
      .withEnvironment({
        KAFKA_NODE_ID: '1',
        KAFKA_PROCESS_ROLES: 'broker,controller',
        KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093,EXTERNAL://:9094',
        KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://localhost:9092,EXTERNAL://${host}:${kafkaHostPort}`,
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT',
        KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
        KAFKA_INTER_BROKER_LISTENER_NAME: 'PLAINTEXT',
        KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
        KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'true',
        KAFKA_NUM_PARTITIONS: '3',
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
        KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
        KAFKA_HEAP_OPTS: '-Xms128m -Xmx512m',
      })
      .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
      .withStartupTimeout(120_000)
      .start(),
    new GenericContainer('redis:7')
      .withExposedPorts(6379)
      .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
      .withStartupTimeout(60_000)
      .start(),
  ];
  const results = await Promise.allSettled(starts);
  const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.allSettled(started.map((c) => c.stop()));
    throw failed.reason;
  }
  const [mongo, , redis] = started;
  if (!mongo || !redis) throw new Error('testcontainers: a container did not start');
  return {
    mongoUrl: `mongodb://${mongo.getHost()}:${mongo.getMappedPort(27017)}/`,
    kafkaBrokers: [`${host}:${kafkaHostPort}`],
    redisUrl: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
    source: 'testcontainers',
    stop: async () => {
      await Promise.allSettled(started.map((c) => c.stop()));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Local binaries (deploy/local/bin/infra.sh)
// ---------------------------------------------------------------------------------------------

function runInfraScript(args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      [INFRA_SCRIPT, ...args],
      { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          reject(new Error(`infra.sh ${args.join(' ')} failed: ${err.message}\n${stderr}`));
        } else {
          resolve({ stdout, stderr });
        }
      },
    );
  });
}

/** Parses the three `KEY=value` lines that `infra.sh up` / `infra.sh env` print. */
export function parseInfraOutput(stdout: string): Pick<Infra, 'mongoUrl' | 'kafkaBrokers' | 'redisUrl'> {
  const values = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const m = /^(MONGO_URL|KAFKA_BROKERS|REDIS_URL)=(.+)$/.exec(line.trim());
    if (m?.[1] && m[2]) values.set(m[1], m[2]);
  }
  const missing = ENV_KEYS.filter((k) => !values.has(k));
  if (missing.length > 0) throw new Error(`infra.sh printed no ${missing.join(', ')}:\n${stdout}`);
  return {
    mongoUrl: values.get('MONGO_URL') as string,
    kafkaBrokers: (values.get('KAFKA_BROKERS') as string).split(',').map((b) => b.trim()),
    redisUrl: values.get('REDIS_URL') as string,
  };
}

async function startLocal(options: ProvideInfraOptions): Promise<Infra> {
  // Up to 15 minutes: when a binary is missing, infra.sh first runs setup.sh (FerretDB build).
  const { stdout, stderr } = await runInfraScript(['up'], 15 * 60_000);
  const started = [...stderr.matchAll(/\[infra\] (mongo|kafka|redis): starting on/g)].map((m) => m[1] as string);
  return {
    ...parseInfraOutput(stdout),
    source: 'local',
    stop: async () => {
      if (options.stopLocal && started.length > 0) {
        await runInfraScript(['down', ...started], 2 * 60_000);
      }
    },
  };
}
