/**
 * End-to-end benchmark of the platform (a script, not a test; issue 16): the real services as
 * separate processes (users, channels, billing, logs, relay; the gateway too) on the real Kafka,
 * Redis and MongoDB-compatible servers, a fake OpenAI upstream, and many users with tokens. It
 * reports whether the usage pipeline keeps pace with the relay:
 *
 * 1. Steps of fixed request rates (`--rates=250,500,750,1000,1250`, `--step=60` seconds each: 5 minutes of load;
 *    mixed whole and streamed chats spread over the users; `--wallets=large` skips the pre-consume,
 *    `--wallets=small` pre-consumes every request, `--wallets=slices` draws every reservation from
 *    wallet slices (RELAY_WALLET_SLICES=1)): per step, the client's latency, the settle lag (answer -> billing
 *    consumed the usage event) and the log lag (answer -> logs consumed it) at p50/p99, the backlog
 *    left when the step ends, and each service's CPU time per request.
 * 2. A backlog: billing and logs are paused (SIGSTOP) while `--backlog=100000` usage events are
 *    published, then resumed: how long each takes to drain it, in events per second.
 * 3. The accounting identity, per user: wallet change = sum of the logged charges = requests the
 *    client saw succeed (and backlog events) x the price of one; no request id logged twice;
 *    used quota and request count agree.
 *
 * Lags come from counts: billing's and logs' `kafka_messages_consumed_total` for the usage topic,
 * sampled every 100 ms, against the times the client saw its answers (the n-th answered request
 * counts as consumed when the counter reaches n). Events of one partition are consumed in order,
 * across partitions nearly so: the figure is close to the per-event lag, not exact.
 *
 *   bash deploy/local/bin/infra.sh up                  # the servers
 *   npx tsx bench/e2e.ts [--rates=...] [--step=60] [--backlog=100000] [--users=20] [--wallets=large|small|slices]
 *                        [--infra=shared|sqlite|postgresql] [--json=<file>] [--profile=<folder>]
 *
 * `--infra=sqlite|postgresql` runs the platform on servers of its own (FerretDB on SQLite or on
 * PostgreSQL, Kafka, Redis; bench/private-infra.ts) instead of the shared ones of MONGO_URL...:
 * then the servers' CPU is the platform's alone and is reported beside the services' (a second
 * table: every process, and the whole platform per request). `--json` writes each step's figures
 * to a file (bench/money-path.ts compares runs).
 *
 * Exits 1 when the accounting identity breaks for any user (or cannot be checked).
 */

import { writeFileSync } from 'node:fs';
import { startFakeProvider } from '@aigw/testkit/fakes';
import { clientsFor, type RelayStack, routable, userWithToken } from '@aigw/testkit/harness';
import type { ServiceName } from '../deploy/local/stack/in-process.ts';
import { TOPICS } from '../proto/src/topics.ts';
import { connectMongo, createKafka, createLogger, createPublisher } from '../services/common/src/index.ts';
import { Pool } from '../services/relay/test/bench/load.ts';
import { encodeUsage } from '../services/relay/test/bench/usage-events.ts';
import { logRows } from './log-rows.ts';
import {
  consumed,
  cpuMs,
  MODEL,
  type Platform,
  PRICE,
  priceModel,
  REPLY,
  sessionCpuMs,
  sleep,
  startPlatform,
} from './platform.ts';
import { type PrivateInfra, startPrivateInfra } from './private-infra.ts';

const arg = (name: string, dflt: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const RATES = arg('rates', '250,500,750,1000,1250').split(',').map(Number);
const STEP_SECONDS = Number(arg('step', '60'));
/**
 * large: 1e9 quota per user, so the relay skips the pre-consume (its balance view says ample);
 * small: every request pre-consumes and is settled against its hold, as for a wallet below
 * RELAY_TRUST_FACTOR x one reservation (the relay runs with a trust factor no balance satisfies).
 */
const WALLETS = arg('wallets', 'large');
if (!['large', 'small', 'slices'].includes(WALLETS)) throw new Error('--wallets must be large, small or slices');
/** What the relay runs with: small and slices never skip the pre-consume; slices draw it from wallet slices. */
const RELAY_ENV: Record<string, Record<string, string>> = {
  large: {},
  small: { RELAY_TRUST_FACTOR: String(2 ** 31 - 1) },
  slices: { RELAY_TRUST_FACTOR: String(2 ** 31 - 1), RELAY_WALLET_SLICES: '1' },
};
const WALLET_NOTE: Record<string, string> = {
  large: 'large (pre-consume skipped)',
  small: 'small (every request pre-consumes)',
  slices: 'small, drawn from wallet slices (RELAY_WALLET_SLICES=1: a hold per user and relay process)',
};
const BACKLOG = Number(arg('backlog', '100000'));
const USERS = Number(arg('users', '20'));
/** Share of streamed requests. */
const STREAM_SHARE = Number(arg('stream', '0.2'));
/** How long a step's backlog may take to drain before the next step starts. */
const DRAIN_LIMIT_S = Number(arg('drain', '120'));
/** shared: the servers of MONGO_URL, KAFKA_BROKERS, REDIS_URL; sqlite or postgresql: servers of its own. */
const INFRA = arg('infra', 'shared');
if (!['shared', 'sqlite', 'postgresql'].includes(INFRA))
  throw new Error('--infra must be shared, sqlite or postgresql');
const JSON_OUT = arg('json', '');
/** A folder for V8 CPU profiles of the services (written when they stop: the run then stops them with SIGTERM). */
const PROFILE_DIR = arg('profile', '');

const SERVICES = ['users', 'channels', 'billing', 'logs', 'relay', 'gateway'] as const;

let platform: Platform | undefined;
let infra: PrivateInfra | undefined;
/** The relay's pre-consume call times per step (printed after the table). */
const preNotes: string[] = [];
/** Each step's figures, for --json. */
const steps: Record<string, unknown>[] = [];

/** A histogram's cumulative bucket counts from a /metrics text, summed over its series: [upper bound, count] ascending. */
function buckets(text: string, name: string): [number, number][] {
  const byBound = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}_bucket{`)) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
    byBound.set(bound, (byBound.get(bound) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return [...byBound].sort((a, b) => a[0] - b[0]);
}

/** The bucket bound (ms) under which a share `q` of the observations between two readings fell. */
function bucketQuantile(before: [number, number][], after: [number, number][], q: number): string {
  const delta = after.map(([le, n], i) => [le, n - (before[i]?.[1] ?? 0)] as [number, number]);
  const total = delta.at(-1)?.[1] ?? 0;
  if (total === 0) return '-';
  const hit = delta.find(([, n]) => n >= q * total);
  return hit && Number.isFinite(hit[0]) ? `<= ${hit[0] * 1000} ms` : '> the largest bucket';
}

/** The servers' CPU so far (ms), when they are this run's own: the store (with PostgreSQL), Kafka, Redis. */
function serverCpu(): Record<string, number> {
  if (!infra) return {};
  const own = infra;
  return {
    store: sessionCpuMs(own.pid('mongo')),
    kafka: sessionCpuMs(own.pid('kafka')),
    redis: sessionCpuMs(own.pid('redis')),
  };
}
const f = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : '-');
const pct = (sorted: number[], p: number) =>
  sorted.length ? (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number) : Number.NaN;

interface Sample {
  t: number;
  billing: number;
  logs: number;
}

/** Samples both consumers every 100 ms until stopped. */
function sampler(pf: Platform, topic: string) {
  const samples: Sample[] = [];
  let on = true;
  const loop = (async () => {
    while (on) {
      const t = performance.now();
      const [billing, logs] = await Promise.all([
        consumed(pf.proc('billing'), topic).catch(() => Number.NaN),
        consumed(pf.proc('logs'), topic).catch(() => Number.NaN),
      ]);
      if (Number.isFinite(billing) && Number.isFinite(logs)) samples.push({ t, billing, logs });
      await sleep(Math.max(0, 100 - (performance.now() - t)));
    }
  })();
  return {
    samples,
    last: () => samples[samples.length - 1],
    stop: async () => {
      on = false;
      await loop;
    },
  };
}

/** Lag of each answered request (ms): when the counter first reached its position, minus its answer time. */
function lags(answers: number[], samples: Sample[], key: 'billing' | 'logs', base: number): number[] {
  const out: number[] = [];
  let j = 0;
  for (let k = 0; k < answers.length; k++) {
    const need = base + k + 1;
    while (j < samples.length && (samples[j] as Sample)[key] < need) j++;
    if (j >= samples.length) break;
    out.push(Math.max(0, (samples[j] as Sample).t - (answers[k] as number)));
  }
  return out;
}

interface UserRec {
  userId: number;
  key: string;
  tokenId: number;
  ok: number;
  backlog: number;
  before: { quota: number; used: number; count: number; tokenUsed: number };
}

async function main() {
  const run = Date.now().toString(36);
  const upstream = await startFakeProvider({
    kind: 'openai',
    record: false,
    reply: REPLY,
    promptTokens: 10,
  });
  if (INFRA !== 'shared') infra = await startPrivateInfra({ mongoBackend: INFRA as 'sqlite' | 'postgresql' });
  platform = await startPlatform({
    tag: 'e2e',
    run,
    services: [...SERVICES],
    ...(infra ? { env: infra.env } : {}),
    ...(PROFILE_DIR
      ? {
          nodeFlags: Object.fromEntries(SERVICES.map((n) => [n, ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}/${n}`]])),
        }
      : {}),
    ...(WALLETS === 'large' ? {} : { serviceEnv: { relay: RELAY_ENV[WALLETS] as Record<string, string> } }),
  });
  const pf = platform;
  const stack = pf.stack;
  const s: RelayStack = clientsFor(stack);
  const topic = `e2e${run}.${TOPICS.usage}`;
  const log = (line: string) => console.log(line);
  try {
    await priceModel(s, upstream.url);
    const users: UserRec[] = [];
    for (let i = 0; i < USERS; i++) {
      const u = await userWithToken(s, { quota: 1_000_000_000 });
      users.push({ ...u, ok: 0, backlog: 0, before: { quota: 0, used: 0, count: 0, tokenUsed: 0 } });
    }
    await routable(stack.relayUrl, users[0]?.key as string, MODEL);
    for (const u of users) {
      const w = (await s.wallet.getWallet({ userId: u.userId })).wallet;
      const t = (await s.tokens.getToken({ userId: u.userId, id: u.tokenId })).token;
      u.before = {
        quota: w?.quota ?? 0,
        used: w?.usedQuota ?? 0,
        count: w?.requestCount ?? 0,
        tokenUsed: t?.usedQuota ?? 0,
      };
    }
    log(`# End-to-end benchmark (${new Date().toISOString()})`);
    log('');
    log(
      `Services as separate processes (from source, Node ${process.version}), ${USERS} users with a token each, fake OpenAI upstream; ${Math.round(STREAM_SHARE * 100)} % streamed. Each request costs ${PRICE}. Wallets: ${WALLET_NOTE[WALLETS]}.`,
    );

    const sam = sampler(pf, topic);
    await sleep(300);
    const answers: number[] = [];
    /** Client latency (sent -> whole answer read) of each served request, ms. */
    const latencies: number[] = [];
    const pool = new Pool(stack.relayUrl, { connections: 512, pipelining: 1 });
    let errors = 0;
    const statuses = new Map<number, number>();
    log('');
    log(`## Fixed rates, ${STEP_SECONDS} s each (lag = answer -> usage event consumed, ms)`);
    log('');
    log(
      '| rate req/s | served | errors | client p50 / p99 ms | settle lag p50 | settle lag p99 | log lag p50 | log lag p99 | backlog at step end (billing / logs) | drained after | CPU ms/request: relay, billing, logs, channels, users |',
    );
    log('|---|---|---|---|---|---|---|---|---|---|---|');
    let keptUp = 0;
    for (const rate of RATES) {
      const first = answers.length;
      const firstLatency = latencies.length;
      const relayMetrics = () =>
        fetch(`http://127.0.0.1:${pf.proc('relay').http}/metrics`).then(
          (r) => r.text(),
          () => '',
        );
      const m0 = await relayMetrics();
      const pre0 = buckets(m0, 'relay_preconsume_duration_seconds');
      const dur0 = buckets(m0, 'relay_request_duration_seconds');
      const cpu0: Record<string, number> = {
        ...Object.fromEntries(SERVICES.map((n) => [n, cpuMs(pf.proc(n).child.pid)])),
        ...serverCpu(),
      };
      const total = rate * STEP_SECONDS;
      const interval = 1000 / rate;
      const inflight: Promise<void>[] = [];
      const startAt = performance.now() + 20;
      let sent = 0;
      let stepErrors = 0;
      while (sent < total) {
        const due = Math.min(total, Math.floor((performance.now() - startAt) / interval) + 1);
        while (sent < due) {
          const i = sent++;
          const u = users[i % users.length] as UserRec;
          const stream = (i * 7919) % 100 < STREAM_SHARE * 100;
          const sentAt = performance.now();
          inflight.push(
            pool
              .request({
                path: '/v1/chat/completions',
                method: 'POST',
                headers: { 'content-type': 'application/json', authorization: `Bearer ${u.key}` },
                body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: `hello ${i}` }], stream }),
              })
              .then(async (res) => {
                await res.body.text();
                statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
                if (res.statusCode === 200) {
                  u.ok++;
                  const now = performance.now();
                  answers.push(now);
                  latencies.push(now - sentAt);
                } else stepErrors++;
              })
              .catch(() => {
                stepErrors++;
              }),
          );
        }
        await sleep(1);
      }
      await Promise.all(inflight);
      errors += stepErrors;
      const stepEnd = performance.now();
      const cpu1: Record<string, number> = {
        ...Object.fromEntries(SERVICES.map((n) => [n, cpuMs(pf.proc(n).child.pid)])),
        ...serverCpu(),
      };
      const served = answers.length - first;
      const atEnd = sam.last() as Sample;
      const backlogBilling = answers.length - atEnd.billing;
      const backlogLogs = answers.length - atEnd.logs;
      // Let it drain before the next step (bounded).
      const drainUntil = performance.now() + DRAIN_LIMIT_S * 1000;
      while (performance.now() < drainUntil) {
        const l = sam.last() as Sample;
        if (l.billing >= answers.length && l.logs >= answers.length) break;
        await sleep(200);
      }
      const l = sam.last() as Sample;
      const drained = l.billing >= answers.length && l.logs >= answers.length;
      const stepAnswers = answers.slice(first);
      const settle = lags(stepAnswers, sam.samples, 'billing', first).sort((a, b) => a - b);
      const logged = lags(stepAnswers, sam.samples, 'logs', first).sort((a, b) => a - b);
      const client = latencies.slice(firstLatency).sort((a, b) => a - b);
      const cpu = (n: ServiceName) => f(((cpu1[n] ?? 0) - (cpu0[n] ?? 0)) / Math.max(1, served), 3);
      log(
        `| ${rate} | ${served} | ${stepErrors} | ${f(pct(client, 50), 0)} / ${f(pct(client, 99), 0)} | ${f(pct(settle, 50), 0)} | ${f(pct(settle, 99), 0)} | ${f(pct(logged, 50), 0)} | ${f(pct(logged, 99), 0)} | ${backlogBilling} / ${backlogLogs} | ${drained ? `${f((performance.now() - stepEnd) / 1000, 1)} s` : `not in ${DRAIN_LIMIT_S} s`} | ${cpu('relay')}, ${cpu('billing')}, ${cpu('logs')}, ${cpu('channels')}, ${cpu('users')} |`,
      );
      const m1 = await relayMetrics();
      const pre1 = buckets(m1, 'relay_preconsume_duration_seconds');
      const dur1 = buckets(m1, 'relay_request_duration_seconds');
      preNotes.push(
        `- ${rate} req/s: the relay's own time per request (its histogram, request to the answer's end): p50 ${bucketQuantile(dur0, dur1, 0.5)}, p99 ${bucketQuantile(dur0, dur1, 0.99)}.`,
      );
      const preCalls = (pre1.at(-1)?.[1] ?? 0) - (pre0.at(-1)?.[1] ?? 0);
      if (preCalls > 0)
        preNotes.push(
          `- ${rate} req/s: ${preCalls} pre-consume calls from the relay to billing (its histogram): p50 ${bucketQuantile(pre0, pre1, 0.5)}, p99 ${bucketQuantile(pre0, pre1, 0.99)}.`,
        );
      const perRequest = Object.fromEntries(
        Object.keys(cpu1).map((n) => [n, ((cpu1[n] ?? 0) - (cpu0[n] ?? 0)) / Math.max(1, served)]),
      );
      steps.push({
        rate,
        served,
        errors: stepErrors,
        clientP50: pct(client, 50),
        clientP99: pct(client, 99),
        settleP99: pct(settle, 99),
        logP99: pct(logged, 99),
        cpuMsPerRequest: perRequest,
      });
      if (drained && pct(settle, 99) < 2000 && pct(logged, 99) < 2000 && stepErrors === 0) keptUp = rate;
      if (!drained) break;
    }
    await pool.close();
    log('');
    log(
      `Highest rate with settle and log lag p99 under 2 s, no errors, backlog drained: ${keptUp ? `${keptUp} req/s` : 'none'}. HTTP statuses: ${JSON.stringify(Object.fromEntries(statuses))}.`,
    );
    if (preNotes.length > 0) {
      log('');
      for (const line of preNotes) log(line);
    }
    if (infra) logPlatformCpu(log);

    if (BACKLOG > 0) {
      log('');
      log(`## Backlog of ${BACKLOG} usage events (billing and logs paused while it is published)`);
      log('');
      const kafka = createKafka(
        (stack.env.KAFKA_BROKERS as string).split(','),
        'bench-e2e',
        createLogger('bench', 'warn'),
      );
      const publisher = await createPublisher(kafka);
      const base = sam.last() as Sample;
      for (const n of ['billing', 'logs'] as const) await pf.kill(n, 'SIGSTOP');
      const t0 = performance.now();
      const chunk = 2_000;
      for (let i = 0; i < BACKLOG; i += chunk) {
        const msgs = [];
        for (let j = i; j < Math.min(BACKLOG, i + chunk); j++) {
          const u = users[j % users.length] as UserRec;
          u.backlog++;
          msgs.push({
            key: String(u.userId),
            value: encodeUsage({
              eventId: `bk-${run}-${j}`,
              occurredAtMs: Date.now(),
              requestId: `bk-${run}-${j}`,
              userId: u.userId,
              tokenId: u.tokenId,
              tokenName: 'test-token',
              modelName: MODEL,
              upstreamModelName: MODEL,
              promptTokens: 10,
              completionTokens: 10,
              quota: PRICE,
              useTimeMs: 5,
              type: 2,
              group: 'default',
              statusCode: 200,
            }),
          });
        }
        await publisher.publishRaw(topic, msgs);
      }
      const published = (performance.now() - t0) / 1000;
      for (const n of ['billing', 'logs'] as const) await pf.kill(n, 'SIGCONT');
      const resumed = performance.now();
      const want = answers.length + BACKLOG;
      const done: Record<string, number> = {};
      const until = resumed + 600_000;
      while (performance.now() < until && Object.keys(done).length < 2) {
        const l = sam.last() as Sample;
        if (!done.billing && l.billing >= want) done.billing = (performance.now() - resumed) / 1000;
        if (!done.logs && l.logs >= want) done.logs = (performance.now() - resumed) / 1000;
        await sleep(100);
      }
      await publisher.disconnect();
      const rate = (n: string) => (done[n] ? `${f(BACKLOG / (done[n] as number), 0)} events/s` : '-');
      log(
        `Published in ${f(published, 1)} s while paused (consumed before: billing ${base.billing}, logs ${base.logs}).`,
      );
      log('');
      log('| consumer | drained in | rate |');
      log('|---|---|---|');
      for (const n of ['billing', 'logs'])
        log(`| ${n} | ${done[n] ? `${f(done[n] as number, 1)} s` : 'not within 600 s'} | ${rate(n)} |`);
    }
    await sam.stop();

    // The accounting identity, once every wallet slice went back (a slice held is balance taken
    // from the wallet that no charge accounts for yet).
    log('');
    log('## Accounting identity, per user');
    log('');
    const released = await slicesReleased(s, users);
    log(released.line);
    await sleep(2_000);
    const conn = await connectMongo(stack.env.MONGO_URL as string, `e2e_${run}_logs`);
    // One pass over the consumption logs (on the local server every filtered query reads the
    // whole collection, so one per user would take minutes at a few hundred thousand rows).
    const sums = new Map<number, { quota: number; rows: number; ids: Set<string> }>();
    for await (const row of logRows(conn, [2], {}, ['user_id', 'quota', 'request_id'])) {
      const uid = Number(row.user_id);
      let acc = sums.get(uid);
      if (!acc) {
        acc = { quota: 0, rows: 0, ids: new Set() };
        sums.set(uid, acc);
      }
      acc.quota += Number(row.quota ?? 0);
      acc.rows++;
      acc.ids.add(String(row.request_id));
    }
    let bad = 0;
    let checked = 0;
    for (const u of users) {
      const w = (await s.wallet.getWallet({ userId: u.userId })).wallet;
      const expected = (u.ok + u.backlog) * PRICE;
      const acc = sums.get(u.userId);
      const loggedQuota = acc?.quota ?? 0;
      const loggedRows = acc?.rows ?? 0;
      const distinct = acc?.ids.size ?? 0;
      const walletChange = u.before.quota - (w?.quota ?? 0);
      const usedChange = (w?.usedQuota ?? 0) - u.before.used;
      const countChange = (w?.requestCount ?? 0) - u.before.count;
      // Every request went through the user's one token: its used quota moves with the wallet's.
      const t = (await s.tokens.getToken({ userId: u.userId, id: u.tokenId })).token;
      const tokenUsedChange = (t?.usedQuota ?? 0) - u.before.tokenUsed;
      const ok =
        walletChange === expected &&
        loggedQuota === expected &&
        usedChange === expected &&
        tokenUsedChange === expected &&
        loggedRows === u.ok + u.backlog &&
        distinct === loggedRows &&
        countChange === loggedRows;
      checked++;
      if (!ok) {
        bad++;
        log(
          `- user ${u.userId}: expected ${expected} (${u.ok} served + ${u.backlog} backlog); wallet change ${walletChange}, used change ${usedChange}, token used change ${tokenUsedChange}, logged ${loggedQuota} in ${loggedRows} rows (${distinct} request ids), request count change ${countChange}`,
        );
      }
    }
    log(
      `${checked - bad} of ${checked} users: wallet change = sum of logged charges = (served + backlog) x ${PRICE} = used-quota change = the token's used-quota change; rows = request count change; no request id logged twice.`,
    );
    log(`Client errors in all: ${errors}.`);
    identityHeld = checked === users.length && bad === 0 && released.held === 0;
    await conn.close();
  } finally {
    for (const c of [s]) await c.stop().catch(() => undefined);
    await upstream.close();
  }
}

/** How long the check waits at most for the wallet slices to go back (idle time 5 s by default). */
const SLICE_RELEASE_LIMIT_MS = 60_000;

/**
 * Waits (bounded) until billing holds no wallet slice of any user; says how long that took, and
 * how many were still held at the limit (then the identity counts as broken).
 */
async function slicesReleased(s: RelayStack, users: UserRec[]) {
  const t0 = performance.now();
  let held = 0;
  let quota = 0;
  for (;;) {
    const ws = (await s.wallet.getWallets({ userIds: users.map((u) => u.userId) })).wallets;
    held = ws.reduce((a, w) => a + w.walletSlices, 0);
    quota = ws.reduce((a, w) => a + w.walletSliceQuota, 0);
    if (held === 0 || performance.now() - t0 > SLICE_RELEASE_LIMIT_MS) break;
    await sleep(100);
  }
  const took = f((performance.now() - t0) / 1000, 1);
  return {
    held,
    line:
      held === 0
        ? `Wallet slices: the check waited ${took} s until every one was released.`
        : `Wallet slices: ${held} still held (${quota}) after the check waited ${took} s: FAILED (a slice never released).`,
  };
}

/** Every process's CPU per request in each step, and the whole platform's (servers of its own only). */
function logPlatformCpu(log: (line: string) => void) {
  const names = [...SERVICES, 'store', 'kafka', 'redis'];
  log('');
  log(
    `CPU ms per request, every process of the platform (servers of this run's own; store = FerretDB on ${INFRA === 'postgresql' ? 'PostgreSQL, with every PostgreSQL process' : 'SQLite'}):`,
  );
  log('');
  log(`| rate req/s | ${names.join(' | ')} | whole platform |`);
  log(`|---|${names.map(() => '---|').join('')}---|`);
  for (const st of steps) {
    const per = st.cpuMsPerRequest as Record<string, number>;
    const total = names.reduce((sum, n) => sum + (per[n] ?? 0), 0);
    log(`| ${st.rate} | ${names.map((n) => f(per[n] ?? Number.NaN, 3)).join(' | ')} | ${f(total, 3)} |`);
  }
}

/** Set once every user's accounting identity was checked and held; the exit code says so. */
let identityHeld = false;
try {
  await main();
} finally {
  // A profiled service writes its profile as it exits after SIGTERM.
  if (PROFILE_DIR) await platform?.stop().catch(() => undefined);
  platform?.killAll();
  await infra?.destroy().catch(() => infra?.killAll());
}
if (JSON_OUT)
  writeFileSync(
    JSON_OUT,
    `${JSON.stringify({ infra: INFRA, wallets: WALLETS, users: USERS, steps, identityHeld }, null, 2)}\n`,
  );
if (!identityHeld) console.error('The accounting identity did not hold (or was not checked): exit 1.');
process.exit(identityHeld ? 0 : 1);
