/**
 * Starts chosen services of the platform inside the current process, on free ports, against the
 * real servers named by MONGO_URL, KAFKA_BROKERS and REDIS_URL. Each stack gets its own databases
 * and its own Kafka topic prefix, so stacks in parallel test files never see each other's data.
 * Used by integration and browser tests; the local stack (start.ts) runs real processes instead.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect, createServer } from 'node:net';
import {
  createInternalAuth,
  createLogger,
  createPlatformAuth,
  generateKeySet,
  type KeySet,
  keysOf,
  runWithInternalAuth,
  setDefaultInternalAuth,
} from '@aigw/common';

export type ServiceName = 'users' | 'channels' | 'billing' | 'logs' | 'relay' | 'tasks' | 'gateway';

/** Start order: owners of data first, the gateway last. */
const ORDER: ServiceName[] = ['users', 'channels', 'billing', 'logs', 'relay', 'tasks', 'gateway'];

interface StartedApp {
  stop(): Promise<void>;
}
type Loader = () => Promise<{
  readConfig(env: Record<string, string | undefined>): unknown;
  createApp(config: never, logger: ReturnType<typeof createLogger>): Promise<{ start(): Promise<void> } & StartedApp>;
}>;

const load =
  (svc: ServiceName): Loader =>
  async () => {
    const [config, app] = await Promise.all([
      import(`../../../services/${svc}/src/config.ts`),
      import(`../../../services/${svc}/src/app.ts`),
    ]);
    return { readConfig: config.readConfig, createApp: app.createApp };
  };

/** Binds a port on 127.0.0.1 (0: any), reads it and releases it; undefined when it is taken. */
function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address();
      const got = typeof addr === 'object' && addr ? addr.port : undefined;
      srv.close(() => resolve(got));
    });
  });
}

/**
 * Ports handed out by freePort inside a Vitest worker: a block of 1,000 per pool slot from 20,000,
 * below Linux's ephemeral range (32768-60999). A port picked from the ephemeral range and bound
 * later could be taken in between by any outgoing connection (to Kafka, FerretDB, a fake) or by
 * the other worker's stack: a stack then failed to start ("No address added out of total 1
 * resolved", EADDRINUSE) about once per full run. Here no outgoing connection takes these ports
 * and each concurrent worker (VITEST_POOL_ID) has its own block.
 */
const PORT_BLOCK = 1_000;
const PORT_FIRST = 20_000;
let nextPort = -1;

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(port, '127.0.0.1');
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/**
 * A private redis-server on a free loopback port (no persistence), for tests that take Redis away
 * (the shared one is left alone): `kill()` SIGKILLs it and waits for its exit, `start()` starts it
 * again on the same port and waits until it accepts connections.
 */
export async function privateRedis(): Promise<{
  port: number;
  url: string;
  start(): Promise<void>;
  kill(): Promise<void>;
}> {
  const port = await freePort();
  let server: ChildProcess | undefined;
  const start = async () => {
    server = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    for (let i = 0; i < 100 && !(await accepts(port)); i++) await new Promise((r) => setTimeout(r, 100));
  };
  const kill = async () => {
    const s = server;
    if (!s || s.exitCode !== null || s.signalCode !== null) return;
    const exited = new Promise((r) => s.once('exit', r));
    s.kill('SIGKILL');
    await exited;
  };
  await start();
  return { port, url: `redis://127.0.0.1:${port}`, start, kill };
}

/** A free TCP port on 127.0.0.1 (bound, read, released) for a server to listen on shortly. */
export async function freePort(): Promise<number> {
  const pool = Number(process.env.VITEST_POOL_ID);
  if (Number.isInteger(pool) && pool >= 0 && pool < 12) {
    const base = PORT_FIRST + pool * PORT_BLOCK;
    // A random start: the files a slot runs one after another do not reuse each other's ports.
    if (nextPort < 0) nextPort = Math.floor(Math.random() * PORT_BLOCK);
    for (let tries = 0; tries < PORT_BLOCK; tries++) {
      const port = base + (nextPort++ % PORT_BLOCK);
      if ((await probe(port)) === port) return port;
    }
  }
  const port = await probe(0);
  if (port === undefined) throw new Error('no free TCP port on 127.0.0.1');
  return port;
}

export interface StackOptions {
  /** Services to start (default: all seven). */
  services?: ServiceName[];
  /** Extra environment for every service (e.g. RATE_LIMIT_CRITICAL). */
  env?: Record<string, string>;
  /** Extra environment for one service only (e.g. the relay's REDIS_URL through a proxy a test cuts). */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
}

export interface Stack {
  /** http://127.0.0.1:<port> of the gateway and of the relay. */
  gatewayUrl: string;
  relayUrl: string;
  /** `metrics`: the ops port (/readyz, /metrics) of gateway, relay and tasks. */
  ports: Record<ServiceName, { http: number; grpc: number; metrics: number }>;
  /** The environment the services got (peer addresses, database names, topic prefix). */
  env: Record<string, string>;
  id: string;
  stop(): Promise<void>;
}

let keySet: KeySet | undefined;

/**
 * The internal gRPC keys of this test process (ADR 0006): one Ed25519 pair per service, made
 * once per process and shared by its stacks. Each service runs under its own key; the test code
 * itself (clients it creates outside a service) signs as whichever service may make each call.
 */
export function stackKeys(): KeySet {
  if (!keySet) {
    keySet = generateKeySet();
    setDefaultInternalAuth(createPlatformAuth(keySet));
  }
  return keySet;
}

/** Starts the stack; call `stop()` in afterAll. */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const keys = stackKeys();
  const wanted = new Set(opts.services ?? ORDER);
  const id = randomBytes(4).toString('hex');
  const ports = {} as Stack['ports'];
  for (const svc of ORDER) ports[svc] = { http: await freePort(), grpc: await freePort(), metrics: await freePort() };
  const addr = (svc: ServiceName) => `127.0.0.1:${ports[svc].grpc}`;
  process.env.KAFKA_TOPIC_PREFIX = `t${id}.`;
  const env: Record<string, string> = {
    MONGO_URL: required('MONGO_URL'),
    KAFKA_BROKERS: required('KAFKA_BROKERS'),
    REDIS_URL: required('REDIS_URL'),
    KAFKA_TOPIC_PREFIX: `t${id}.`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    SESSION_SECRET: `test-session-secret-${id}`,
    CHANNEL_KEY_SECRET: randomBytes(32).toString('hex'),
    TOKEN_KEY_SECRET: randomBytes(32).toString('hex'),
    TOTP_KEY_SECRET: randomBytes(32).toString('hex'),
    REDIS_KEY_PREFIX: `t${id}:`,
    USERS_ADDR: addr('users'),
    CHANNELS_ADDR: addr('channels'),
    BILLING_ADDR: addr('billing'),
    RELAY_ADDR: addr('relay'),
    LOGS_ADDR: addr('logs'),
    TASKS_ADDR: addr('tasks'),
    RELAY_HTTP_URL: `http://127.0.0.1:${ports.relay.http}`,
    TASKS_HTTP_URL: `http://127.0.0.1:${ports.tasks.http}`,
    // The test process plays the ingress (its clients name their address in X-Forwarded-For) and
    // the gateway proxies /v1 to the relay: both from loopback.
    TRUSTED_PROXIES: 'loopback',
    // No balancer polls these relays' readiness: a stopping relay need not serve on for one to
    // notice (the relay's default is 5 s, which every stack's stop would wait out).
    RELAY_DRAIN_DELAY_MS: '0',
    ...opts.env,
  };
  const started: StartedApp[] = [];
  // The services stop side by side, as separate pods would: one after the other, each waited
  // for its consumers' last fetch (up to 1 s each), and a stack took about 9 s to stop.
  const stop = async () => {
    await Promise.all(started.splice(0).map((app) => app.stop().catch(() => undefined)));
  };
  const startOne = async (svc: ServiceName) => {
    const { readConfig, createApp } = await load(svc)();
    const config = readConfig({
      ...env,
      ...opts.serviceEnv?.[svc],
      SERVICE_NAME: svc,
      HTTP_PORT: String(ports[svc].http),
      GRPC_PORT: String(ports[svc].grpc),
      METRICS_PORT: String(ports[svc].metrics),
      MONGO_DB: `aigw_${svc}_${id}`,
    });
    // Clients and servers the service creates while starting use its own key only.
    const app = await runWithInternalAuth(createInternalAuth(keysOf(keys, svc)), async () => {
      const created = await createApp(config as never, createLogger(svc, env.LOG_LEVEL));
      await created.start();
      return created;
    });
    started.push(app);
  };
  // One after the other: started side by side within a level (channels, billing and logs), their
  // first subscribes raced each other's topic creation, and a fresh-clone run failed a stack's
  // start with "This server does not host this topic-partition" (28 Nov 2026, fc39).
  try {
    for (const svc of ORDER) if (wanted.has(svc)) await startOne(svc);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    gatewayUrl: `http://127.0.0.1:${ports.gateway.http}`,
    relayUrl: `http://127.0.0.1:${ports.relay.http}`,
    ports,
    env,
    id,
    stop,
  };
}

function required(name: string): string {
  const v = process.env[name];
  if (!v)
    throw new Error(`${name} is not set: run the tests through vitest (global setup) or deploy/local/bin/infra.sh`);
  return v;
}
