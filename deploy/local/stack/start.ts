/**
 * Runs the whole platform locally: each service as its own process (as in the cluster), logs
 * prefixed by service name, the console on the gateway's port. Each process is supervised as the
 * kubelet would (supervisor.ts): one that exits, or fails its liveness probe (/healthz, as the
 * chart probes it), is started again with a back-off while the others keep serving, and the
 * reason is logged. Ctrl-C stops every service gracefully (SIGTERM, then SIGKILL after 20 s).
 * Expects MONGO_URL, KAFKA_BROKERS and REDIS_URL in the environment (deploy/local/bin/start.sh).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ensureKeyDir } from '@aigw/common';
import { nodeFlagsOf, PEERS, SERVICES } from './services.ts';
import { type Supervised, supervise } from './supervisor.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const colours = [36, 32, 33, 35, 34, 91, 96];
const supervised = new Map<string, Supervised>();
let stopping = false;

function prefix(name: string, i: number) {
  return `\x1b[${colours[i % colours.length]}m${name.padEnd(8)}\x1b[0m|`;
}

async function waitReady(port: number, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until && !stopping) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (res.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return false;
}

function startService(name: string, i: number, env: NodeJS.ProcessEnv, livenessPort: number): Supervised {
  return supervise({
    name,
    start: () => {
      const child = spawn(process.execPath, [...nodeFlagsOf(name), '--import', 'tsx', `services/${name}/src/main.ts`], {
        cwd: root,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      for (const stream of [child.stdout, child.stderr]) {
        if (stream)
          createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${prefix(name, i)} ${line}\n`));
      }
      return child;
    },
    livenessUrl: `http://127.0.0.1:${livenessPort}/healthz`,
    log: (message) => process.stdout.write(`${prefix(name, i)} [supervisor] ${message}\n`),
  });
}

async function stopAll(exitCode: number): Promise<void> {
  stopping = true;
  await Promise.all([...supervised.values()].map((s) => s.stop()));
  process.exit(exitCode);
}

process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

// Internal gRPC keys (ADR 0006): one pair per service, generated at the first start into the
// git-ignored .local/grpc-auth (or the directory GRPC_AUTH_DIR names), kept across restarts.
const grpcAuthDir = process.env.GRPC_AUTH_DIR || `${root}.local/grpc-auth`;
ensureKeyDir(grpcAuthDir);

const started = Date.now();
const gatewayIndex = SERVICES.findIndex((s) => s.name === 'gateway');
for (const [i, svc] of SERVICES.entries()) {
  // The gateway (the console's door) opens once its peers answer.
  if (i === gatewayIndex)
    await Promise.all(SERVICES.slice(0, i).map((s) => waitReady(s.metricsPort ?? s.httpPort, 120_000)));
  if (stopping) break;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...PEERS,
    SERVICE_NAME: svc.name,
    HTTP_PORT: String(svc.httpPort),
    ...(svc.grpcPort ? { GRPC_PORT: String(svc.grpcPort) } : {}),
    ...(svc.metricsPort ? { METRICS_PORT: String(svc.metricsPort) } : {}),
    // The gateway proxies /v1 to the relay and the task routes to tasks from loopback: both believe
    // its X-Forwarded-For.
    ...(svc.name === 'relay' || svc.name === 'tasks' ? { TRUSTED_PROXIES: 'loopback' } : {}),
    // Usage events not yet taken by Kafka survive a relay killed mid-flight (the supervisor's
    // restart sends them): one relay, one folder.
    ...(svc.name === 'relay' && !process.env.RELAY_USAGE_SPOOL_DIR
      ? { RELAY_USAGE_SPOOL_DIR: `${root}.local/relay-spool` }
      : {}),
    // The wallet ledger fold (ADR 0003): every billing replica here runs this version, so the
    // rolling-deploy caveat that keeps it off by default does not apply.
    ...(svc.name === 'billing' && !process.env.LEDGER_FOLD ? { LEDGER_FOLD: 'true' } : {}),
    LOCAL_STACK: 'true',
    GRPC_AUTH_DIR: grpcAuthDir,
  };
  supervised.set(svc.name, startService(svc.name, i, env, svc.metricsPort ?? svc.httpPort));
}
const results = await Promise.all(SERVICES.map((s) => waitReady(s.metricsPort ?? s.httpPort, 120_000)));
if (!stopping) {
  const failed = SERVICES.filter((_, i) => !results[i]).map((s) => s.name);
  if (failed.length > 0) {
    process.stdout.write(`not ready after 120 s: ${failed.join(', ')}\n`);
    await stopAll(1);
  }
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(
    `\nAll services ready in ${secs} s. Console: http://localhost:3000 (root / 123456 on first start)\n\n`,
  );
}
