/**
 * The fault suite's report lines: what the client saw (latency, errors, outage), the recovery
 * figures, what the side probes saw per scenario kind, the relay's bound, and the summary table
 * with the "Why <scenario> failed:" lines under it.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RELAY_LEASE_LAPSE_MS } from '../services/common/src/index.ts';
import type { Bound } from './faults-checks.ts';
import {
  BUFFER_MAX,
  CHECK_READ_MS,
  DRAIN_LIMIT_S,
  f,
  type HoldAt,
  type LagSample,
  LINGER_MS,
  type Probe,
  RATE,
  type Req,
  type Result,
  RICH_QUOTA,
  type Scenario,
  SEND_ALLOWANCE_MS,
  SUITE_LIMIT_S,
  s1,
  type Times,
  type UserRec,
} from './faults-config.ts';
import { tailOf } from './faults-probes.ts';
import type { Verdict } from './faults-verify.ts';
import { PRICE } from './platform.ts';

/** Latencies of requests (ms), sorted. */
const lat = (xs: Req[]) => xs.map((r) => r.doneAt - r.sentAt).sort((a, b) => a - b);
/** The p-th percentile of sorted values (NaN when none). */
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? Number.NaN;

/** The largest consumer lags before the fault and over the whole scenario. */
function maxLagsOf(lags: LagSample[], kill: number) {
  const maxLags = { before: { billing: 0, logs: 0 }, all: { billing: 0, logs: 0 } };
  for (const l of lags) {
    for (const k of ['billing', 'logs'] as const) {
      maxLags.all[k] = Math.max(maxLags.all[k], l[k]);
      if (l.t < kill) maxLags.before[k] = Math.max(maxLags.before[k], l[k]);
    }
  }
  return maxLags;
}

/** Latency before the fault and of the requests sent while the target was down, and the lags. */
export function latencyLines(ok: Req[], lags: LagSample[], times: Times): string[] {
  const lines: string[] = [];
  const calm = ok.filter((r) => r.doneAt < times.kill);
  const wholeLat = lat(calm.filter((r) => !r.stream));
  const streamLat = lat(calm.filter((r) => r.stream));
  const maxLags = maxLagsOf(lags, times.kill);
  lines.push(
    `- Before the fault: whole answers p50 ${f(pct(wholeLat, 50), 0)} ms, p99 ${f(pct(wholeLat, 99), 0)} ms; streams p50 ${s1(pct(streamLat, 50))}, p99 ${s1(pct(streamLat, 99))}; largest consumer lag (committed offsets) billing ${maxLags.before.billing}, logs ${maxLags.before.logs} events. Over the whole scenario: billing ${maxLags.all.billing}, logs ${maxLags.all.logs}.`,
  );
  const during = lat(ok.filter((r) => r.sentAt >= times.kill && r.sentAt < times.ready));
  if (during.length)
    lines.push(
      `- Requests sent between the fault and ready again and served: ${during.length}, answered in p50 ${f(pct(during, 50), 0)} ms, p99 ${f(pct(during, 99), 0)} ms, at most ${f(during[during.length - 1] as number, 0)} ms.`,
    );
  return lines;
}

/** What the client saw over the scenario, the ledger's refunds and the drain. */
export function clientLines(x: {
  reqs: Req[];
  ok: Req[];
  failed: Req[];
  lags: LagSample[];
  times: Times;
  load: { start: number; end: number };
  startReads: { slowestMs: number; failed: number };
  verdict: Verdict;
  errorKinds: string;
  outage: string;
  byPhase: string;
  /** When the pipeline drained after the load (0: it did not), and when the last answer came. */
  drainedAt: number;
  answered: number;
}): string[] {
  const { reqs, ok, failed, times, load, startReads, verdict: v } = x;
  const reads = v.reads;
  return [
    `- The checks' wallet reads (straight to billing, ${s1(CHECK_READ_MS)} deadline, up to 3 tries): before the load slowest ${f(startReads.slowestMs, 0)} ms${startReads.failed ? ` (${startReads.failed} tries failed)` : ''}, after the drain slowest ${f(reads.slowestMs, 0)} ms${reads.failed ? ` (${reads.failed} tries failed)` : ''}.`,
    ...latencyLines(ok, x.lags, times),
    `- Fault -> restart ${s1(times.restart - times.kill)}, restart -> listening ${s1(times.listening - times.restart)}, restart -> ready (/readyz) ${s1(times.ready - times.restart)}; load ${s1(load.end - load.start)} (${reqs.length} requests, ${f(reqs.length / ((load.end - load.start) / 1000), 0)} req/s sent), ${ok.length} served, ${failed.length} client errors: ${x.errorKinds}.`,
    `- Client-visible outage: ${x.outage}.${x.byPhase ? ` Errors ${x.byPhase}.` : ''}`,
    `- Failed requests closed in the ledger: ${v.refunds} refunds (${v.refundedQuota} quota given back), ${v.emptyRefunds} with nothing held (recorded so that a late pre-consume is refused).`,
    `- Usage pipeline drained (billing and logs at lag 0) ${x.drainedAt ? `${s1(x.drainedAt - x.answered)} after the last answer` : `NOT within ${DRAIN_LIMIT_S} s`}.`,
  ];
}

/** The ledger's figures after the checks: the bound and the holds (relay without exact identity), or the in-flight count. */
export function ledgerLines(x: {
  sc: Scenario;
  v: Verdict;
  bound?: Bound;
  reqs: Req[];
  atKill: { inflight: number; streams: number };
  upstream: { calls: number; cut: number };
}): string[] {
  const { v, bound: b } = x;
  if (x.sc.exact || !b)
    return [
      `- In flight at the fault: ${x.atKill.inflight} requests (${x.atKill.streams} streams). Open holds after the drain: ${v.holdsOpen}.`,
    ];
  const cut = x.reqs.filter((r) => !r.ok && r.status === 200).length;
  return [
    `- Answered but unbilled: ${v.unbilledAnswers.length} (${v.underQuota} quota); the oldest answered ${v.unbilledAnswers.length ? `${f(b.oldest, 0)} ms` : '-'} before the fault. Answers in the ${LINGER_MS} + ${SEND_ALLOWANCE_MS} ms before the fault: ${b.inWindow} (bound ${b.boundQuota}).`,
    `- Holds of the killed process given back when its lease lapsed (by each user's next change, at least ${s1(RELAY_LEASE_LAPSE_MS)} after the fault): ${v.expiredHolds}. Open holds after each user's next request: ${v.holdsOpen} (${v.holdsOpenQuota} quota; ${v.holdsOfAnswered} of answered requests).`,
    `- Requests in flight at the kill: ${x.atKill.inflight} (${x.atKill.streams} streams); cut after their headers: ${cut}. The upstream served ${x.upstream.calls} calls (${x.upstream.cut} cut), ${v.settledTotal} were billed: ${x.upstream.calls - v.settledTotal} upstream calls unbilled.`,
  ];
}

/** Recovery: the consumer group's catch-up, and for billing and the relay when they served again. */
export function recoveryLines(sc: Scenario, lags: LagSample[], times: Times, ok: Req[], settleAt: Map<string, number>) {
  const lines: string[] = [];
  const g = sc.group;
  const caughtLimit = RATE * 2;
  let caughtUp = '-';
  let maxLag = 0;
  if (g) {
    for (const l of lags) if (l.t > times.kill) maxLag = Math.max(maxLag, l[g]);
    const back = lags.find((l) => l.t > times.ready && l[g] <= caughtLimit && l.t > times.kill);
    caughtUp = back ? `${s1(back.t - times.kill)} after the fault` : 'never';
    lines.push(
      `- ${g} consumer lag: up to ${maxLag} events after the fault; back under ${caughtLimit} (2 s of traffic) ${caughtUp} (${s1((back?.t ?? Number.NaN) - times.ready)} after it was ready again).`,
    );
  }
  if (sc.target === 'billing') {
    // Requests answered before the restart were settled by the new process: when was the last one?
    const before = ok.filter((r) => r.doneAt < times.restart && r.doneAt > times.kill - 1000);
    const last = before.reduce((m, r) => Math.max(m, settleAt.get(r.rid) ?? 0), 0);
    lines.push(
      `- The ${before.length} requests answered between the fault and the restart were all settled ${s1(last - times.kill)} after the fault.`,
    );
  }
  if (sc.target === 'relay') {
    const back = ok
      .filter((r) => r.sentAt > times.kill)
      .reduce((m, r) => Math.min(m, r.doneAt), Number.POSITIVE_INFINITY);
    lines.push(`- First request sent after the fault and served: answered ${s1(back - times.kill)} after the fault.`);
  }
  return { lines, caughtUp };
}

/** What the side probes saw, per scenario kind. */
export interface ProbeView {
  sc: Scenario;
  times: Times;
  reqs: Req[];
  probes: Probe[];
  holdsAt: HoldAt[];
  users: UserRec[];
  pgUser: UserRec;
  rlUser: UserRec;
  /** The rate-limit counter of rlUser before and after its next request (after the drain). */
  rlNext: [number, number];
}

/** `+1.2 s` after the fault (`-` for a time that never came). */
const sinceFault = (times: Times) => (ms: number) => (ms ? `+${f((ms - times.kill) / 1000)} s` : '-');
const whileDown = (times: Times) => (at: number) => at >= times.kill && at < times.restart;

/** Playground requests (console session read from Redis by the relay), before, during and after the fault. */
function playgroundLine({ reqs, times }: ProbeView): string {
  const pg = reqs.filter((r) => r.pg);
  const during = whileDown(times);
  const pgPhase = (sel: (r: Req) => boolean) => {
    const xs = pg.filter(sel);
    const okN = xs.filter((r) => r.ok).length;
    const errs = [...new Set(xs.filter((r) => !r.ok).map((r) => r.err))].join(', ');
    return `${okN}/${xs.length} served${errs ? ` (${errs})` : ''}`;
  };
  return `- Console-session (playground) requests: before the fault ${pgPhase((r) => r.sentAt < times.kill)}; during it ${pgPhase((r) => during(r.sentAt))}; after it ${pgPhase((r) => r.sentAt >= times.restart)}.`;
}

/** The relay's usage buffer and memory while Kafka was down. */
function kafkaLine({ reqs, probes, times }: ProbeView): string {
  const t = sinceFault(times);
  const maxBuf = probes.reduce((m, p) => Math.max(m, Number.isFinite(p.buffered) ? p.buffered : 0), 0);
  const maxRss = probes.reduce((m, p) => Math.max(m, Number.isFinite(p.rssMb) ? p.rssMb : 0), 0);
  const calmRss = probes.filter((p) => p.t < times.kill).reduce((m, p) => Math.max(m, p.rssMb || 0), 0);
  const emptied = probes.find((p) => p.t > times.listening && p.buffered === 0);
  return `- Relay usage buffer: up to ${maxBuf} events waiting for Kafka (RELAY_USAGE_BUFFER_MAX = ${BUFFER_MAX} here, 100,000 by default; beyond it the relay answers 503: ${reqs.filter((r) => r.status === 503).length} such answers); empty again ${emptied ? t(emptied.t) : 'never (within the load)'}; broker stopped ${t(times.stopped)}, started ${t(times.restart)}, answering ${t(times.listening)}. Relay memory (RSS) up to ${f(maxRss, 0)} MB (${f(calmRss, 0)} MB before the fault).`;
}

/** Billing's own wallet read after the fault. */
function billingProbeLine({ probes, times }: ProbeView): string {
  const t = sinceFault(times);
  const back = probes.find(
    (p) => p.t > times.kill && p.billingOk && probes.some((q) => q.t > times.kill && q.t < p.t && !q.billingOk),
  );
  const down = probes.filter((p) => p.t > times.kill && !p.billingOk).length;
  return `- Billing's wallet read (straight to billing, 1 s deadline, every 250 ms): ${down} failed after the fault; answering again ${back ? t(back.t) : down ? 'never' : '(never failed)'}.`;
}

/** The rate limiter (fail open) and the settle-lag key (fail safe) around the Redis outage. */
function redisLines(x: ProbeView): string[] {
  const { probes, times, reqs } = x;
  const before = probes.filter((p) => p.t < times.kill && Number.isFinite(p.rl)).pop();
  const after = probes.filter((p) => p.t > times.listening && Number.isFinite(p.rl));
  const a1 = after[0];
  const sentDuring = reqs.filter(
    (r) => r.user === x.rlUser && !r.pg && r.sentAt >= (before?.t ?? 0) && r.sentAt < (a1?.t ?? 0),
  ).length;
  const rich = x.holdsAt.filter((h) => h.rich);
  const span = (a: number, b: number) => rich.filter((h) => h.at >= a && h.at < b).length;
  const ends = reqs.reduce((m, r) => Math.max(m, r.doneAt), 0);
  return [
    `- Rate limits (fail open): user ${x.rlUser.userId}'s counter ${before?.rl ?? '-'} before the fault, ${a1?.rl ?? '-'} when Redis answered again (${sentDuring} requests sent in between: ${(a1?.rl ?? 0) - (before?.rl ?? 0)} counted); ${x.rlNext[0]} -> ${x.rlNext[1]} for the user's next request after the drain (counting again: ${x.rlNext[1] > x.rlNext[0] ? 'yes' : 'NO'}).`,
    `- Settle-lag key (fail safe: pre-consume every request): pre-consumes of the large-balance users (skipped while settles keep up) ${span(0, times.kill)} before the fault, ${span(times.kill, times.listening)} while Redis was down, ${span(times.listening, times.listening + 10_000)} in the 10 s after, ${span(times.listening + 10_000, ends)} later.`,
  ];
}

/** Requests served during the stall without a pre-consume, against the overspend bound. */
function stallLine({ reqs, holdsAt, times }: ProbeView): string {
  const t = sinceFault(times);
  const during = whileDown(times);
  const held = new Set(holdsAt.map((h) => h.rid));
  const skipped = reqs.filter((r) => r.ok && r.user.rich && during(r.sentAt) && !held.has(r.rid));
  const served = reqs.filter((r) => r.ok && during(r.sentAt)).length;
  const lastSkip = skipped.reduce((m, r) => Math.max(m, r.sentAt), 0);
  return `- Sent during the stall and served: ${served}; ${skipped.length} of them without a pre-consume (${skipped.length * PRICE} quota not reserved, all large-balance users; the last sent ${t(lastSkip)}; a backlogged relay decides later than the client sent), against the overspend bound of balance / RELAY_TRUST_FACTOR = ${f(RICH_QUOTA / 100, 0)} per user and replica.`;
}

/** What the side probes saw, per scenario kind. */
export function scenarioLines(x: ProbeView): string[] {
  const { sc, times } = x;
  const lines = [playgroundLine(x)];
  if (sc.target === 'kafka') lines.push(kafkaLine(x));
  if (sc.target === 'billing' || sc.target === 'mongo' || sc.kind === 'stall') lines.push(billingProbeLine(x));
  if (sc.target === 'redis') lines.push(...redisLines(x));
  if (sc.kind === 'stall') lines.push(stallLine(x));
  if (sc.kind === 'infra' || sc.kind === 'stall') {
    const t = sinceFault(times);
    lines.push(`- All five services ready (/readyz) again ${t(times.ready)} (fault lifted ${t(times.restart)}).`);
  }
  return lines;
}

/** The MongoDB monitor watchdog (services/common/src/mongo-monitor.ts): restarts, per service. */
export function monitorRestartsLine(logDir: string): string {
  const restarts = (['users', 'channels', 'billing', 'logs'] as const)
    .map((name) => {
      const text = readFileSync(join(logDir, `${name}.log`), 'utf8');
      const lines = text.split('\n').filter((l) => l.includes('server monitor silent while the server is unknown'));
      return lines.length ? `${name} ${lines.length} (${lines[0]?.match(/"monitor":\{[^}]*\}/)?.[0] ?? '?'})` : '';
    })
    .filter(Boolean);
  return `- Driver monitors restarted by the watchdog (silent while the server was unknown): ${restarts.length ? restarts.join('; ') : 'none'}.`;
}

/** The result of a scenario that threw: what its services last logged. */
export function brokenResult(sc: Scenario, err: Error, logDir: string, infraDir: string): Result {
  const dash = '-';
  return {
    scenario: sc,
    pass: false,
    lines: [
      `- The scenario stopped: ${err.stack ?? err.message}`,
      ...(['billing', 'relay', 'logs'] as const).flatMap((name) => [
        `- Last lines of ${name}.log:`,
        ...tailOf(logDir, name).map((l) => `    ${l}`),
      ]),
      '- Last lines of the MongoDB-compatible server (FerretDB):',
      ...tailOf(join(infraDir, 'logs'), 'mongo').map((l) => `    ${l}`),
    ],
    summary: {
      served: 0,
      sent: 0,
      errors: 0,
      errorKinds: dash,
      outage: dash,
      ready: dash,
      caughtUp: dash,
      drained: dash,
      invariant: 'the scenario stopped (see its section)',
      bound: dash,
    },
  };
}

/** A scenario's section: its heading and lines. */
export function sectionLines(r: Result): string[] {
  const sc = r.scenario;
  return [
    '',
    `## ${sc.name}: ${sc.title}, ${sc.kind === 'stall' ? 'for' : 'restart after'} ${s1(sc.downMs)} — ${r.pass ? 'PASS' : 'FAIL'}`,
    '',
    ...r.lines,
  ];
}

/** The summary table, the "Why <scenario> failed:" lines under it, the scenarios left out and the suite's time. */
export function summaryLines(results: Result[], skipped: string[], suiteMs: number): string[] {
  const lines = [
    '',
    '## Summary',
    '',
    '| scenario | invariant | requests sent / served | client errors | errors (kinds) | client-visible outage | restart -> listening / ready | consumer caught up | drained after load | bound |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const m = r.summary;
    lines.push(
      `| ${r.scenario.name} | ${m.invariant} | ${m.sent} / ${m.served} | ${m.errors} | ${m.errorKinds} | ${m.outage} | ${m.ready} | ${m.caughtUp} | ${m.drained} | ${m.bound} |`,
    );
  }
  for (const r of results.filter((x) => !x.pass && x.summary.why?.length)) {
    lines.push('', `Why ${r.scenario.name} failed:`, ...(r.summary.why ?? []));
  }
  if (skipped.length) {
    lines.push(
      '',
      `NOT RUN (the suite's ${SUITE_LIMIT_S} s would not have held them; the machine is too slow for this load): ${skipped.join(', ')}.`,
    );
  }
  lines.push('', `Suite time: ${s1(suiteMs)}.`);
  return lines;
}
