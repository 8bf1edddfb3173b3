/**
 * The fault suite's measurements beside the load: consumer lag of the two usage groups (sampled
 * until the scenario drained), the side probes (the relay's usage buffer and memory, billing's
 * wallet read, one user's rate-limit counter), the drain wait, and the small reads they use.
 */

import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { RelayStack } from '@aigw/testkit/harness';
import type { createKafka, Redis } from '../services/common/src/index.ts';
import { DRAIN_LIMIT_S, type LagSample, LINGER_MS, now, type Probe } from './faults-config.ts';
import { type Platform, sleep } from './platform.ts';

export type Admin = ReturnType<ReturnType<typeof createKafka>['admin']>;

/** Consumer lag (high watermark - committed offset, summed over partitions) of the two usage groups. */
export async function lagOf(admin: Admin, topic: string, groups: Record<'billing' | 'logs', string>) {
  const high = await admin.fetchTopicOffsets(topic);
  const out = { billing: 0, logs: 0 };
  for (const k of ['billing', 'logs'] as const) {
    const [committed] = await admin.fetchOffsets({ groupId: groups[k], topics: [topic] });
    for (const p of high) {
      const c = Number(committed?.partitions.find((x) => x.partition === p.partition)?.offset ?? -1);
      out[k] += Number(p.high) - Math.max(0, c);
    }
  }
  return out;
}

/**
 * A read of the checks, tried up to three times: a slow or failed answer is recorded (and
 * reported), and only a third failure fails the scenario.
 */
export async function checkRead<T>(
  read: () => Promise<{ wallet?: T }>,
  reads: { slowestMs: number; failed: number },
): Promise<T | undefined> {
  for (let attempt = 1; ; attempt++) {
    const t0 = now();
    try {
      return (await read()).wallet;
    } catch (err) {
      reads.failed++;
      if (attempt >= 3) throw err;
    } finally {
      reads.slowestMs = Math.max(reads.slowestMs, now() - t0);
    }
  }
}

/** The last lines a service wrote (its log file in the suite's log directory), for a failure report. */
export function tailOf(logDir: string, name: string, n = 25): string[] {
  try {
    return readFileSync(join(logDir, `${name}.log`), 'utf8')
      .trimEnd()
      .split('\n')
      .slice(-n);
  } catch {
    return [];
  }
}

/** A gauge's value from a service's /metrics (NaN when unreachable). */
export async function relayGauge(port: number, name: string): Promise<number> {
  try {
    const text = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(1_000) }).then((r) =>
      r.text(),
    );
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line ? Number(line.slice(name.length + 1)) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Resident memory of a process (MB), from /proc. */
export function rssMb(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Requests the relay's rate limiter counted for a user in the last three minutes (NaN when Redis does not answer). */
export async function rateCount(redis: Redis, userId: number, b = Math.floor(Date.now() / 60_000)): Promise<number> {
  if (redis.status !== 'ready') return Number.NaN;
  try {
    const vals = await redis.mget(
      `rl:usr:${userId}:r:${b - 1}`,
      `rl:usr:${userId}:r:${b}`,
      `rl:usr:${userId}:r:${b + 1}`,
    );
    return vals.reduce((a, v) => a + Number(v ?? 0), 0);
  } catch {
    return Number.NaN;
  }
}

/** Whether a TCP connection to a loopback port succeeds. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ port, host: '127.0.0.1' });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
    sock.setTimeout(1_000, () => done(false));
  });
}

/** The message of an error body (OpenAI shape), shortened. */
export function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } };
    return (body.error?.message ?? text).slice(0, 60);
  } catch {
    return text.slice(0, 60);
  }
}

/** A loop that runs `step` (given its start time) every 250 ms until stopped; `stop()` ends it and waits for the last step. */
function every250ms(step: (t: number) => Promise<void>): { stop: () => Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      const t = now();
      await step(t);
      await sleep(Math.max(0, 250 - (now() - t)));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** Consumer lag, sampled every 250 ms from the scenario's start until it drained. */
export function startLagSampler(admin: Admin, topic: string, groups: Record<'billing' | 'logs', string>) {
  const lags: LagSample[] = [];
  const loop = every250ms(async (t) => {
    const l = await lagOf(admin, topic, groups).catch(() => undefined);
    if (l) lags.push({ t, ...l });
  });
  return { lags, stop: loop.stop };
}

/**
 * Side probes, every 250 ms until the load ends: the relay's usage buffer and memory, whether
 * billing answers a wallet read (directly, not through the proxy), and the rate-limit counter of
 * one user (Redis scenario).
 */
export function startProber(pf: Platform, s: RelayStack, redis: Redis, rlUserId: number) {
  const probes: Probe[] = [];
  const loop = every250ms(async (t) => {
    const [buffered, billingOk, rl] = await Promise.all([
      relayGauge(pf.proc('relay').http, 'relay_usage_events_buffered'),
      s.wallet.getWallet({ userId: rlUserId }, { deadlineMs: 1_000 }).then(
        () => true,
        () => false,
      ),
      rateCount(redis, rlUserId),
    ]);
    probes.push({ t, buffered, rssMb: rssMb(pf.proc('relay').child.pid), billingOk, rl });
  });
  return { probes, stop: loop.stop };
}

/**
 * Waits until both consumer groups were at lag 0 in two samples in a row taken after `since`
 * (bounded by the drain limit): when, or 0 when they did not drain.
 */
export async function drain(lags: LagSample[], since: number): Promise<number> {
  await sleep(LINGER_MS + 500);
  const until = now() + DRAIN_LIMIT_S * 1000;
  let zeros = 0;
  while (now() < until) {
    const l = lags[lags.length - 1];
    if (l && l.t > since && l.billing === 0 && l.logs === 0) {
      if (++zeros >= 2) return l.t;
    } else zeros = 0;
    await sleep(300);
  }
  return 0;
}
