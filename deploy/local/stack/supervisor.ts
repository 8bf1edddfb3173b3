/**
 * What the kubelet does for a pod, for the local stack's processes: a service that exits is
 * started again after a back-off that doubles while it keeps crashing (1 s, 2 s, 4 s ... at most
 * `backoffMaxMs`, reset once a run has lasted `resetAfterMs`), and a service whose liveness probe
 * (GET /healthz) fails `failureThreshold` times in a row, `periodMs` apart, is stopped (SIGTERM,
 * SIGKILL after `killAfterMs`) and started again the same way. Each event is logged with the
 * reason; the other services keep serving meanwhile.
 *
 * Probing starts once the service has answered a probe, or after `startupGraceMs` if it never
 * does (a startup probe): a service still connecting to its peers is not killed for being slow.
 */
import type { ChildProcess } from 'node:child_process';

export interface SupervisorOptions {
  periodMs: number;
  timeoutMs: number;
  failureThreshold: number;
  startupGraceMs: number;
  backoffFirstMs: number;
  backoffMaxMs: number;
  resetAfterMs: number;
  killAfterMs: number;
}

/** The chart's liveness probe (10 s period, 3 s timeout, 3 failures) and the kubelet's back-off. */
export const KUBELET_LIKE: SupervisorOptions = {
  periodMs: 10_000,
  timeoutMs: 3_000,
  failureThreshold: 3,
  startupGraceMs: 120_000,
  backoffFirstMs: 1_000,
  backoffMaxMs: 60_000,
  resetAfterMs: 120_000,
  killAfterMs: 20_000,
};

export interface Supervised {
  /** The process running now (undefined while waiting out a back-off). */
  current(): ChildProcess | undefined;
  /** Starts so far after the first. */
  restarts(): number;
  /** Stops supervising: SIGTERM to the process (SIGKILL after killAfterMs); resolves on its exit. */
  stop(): Promise<void>;
}

export function supervise(spec: {
  name: string;
  start(): ChildProcess;
  /** GET this URL as the liveness probe (2xx is alive); none: only exits are watched. */
  livenessUrl?: string;
  log(message: string): void;
  options?: Partial<SupervisorOptions>;
}): Supervised {
  const o = { ...KUBELET_LIKE, ...spec.options };
  let child: ChildProcess | undefined;
  let stopping = false;
  let restarts = 0;
  let crashes = 0;
  let startedAt = 0;
  let pending: NodeJS.Timeout | undefined;
  let probe: NodeJS.Timeout | undefined;
  /** Why the supervisor itself ended the current process (a liveness failure), for the exit line. */
  let killedFor: string | undefined;

  const run = () => {
    pending = undefined;
    if (stopping) return;
    killedFor = undefined;
    startedAt = Date.now();
    const c = spec.start();
    child = c;
    c.once('exit', (code, signal) => onExit(c, code, signal));
    watch(c);
  };

  const onExit = (c: ChildProcess, code: number | null, signal: NodeJS.Signals | null) => {
    if (child !== c) return;
    child = undefined;
    if (probe) clearTimeout(probe);
    if (stopping) return;
    const ranMs = Date.now() - startedAt;
    if (ranMs >= o.resetAfterMs) crashes = 0;
    const delay = Math.min(o.backoffMaxMs, o.backoffFirstMs * 2 ** crashes);
    crashes++;
    restarts++;
    const why = killedFor ?? `exited (${signal ?? `code ${code}`})`;
    spec.log(
      `${why} after ${(ranMs / 1000).toFixed(1)} s; restarting in ${(delay / 1000).toFixed(1)} s (restart ${restarts})`,
    );
    pending = setTimeout(run, delay);
  };

  const kill = (c: ChildProcess, reason: string) => {
    killedFor = reason;
    c.kill('SIGTERM');
    const hard = setTimeout(() => {
      if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    }, o.killAfterMs);
    hard.unref();
    c.once('exit', () => clearTimeout(hard));
  };

  const watch = (c: ChildProcess) => {
    const url = spec.livenessUrl;
    if (!url) return;
    let answered = false;
    let failures = 0;
    const tick = async () => {
      if (child !== c || stopping) return;
      let ok = false;
      let detail = '';
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(o.timeoutMs) });
        ok = res.ok;
        detail = `HTTP ${res.status}`;
        await res.body?.cancel();
      } catch (err) {
        detail =
          err instanceof Error
            ? err.name === 'TimeoutError'
              ? `no answer within ${o.timeoutMs} ms`
              : err.message
            : String(err);
      }
      if (child !== c || stopping) return;
      if (ok) {
        answered = true;
        failures = 0;
      } else if (answered || Date.now() - startedAt >= o.startupGraceMs) {
        failures++;
        if (failures >= o.failureThreshold) {
          spec.log(`liveness probe failed ${failures} times (${detail}); stopping it`);
          kill(c, `stopped after failing its liveness probe (${detail})`);
          return;
        }
      }
      probe = setTimeout(() => void tick(), o.periodMs);
    };
    probe = setTimeout(() => void tick(), Math.min(o.periodMs, 1_000));
  };

  run();
  return {
    current: () => child,
    restarts: () => restarts,
    stop() {
      stopping = true;
      if (pending) clearTimeout(pending);
      if (probe) clearTimeout(probe);
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
      return new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        kill(c, 'stopped');
      });
    },
  };
}
