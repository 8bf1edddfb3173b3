import type { Connection } from 'mongoose';
import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import { registry } from './metrics.ts';

/**
 * The parts of the driver's internals the watchdog touches (mongodb 6.x: Topology -> Server ->
 * Monitor). Not public API: when they are missing the watchdog says so once and does nothing.
 */
interface DriverMonitor {
  s?: { state?: string };
  connection?: { closed?: boolean } | null;
  monitorId?: { isExecutionInProgress?: boolean; stopped?: boolean } | undefined;
  close(): void;
  connect(): void;
}
interface DriverServer {
  description?: { type?: string; error?: { message?: string } | null };
  monitor?: DriverMonitor | null;
}
interface DriverInternals {
  topology?: { s?: { servers?: Map<string, DriverServer> } };
}

const restarts = new Counter({
  name: 'mongo_monitor_restarts_total',
  help: "Restarts of the MongoDB driver's server monitor after it went silent while the server was unknown",
  labelNames: ['db'],
  registers: [registry],
});

type MongoClient = ReturnType<Connection['getClient']>;

export interface MonitorWatchdog {
  /** Runs one check now (the timer runs them every `everyMs`); true when it restarted a monitor. */
  check(): boolean;
  stop(): void;
}

/**
 * Restarts the driver's server monitor when it goes silent while the server is unknown.
 *
 * The driver finds a server again only through its monitor: a heartbeat every
 * `heartbeatFrequencyMS` (10 s), sooner when an operation waits for a server. After a restart of
 * the MongoDB-compatible server, billing's monitor sometimes stopped for good: the server stayed
 * unknown with the error of the last pooled connection, no heartbeat started or ended, no socket
 * was opened, and every write failed on server selection until the process was restarted
 * (fault suite, scenario 6: 3 of about 12 runs). The cause in the driver is not found; this
 * watchdog bounds its effect: a server unknown for `stuckMs` with no heartbeat event in that time
 * (a working monitor reports one at least every heartbeatFrequencyMS) has its monitor closed and
 * started again, which checks at once. The restart is logged with the monitor's state, for the
 * cause.
 */
export function watchMonitor(
  client: MongoClient,
  opts: { db: string; logger?: Logger; stuckMs?: number; everyMs?: number; clock?: () => number },
): MonitorWatchdog {
  const clock = opts.clock ?? Date.now;
  const stuckMs = opts.stuckMs ?? 30_000;
  let lastEvent = clock();
  let unknownSince = 0;
  let warnedInternals = false;
  const beat = () => {
    lastEvent = clock();
  };
  client.on('serverHeartbeatStarted', beat);
  client.on('serverHeartbeatSucceeded', beat);
  client.on('serverHeartbeatFailed', beat);
  client.on('serverDescriptionChanged', (e) => {
    if (e.newDescription.type === 'Unknown') {
      if (!unknownSince) unknownSince = clock();
    } else unknownSince = 0;
  });

  function check(): boolean {
    const now = clock();
    if (!unknownSince || now - unknownSince < stuckMs || now - lastEvent < stuckMs) return false;
    const servers = (client as unknown as DriverInternals).topology?.s?.servers;
    if (!servers) {
      if (!warnedInternals) opts.logger?.warn({ db: opts.db }, 'mongo: monitor watchdog cannot reach the driver');
      warnedInternals = true;
      return false;
    }
    let restarted = false;
    for (const [address, server] of servers) {
      const m = server.monitor;
      if (!m || server.description?.type !== 'Unknown') continue;
      opts.logger?.warn(
        {
          db: opts.db,
          address,
          unknownForMs: now - unknownSince,
          silentForMs: now - lastEvent,
          lastError: server.description?.error?.message,
          monitor: {
            state: m.s?.state,
            connection: m.connection ? (m.connection.closed ? 'closed' : 'open') : 'none',
            checkInProgress: m.monitorId?.isExecutionInProgress,
            intervalStopped: m.monitorId?.stopped,
          },
        },
        'mongo: server monitor silent while the server is unknown; restarting it',
      );
      m.close();
      m.connect();
      restarts.inc({ db: opts.db });
      restarted = true;
    }
    // The restarted monitor gets its own stuckMs before the next restart.
    if (restarted) lastEvent = now;
    return restarted;
  }

  const timer = setInterval(check, opts.everyMs ?? 5_000);
  timer.unref();
  return { check, stop: () => clearInterval(timer) };
}
