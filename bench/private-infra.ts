/**
 * A private set of test servers (FerretDB, Kafka, Redis) for scripts that stop and kill them (the
 * fault suite): deploy/local/bin/infra.sh with AIGW_INFRA_DIR and its own free ports, so the
 * shared servers other sessions use are never touched. Each server can be stopped, killed and
 * started again on the same port and data.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../deploy/local/stack/in-process.ts';

const ROOT = resolve(import.meta.dirname, '..');
const INFRA = join(ROOT, 'deploy/local/bin/infra.sh');

export type InfraService = 'mongo' | 'kafka' | 'redis';

export interface PrivateInfra {
  dir: string;
  env: { MONGO_URL: string; KAFKA_BROKERS: string; REDIS_URL: string };
  ports: Record<InfraService, number>;
  /** infra.sh up (waits until it answers). */
  up(svc: InfraService): Promise<void>;
  /** infra.sh down: SIGTERM, SIGKILL after 30 s. */
  down(svc: InfraService): Promise<void>;
  /** SIGKILL to the server (no clean shutdown). */
  kill(svc: InfraService): void;
  pid(svc: InfraService): number | undefined;
  /** Stops every server and removes the folder. */
  destroy(): Promise<void>;
  /** Synchronous last resort (watchdog): SIGKILL to every server. */
  killAll(): void;
  /** Removes the folder (after killAll). */
  removeDir(): void;
}

function run(args: string[], env: NodeJS.ProcessEnv, limitMs: number): Promise<string> {
  return new Promise((res, rej) => {
    const child = spawn('bash', [INFRA, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    const t = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.once('exit', (code) => {
      clearTimeout(t);
      if (code === 0) res(out);
      else rej(new Error(`infra.sh ${args.join(' ')} exited ${code}: ${err.slice(-2000)}`));
    });
  });
}

/**
 * `onCreate` gets the handle before the servers start, so that a signal during the start (the test
 * command stopping the suite when an earlier check failed) can still kill what was started.
 */
export async function startPrivateInfra(
  opts: {
    onCreate?: (infra: PrivateInfra) => void;
    /** The MongoDB-compatible server's backend (infra.sh AIGW_MONGO_BACKEND): SQLite unless told. */
    mongoBackend?: 'sqlite' | 'postgresql';
  } = {},
): Promise<PrivateInfra> {
  const dir = mkdtempSync(join(tmpdir(), 'aigw-faults-infra-'));
  const ports = { mongo: await freePort(), kafka: await freePort(), redis: await freePort() };
  const controller = await freePort();
  const env = {
    ...process.env,
    AIGW_INFRA_DIR: dir,
    AIGW_MONGO_PORT: String(ports.mongo),
    AIGW_KAFKA_PORT: String(ports.kafka),
    AIGW_KAFKA_CONTROLLER_PORT: String(controller),
    AIGW_REDIS_PORT: String(ports.redis),
    AIGW_MONGO_BACKEND: opts.mongoBackend ?? 'sqlite',
  };
  const pid = (svc: InfraService) => {
    try {
      const n = Number(readFileSync(join(dir, 'run', `${svc}.pid`), 'utf8').trim());
      return n > 0 ? n : undefined;
    } catch {
      return undefined;
    }
  };
  const killAll = () => {
    for (const svc of ['mongo', 'kafka', 'redis'] as const) {
      const p = pid(svc);
      if (p)
        try {
          process.kill(p, 'SIGKILL');
        } catch {}
    }
  };
  const infra: PrivateInfra = {
    dir,
    ports,
    env: {
      MONGO_URL: `mongodb://127.0.0.1:${ports.mongo}/`,
      KAFKA_BROKERS: `127.0.0.1:${ports.kafka}`,
      REDIS_URL: `redis://127.0.0.1:${ports.redis}`,
    },
    up: async (svc) => {
      await run(['up', svc], env, 180_000);
    },
    down: async (svc) => {
      await run(['down', svc], env, 60_000);
    },
    kill(svc) {
      const p = pid(svc);
      if (p) process.kill(p, 'SIGKILL');
    },
    pid,
    async destroy() {
      await run(['down'], env, 90_000).catch(() => killAll());
      rmSync(dir, { recursive: true, force: true });
    },
    killAll,
    // Killed servers may still be writing for a moment: retried, and never throws (a signal handler calls it).
    removeDir: () => {
      try {
        rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
      } catch {}
    },
  };
  opts.onCreate?.(infra);
  try {
    await run(['up'], env, 240_000);
  } catch (err) {
    killAll();
    throw err;
  }
  return infra;
}
