/**
 * The platform's CPU when nothing happens (a script, not a test): the six services as separate
 * processes on servers of their own (FerretDB on SQLite, Kafka, Redis), 15 s to settle, then each
 * process's CPU over 20 s idle, and again while billing's and logs' /metrics are read ten times
 * a second (what bench/e2e.ts does to time its lags). What a request's CPU figure at a low rate
 * carries besides the request.
 *
 *   bash deploy/local/bin/pnpm.sh exec tsx bench/idle-cpu.ts
 */
import { consumed, cpuMs, sessionCpuMs, sleep, startPlatform } from './platform.ts';
import { startPrivateInfra } from './private-infra.ts';

const SERVICES = ['users', 'channels', 'billing', 'logs', 'relay', 'gateway'] as const;
async function main() {
  const infra = await startPrivateInfra({ mongoBackend: 'sqlite' });
  const run = Date.now().toString(36);
  const pf = await startPlatform({ tag: 'e2e', run, services: [...SERVICES], env: infra.env });
  const snap = () =>
    ({
      ...Object.fromEntries(SERVICES.map((n) => [n, cpuMs(pf.proc(n).child.pid)])),
      store: sessionCpuMs(infra.pid('mongo')),
      kafka: sessionCpuMs(infra.pid('kafka')),
      redis: sessionCpuMs(infra.pid('redis')),
    }) as Record<string, number>;
  try {
    await sleep(15000);
    for (const scrape of [false, true]) {
      let on = scrape;
      const loop = (async () => {
        while (on) {
          await Promise.all([
            consumed(pf.proc('billing'), 'x').catch(() => 0),
            consumed(pf.proc('logs'), 'x').catch(() => 0),
          ]);
          await sleep(100);
        }
      })();
      const a = snap();
      const S = 20;
      await sleep(S * 1000);
      const b = snap();
      on = false;
      await loop;
      const per = Object.fromEntries(Object.keys(b).map((k) => [k, Math.round(((b[k] ?? 0) - (a[k] ?? 0)) / S)]));
      const total = Object.values(per).reduce((x, y) => x + y, 0);
      console.log(
        `idle${scrape ? ', /metrics read 10 times a second' : ''}: CPU ms per second ${JSON.stringify(per)}, all ${total}`,
      );
    }
  } finally {
    await pf.stop();
    await infra.destroy();
  }
}
main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
