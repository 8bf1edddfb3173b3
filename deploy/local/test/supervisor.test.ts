/**
 * The local stack's supervisor (deploy/local/stack/supervisor.ts) on real processes: a small
 * HTTP server whose /healthz answers 200, and which can be told to exit, to fail its probe, or to
 * block its event loop for good (a hung process that no longer handles SIGTERM). Each time it is
 * started again with a back-off and the reason is logged; stop() ends supervision for good.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@aigw/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../stack/in-process.ts';
import { type Supervised, supervise } from '../stack/supervisor.ts';

const dir = mkdtempSync(join(tmpdir(), 'aigw-supervisor-'));
const script = join(dir, 'service.mjs');
writeFileSync(
  script,
  `import { createServer } from 'node:http';
let sick = false;
process.on('SIGTERM', () => process.exit(0));
createServer((req, res) => {
  if (req.url === '/exit') { res.end('bye'); setTimeout(() => process.exit(3), 10); return; }
  if (req.url === '/sick') { sick = true; res.end('ok'); return; }
  if (req.url === '/hang') { res.end('ok'); setTimeout(() => { for (;;) {} }, 10); return; }
  res.statusCode = req.url === '/healthz' && !sick ? 200 : 500;
  res.end(String(process.pid));
}).listen(Number(process.env.PORT), '127.0.0.1');
`,
);

/** Probes every 100 ms, three failures in a row; back-off 200 ms doubling; SIGKILL 500 ms after SIGTERM. */
const FAST = {
  periodMs: 100,
  timeoutMs: 300,
  failureThreshold: 3,
  startupGraceMs: 5_000,
  backoffFirstMs: 200,
  backoffMaxMs: 2_000,
  resetAfterMs: 60_000,
  killAfterMs: 500,
};

let running: Supervised | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

async function start(): Promise<{ sup: Supervised; base: string; lines: string[]; pid(): Promise<number> }> {
  const port = await freePort();
  const lines: string[] = [];
  const sup = supervise({
    name: 'svc',
    start: () => spawn(process.execPath, [script], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' }),
    livenessUrl: `http://127.0.0.1:${port}/healthz`,
    log: (m) => lines.push(m),
    options: FAST,
  });
  running = sup;
  const base = `http://127.0.0.1:${port}`;
  const pid = () =>
    eventually(
      () =>
        fetch(`${base}/`).then(
          (r) => r.text().then(Number),
          () => 0,
        ),
      (p) => p > 0,
      { timeoutMs: 10_000, what: 'the service answering' },
    );
  return { sup, base, lines, pid };
}

describe('local stack supervisor', () => {
  it('when a service exits, then it is started again after a back-off that doubles while it keeps crashing, and each exit is logged', async () => {
    const { sup, base, lines, pid } = await start();
    const first = await pid();
    await fetch(`${base}/exit`);
    const second = await eventually(pid, (p) => p !== first, { timeoutMs: 10_000, what: 'a new process' });
    expect(second).not.toBe(first);
    await fetch(`${base}/exit`);
    await eventually(pid, (p) => p !== second && p !== first, { timeoutMs: 10_000, what: 'a third process' });
    expect(sup.restarts()).toBe(2);
    expect(lines[0]).toMatch(/^exited \(code 3\) after [\d.]+ s; restarting in 0\.2 s \(restart 1\)$/);
    expect(lines[1]).toMatch(/^exited \(code 3\) after [\d.]+ s; restarting in 0\.4 s \(restart 2\)$/);
  });

  it('when a service answers its liveness probe with 500 three times in a row, then it is stopped and started again', async () => {
    const { sup, base, lines, pid } = await start();
    const first = await pid();
    await fetch(`${base}/sick`);
    const next = await eventually(pid, (p) => p !== first, { timeoutMs: 10_000, what: 'a new process' });
    expect(next).not.toBe(first);
    expect(sup.restarts()).toBe(1);
    expect(lines).toContain('liveness probe failed 3 times (HTTP 500); stopping it');
    expect(lines[1]).toMatch(
      /^stopped after failing its liveness probe \(HTTP 500\) after [\d.]+ s; restarting in 0\.2 s/,
    );
    // The new process is healthy and left alone.
    const healthy = await fetch(`${base}/healthz`);
    expect(healthy.status).toBe(200);
  });

  it('when a service hangs (its event loop blocked, SIGTERM unhandled), then the probe times out, it is killed and started again', async () => {
    const { sup, base, lines, pid } = await start();
    const first = await pid();
    await fetch(`${base}/hang`);
    const next = await eventually(pid, (p) => p !== first, { timeoutMs: 15_000, what: 'a new process' });
    expect(next).not.toBe(first);
    expect(sup.restarts()).toBe(1);
    expect(lines[0]).toBe('liveness probe failed 3 times (no answer within 300 ms); stopping it');
  });

  it('when supervision stops, then the service is stopped and not started again', async () => {
    const { sup, base, pid } = await start();
    await pid();
    await sup.stop();
    running = undefined;
    expect(sup.current()).toBeUndefined();
    // Nothing listens any more, and no restart was scheduled.
    const refused = await fetch(`${base}/healthz`).then(
      () => false,
      () => true,
    );
    expect(refused).toBe(true);
    expect(sup.restarts()).toBe(0);
  });
});
