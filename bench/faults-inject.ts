/**
 * The fault suite's faults, one per target kind, each on its own clock beside the load: a kill -9
 * of a service and its restart on the same ports, a private server (Kafka, Redis, MongoDB-
 * compatible) stopped and started again, or the relay-billing network stalled. Each records when
 * the fault came and when the target was restarted, listening and ready again.
 */

import type { ServiceName } from '../deploy/local/stack/in-process.ts';
import { KILL_AT_S, now, type Req, type Scenario, type Times } from './faults-config.ts';
import { canConnect } from './faults-probes.ts';
import type { WebhookCheck } from './faults-webhook.ts';
import { type Platform, sleep, waitReady } from './platform.ts';
import type { PrivateInfra } from './private-infra.ts';
import type { StallProxy } from './stall-proxy.ts';

export interface FaultTargets {
  pf: Platform;
  infra: PrivateInfra;
  proxy: StallProxy;
  /** The billing scenario's webhook check (Stripe webhooks while billing is down). */
  webhook?: WebhookCheck;
}

export interface FaultRun {
  /** Filled in as the fault goes (0 until then). */
  times: Times;
  /** Requests (and streams) in flight when the fault came. */
  inflightAtKill: number;
  streamsAtKill: number;
  /** Resolves when the target is ready again (rejects when it did not come back). */
  done: Promise<void>;
}

/** Every service of the suite answering /readyz. */
function allReady(pf: Platform) {
  return Promise.all(
    (['users', 'channels', 'billing', 'logs', 'relay'] as ServiceName[]).map((n) => waitReady(pf.proc(n).http)),
  );
}

/** The network between the relay and billing stalls for the scenario's time, then flows again. */
async function stallFault(sc: Scenario, t: FaultTargets, times: Times) {
  t.proxy.stall();
  await sleep(sc.downMs);
  times.restart = times.listening = now();
  t.proxy.resume();
  await allReady(t.pf);
  times.ready = now();
}

/** A private server stopped, started again after the scenario's time. */
async function infraFault(sc: Scenario, t: FaultTargets, times: Times) {
  const svc = sc.target as 'kafka' | 'redis' | 'mongo';
  await t.infra.down(svc);
  times.stopped = now();
  await sleep(Math.max(0, times.kill + sc.downMs - now()));
  times.restart = now();
  await t.infra.up(svc);
  times.listening = now();
  await allReady(t.pf);
  times.ready = now();
}

/** Resolves when a port accepts connections again (bounded: 120 s), recording when in `times.listening`. */
async function listeningAgain(port: number, times: Times) {
  for (const until = now() + 120_000; now() < until; await sleep(100)) {
    if (await canConnect(port)) {
      times.listening = now();
      return;
    }
  }
}

/** kill -9 of a service, restarted on the same ports after the scenario's time. */
async function killFault(sc: Scenario, t: FaultTargets, times: Times) {
  const target = sc.target as ServiceName;
  await t.pf.kill(target, 'SIGKILL');
  const webhooksWhileDown = t.webhook?.whileDown();
  await sleep(sc.downMs);
  times.restart = now();
  const ready = t.pf.restart(target);
  // When it listens again: gRPC for billing and logs, HTTP for the relay.
  const port = target === 'relay' ? t.pf.stack.ports.relay.http : t.pf.stack.ports[target].grpc;
  const listening = listeningAgain(port, times);
  await ready;
  times.ready = now();
  await listening;
  await webhooksWhileDown;
}

/** Starts the scenario's fault KILL_AT_S into the load (which starts at `loadStart` and records into `reqs`). */
export function injectFault(sc: Scenario, t: FaultTargets, loadStart: number, reqs: Req[]): FaultRun {
  const run: FaultRun = {
    times: { kill: 0, stopped: 0, restart: 0, listening: 0, ready: 0 },
    inflightAtKill: 0,
    streamsAtKill: 0,
    done: Promise.resolve(),
  };
  run.done = (async () => {
    await sleep(Math.max(0, loadStart + KILL_AT_S * 1000 - now()));
    run.inflightAtKill = reqs.filter((r) => !r.doneAt).length;
    run.streamsAtKill = reqs.filter((r) => !r.doneAt && r.stream).length;
    run.times.kill = now();
    if (sc.kind === 'stall') await stallFault(sc, t, run.times);
    else if (sc.kind === 'infra') await infraFault(sc, t, run.times);
    else await killFault(sc, t, run.times);
  })();
  return run;
}
