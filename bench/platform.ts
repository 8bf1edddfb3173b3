/**
 * The platform as separate OS processes, for the scripts that drive it from outside (bench/e2e.ts,
 * bench/faults.ts): each service started from source as `npm start` does, on free loopback ports,
 * with its own internal gRPC keys (ADR 0006), databases and Kafka topic prefix, against the real
 * servers of MONGO_URL, KAFKA_BROKERS and REDIS_URL. A service can be stopped, paused, killed and
 * started again on the same ports and environment.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createChannel, type RelayStack, setOption } from '@aigw/testkit/harness';
import { freePort, type ServiceName, type Stack } from '../deploy/local/stack/in-process.ts';
import { nodeFlagsOf } from '../deploy/local/stack/services.ts';
import { createPlatformAuth, setDefaultInternalAuth } from '../services/common/src/grpc/auth.ts';
import { ensureKeyDir, loadAuthKeys, PLATFORM_SERVICES } from '../services/common/src/grpc/auth-keys.ts';

const ROOT = resolve(import.meta.dirname, '..');

/** The model the scripts call. */
export const MODEL = 'bench-e2e';
/**
 * The fake upstream reports 10 prompt tokens and one completion token per word of its 10-word
 * reply; ModelRatio 1 and CompletionRatio 2 make each request cost (10 + 10 x 2) x 1 = 30.
 */
export const PRICE = 30;
export const REPLY = 'one two three four five six seven eight nine ten';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The fields of /proc/<pid>/stat after the command (state is [0]: ppid [1], pgrp [2], session [3],
 * utime [11], stime [12], cutime [13], cstime [14], in clock ticks of 10 ms); undefined once gone.
 */
function procStat(pid: number | string): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ');
  } catch {
    return undefined;
  }
}

const ticksMs = (fields: string[], from: number, to: number) => {
  let ms = 0;
  for (let i = from; i <= to; i++) ms += Number(fields[i]) * 10;
  return ms;
};

/** User + system CPU time of a process so far (ms), from /proc. */
export function cpuMs(pid: number | undefined): number {
  const fields = pid ? procStat(pid) : undefined;
  return fields ? ticksMs(fields, 11, 12) : Number.NaN;
}

/**
 * CPU time (ms) of every process in the session of `pid` (a server infra.sh started with setsid:
 * FerretDB, and PostgreSQL with all its backends), children that exited included.
 */
export function sessionCpuMs(pid: number | undefined): number {
  const sid = pid ? procStat(pid)?.[3] : undefined;
  if (sid === undefined) return Number.NaN;
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    // A process that ended between the listing and the read counts nothing.
    const fields = procStat(entry);
    if (fields?.[3] === sid) total += ticksMs(fields, 11, 14);
  }
  return total;
}

/** Waits (bounded) until a service's /readyz answers 200. */
export async function waitReady(port: number, ms = 120_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (
      await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await sleep(200);
  }
  throw new Error(`service on ${port} not ready within ${ms} ms`);
}

export interface Proc {
  name: ServiceName;
  child: ChildProcess;
  /** The port of /readyz and /metrics (the ops port of gateway, relay and tasks). */
  http: number;
  grpc: number;
}

export interface Platform {
  stack: Stack;
  /** `<tag><run>.`: prefixes topics, consumer groups and Redis keys. */
  prefix: string;
  /** Database of a service: `<tag>_<run>_<service>`. */
  database(name: ServiceName): string;
  proc(name: ServiceName): Proc;
  /** Sends a signal to a service (SIGKILL: also waits for its exit). */
  kill(name: ServiceName, signal?: NodeJS.Signals): Promise<void>;
  /** Starts a stopped or killed service again on its ports; resolves once it is ready. */
  restart(name: ServiceName): Promise<void>;
  /** SIGTERM to every service (SIGKILL after 20 s). */
  stop(): Promise<void>;
  /** SIGKILL to every service still running. */
  killAll(): void;
}

export interface PlatformOptions {
  /** Short name of the script, in database names and prefixes (`e2e`, `flt`). */
  tag: string;
  run: string;
  services: ServiceName[];
  /** Each service's stdout and stderr go to `<logDir>/<service>.log` (appended on restarts); else stderr is inherited. */
  logDir?: string;
  env?: Record<string, string>;
  /** Extra Node flags of single services (e.g. --cpu-prof, which NODE_OPTIONS refuses). */
  nodeFlags?: Partial<Record<ServiceName, string[]>>;
  /** Extra environment of single services (e.g. LOG_LEVEL). */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  /** Extra environment computed from the ports chosen (e.g. a proxy in front of a peer). */
  serviceEnvOf?: (ports: Stack['ports']) => Partial<Record<ServiceName, Record<string, string>>>;
}

/** Starts the services as separate processes, in the order given, each ready before the next. */
export async function startPlatform(opts: PlatformOptions): Promise<Platform> {
  const { tag, run } = opts;
  const prefix = `${tag}${run}.`;
  const ports = {} as Stack['ports'];
  for (const svc of ['users', 'channels', 'billing', 'logs', 'relay', 'tasks', 'gateway'] as ServiceName[])
    ports[svc] = { http: await freePort(), grpc: await freePort(), metrics: await freePort() };
  // Gateway, relay and tasks serve /readyz and /metrics on their ops port; the others on their HTTP port.
  const opsPort = (svc: ServiceName) =>
    ['gateway', 'relay', 'tasks'].includes(svc) ? (ports[svc].metrics as number) : ports[svc].http;
  const addr = (svc: ServiceName) => `127.0.0.1:${ports[svc].grpc}`;
  const database = (svc: ServiceName) => `${tag}_${run}_${svc}`;
  // Internal gRPC keys (ADR 0006): a pair per service in a temporary folder; this process signs
  // its set-up calls as whichever service may make each one.
  const grpcAuthDir = mkdtempSync(join(tmpdir(), `aigw-${tag}-keys-`));
  ensureKeyDir(grpcAuthDir);
  const privateKeys = new Map(
    PLATFORM_SERVICES.map((svc) => [svc as string, loadAuthKeys(grpcAuthDir, svc).privateKey]),
  );
  setDefaultInternalAuth(
    createPlatformAuth({ privateKeys, publicKeys: loadAuthKeys(grpcAuthDir, 'gateway').publicKeys }),
  );
  const env: Record<string, string> = {
    GRPC_AUTH_DIR: grpcAuthDir,
    MONGO_URL: process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27027/',
    KAFKA_BROKERS: process.env.KAFKA_BROKERS ?? '127.0.0.1:9094',
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6390',
    KAFKA_TOPIC_PREFIX: prefix,
    REDIS_KEY_PREFIX: `${tag}${run}:`,
    LOG_LEVEL: 'warn',
    SESSION_SECRET: `bench-session-${run}`,
    CHANNEL_KEY_SECRET: randomBytes(32).toString('hex'),
    TOKEN_KEY_SECRET: randomBytes(32).toString('hex'),
    TOTP_KEY_SECRET: randomBytes(32).toString('hex'),
    USERS_ADDR: addr('users'),
    CHANNELS_ADDR: addr('channels'),
    BILLING_ADDR: addr('billing'),
    RELAY_ADDR: addr('relay'),
    LOGS_ADDR: addr('logs'),
    TASKS_ADDR: addr('tasks'),
    RELAY_HTTP_URL: `http://127.0.0.1:${ports.relay.http}`,
    TASKS_HTTP_URL: `http://127.0.0.1:${ports.tasks.http}`,
    RATE_LIMIT_API: '1000000',
    RATE_LIMIT_CRITICAL: '100000',
    RATE_LIMIT_WEB: '100000',
    NODE_ENV: 'production',
    // No balancer polls these relays' readiness: a stopping relay need not serve on for one to
    // notice (the relay's default is 5 s, which every stack's stop would wait out).
    RELAY_DRAIN_DELAY_MS: '0',
    // The relay's usage spool: a relay killed by a scenario sends what it had not sent on restart.
    RELAY_USAGE_SPOOL_DIR: mkdtempSync(join(tmpdir(), `aigw-${tag}-spool-`)),
    ...opts.env,
  };
  const extraEnv = opts.serviceEnvOf?.(ports) ?? {};
  const procs = new Map<ServiceName, Proc>();
  const spawnOne = (name: ServiceName): Proc => {
    const out = opts.logDir ? openSync(join(opts.logDir, `${name}.log`), 'a') : undefined;
    const flags = [...nodeFlagsOf(name), ...(opts.nodeFlags?.[name] ?? [])];
    const child = spawn(process.execPath, [...flags, '--import', 'tsx', `services/${name}/src/main.ts`], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...env,
        SERVICE_NAME: name,
        HTTP_PORT: String(ports[name].http),
        METRICS_PORT: String(ports[name].metrics),
        GRPC_PORT: String(ports[name].grpc),
        MONGO_DB: database(name),
        ...opts.serviceEnv?.[name],
        ...extraEnv[name],
      },
      stdio: out === undefined ? ['ignore', 'ignore', 'inherit'] : ['ignore', out, out],
    });
    if (out !== undefined) closeSync(out);
    const p = { name, child, http: opsPort(name), grpc: ports[name].grpc };
    procs.set(name, p);
    return p;
  };
  const exited = (p: Proc) => p.child.exitCode !== null || p.child.signalCode !== null;
  const proc = (name: ServiceName) => {
    const p = procs.get(name);
    if (!p) throw new Error(`${name} was not started`);
    return p;
  };
  const killAll = () => {
    for (const p of procs.values()) if (!exited(p)) p.child.kill('SIGKILL');
  };
  try {
    for (const name of opts.services) {
      spawnOne(name);
      await waitReady(opsPort(name));
    }
  } catch (err) {
    killAll();
    throw err;
  }
  const stack: Stack = {
    gatewayUrl: `http://127.0.0.1:${ports.gateway.http}`,
    relayUrl: `http://127.0.0.1:${ports.relay.http}`,
    ports,
    env,
    id: run,
    stop: async () => {
      await Promise.all(
        [...procs.values()].map(
          (p) =>
            new Promise<void>((res) => {
              if (exited(p)) return res();
              const t = setTimeout(() => p.child.kill('SIGKILL'), 20_000);
              p.child.once('exit', () => {
                clearTimeout(t);
                res();
              });
              p.child.kill('SIGCONT');
              p.child.kill('SIGTERM');
            }),
        ),
      );
    },
  };
  return {
    stack,
    prefix,
    database,
    proc,
    async kill(name, signal = 'SIGKILL') {
      const p = proc(name);
      if (exited(p)) return;
      const gone = new Promise<void>((res) => p.child.once('exit', () => res()));
      p.child.kill(signal);
      if (signal === 'SIGKILL') await gone;
    },
    async restart(name) {
      const old = proc(name);
      if (!exited(old)) throw new Error(`${name} is still running`);
      await waitReady(spawnOne(name).http);
    },
    stop: stack.stop,
    killAll,
  };
}

/** Messages a service has consumed from a topic so far (its kafka_messages_consumed_total). */
export async function consumed(p: Proc, topic: string): Promise<number> {
  const text = await fetch(`http://127.0.0.1:${p.http}/metrics`).then((r) => r.text());
  let n = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('kafka_messages_consumed_total{')) continue;
    if (!line.includes(`topic="${topic}"`)) continue;
    n += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return n;
}

/** Prices MODEL (ModelRatio 1, CompletionRatio 2: PRICE per request) and routes it to the fake upstream. */
export async function priceModel(s: RelayStack, upstreamUrl: string): Promise<void> {
  await setOption(s, 'ModelRatio', JSON.stringify({ [MODEL]: 1 }));
  await setOption(s, 'CompletionRatio', JSON.stringify({ [MODEL]: 2 }));
  await createChannel(s, { type: 1, baseUrl: upstreamUrl, key: 'sk-upstream', models: MODEL });
}
