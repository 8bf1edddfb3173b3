/**
 * The monitor watchdog (services/common/src/mongo-monitor.ts) against a private FerretDB that is
 * stopped and started again (the shared one is left alone). The driver's monitor is made silent
 * the way billing's was seen after a restart (its heartbeat schedule stopped, so nothing ever
 * finds the server again); the test first shows that this state does not heal by itself, then
 * that the watchdog restarts the monitor and writes work again.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '@aigw/local-stack/stack';
import mongoose, { type Connection } from 'mongoose';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../src/metrics.ts';
import { watchMonitor } from '../src/mongo-monitor.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const dir = mkdtempSync(join(tmpdir(), 'aigw-monitor-test-'));
let port = 0;
let conn: Connection | undefined;

function infra(cmd: 'up' | 'down'): Promise<void> {
  return new Promise((res, rej) => {
    const child = spawn('bash', [join(ROOT, 'deploy/local/bin/infra.sh'), cmd, 'mongo'], {
      cwd: ROOT,
      env: { ...process.env, AIGW_INFRA_DIR: dir, AIGW_MONGO_PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.once('exit', (code) => (code === 0 ? res() : rej(new Error(`infra.sh ${cmd} mongo: ${code} ${err}`))));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  port = await freePort();
  await infra('up');
}, 120_000);
afterAll(async () => {
  await conn?.close().catch(() => undefined);
  await infra('down').catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

interface Internals {
  topology: {
    s: { servers: Map<string, { description: { type: string }; monitor: { monitorId?: { stop(): void } } }> };
  };
}

describe('MongoDB monitor watchdog', () => {
  it('when the monitor goes silent across a server restart, then the watchdog restarts it and writes work again; a silent monitor alone never recovers', async () => {
    conn = mongoose.createConnection(`mongodb://127.0.0.1:${port}/`, {
      dbName: 'watchdog',
      serverSelectionTimeoutMS: 1_500,
      heartbeatFrequencyMS: 1_000,
    });
    await conn.asPromise();
    const lines: { msg: string; monitor?: { checkInProgress?: boolean; intervalStopped?: boolean } }[] = [];
    const logger = pino({ level: 'warn' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    const client = conn.getClient();
    // No timer: the test runs the checks itself.
    const dog = watchMonitor(client, { db: 'watchdog', logger, stuckMs: 4_000, everyMs: 3_600_000 });
    const docs = conn.collection<{ _id: number }>('docs');
    const insert = (id: number) =>
      docs.insertOne({ _id: id }).then(
        () => 'ok',
        (e: Error) => e.name,
      );
    expect(await insert(1)).toBe('ok');

    // Silence the monitor and stop the server: a write while it is down fails and marks the
    // server unknown; then the server comes back, and nothing checks it again.
    const server = [...(client as unknown as Internals).topology.s.servers.values()][0];
    server?.monitor.monitorId?.stop();
    await infra('down');
    expect(await insert(2)).not.toBe('ok');
    expect(server?.description.type).toBe('Unknown');
    await infra('up');

    // Left alone it stays broken (well past a heartbeat interval), and the watchdog waits out stuckMs.
    const until = Date.now() + 5_000;
    while (Date.now() < until) {
      expect(await insert(3)).toBe('MongoServerSelectionError');
      await sleep(500);
    }
    const before = (await registry.getSingleMetric('mongo_monitor_restarts_total')?.get())?.values ?? [];
    expect(before.find((v) => v.labels.db === 'watchdog')?.value ?? 0).toBe(0);

    // The watchdog's check: restarted, logged with the monitor's state; writes work within seconds.
    expect(dog.check()).toBe(true);
    expect(lines.map((l) => l.msg)).toEqual([
      'mongo: server monitor silent while the server is unknown; restarting it',
    ]);
    expect(lines[0]?.monitor?.intervalStopped).toBe(true);
    let result = '';
    for (let i = 0; i < 20 && result !== 'ok'; i++) {
      result = await insert(4);
      if (result !== 'ok') await sleep(250);
    }
    expect(result).toBe('ok');
    expect(server?.description.type).toBe('Standalone');
    const after = (await registry.getSingleMetric('mongo_monitor_restarts_total')?.get())?.values ?? [];
    expect(after.find((v) => v.labels.db === 'watchdog')?.value).toBe(1);
    // A healthy monitor is left alone.
    expect(dog.check()).toBe(false);
    dog.stop();
  }, 120_000);
});
