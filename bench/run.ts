/**
 * Relay benchmark (a script, not a test): requests per second and added latency of the relay
 * over direct calls to a fast fake upstream, for whole answers and streams (added first-token
 * time), at a fixed rate and at saturation, next to a bare pass-through proxy (the floor); then
 * the relay's memory across 100k requests and with 1,000 open streams.
 *
 * Processes: fake upstreams, stub peers (gRPC), the bare proxy and the relay (its real main.ts,
 * one process, auth + pre-consume/settle + usage events to the real Kafka) each run apart from
 * this load generator. Loopback only; every loop is bounded.
 *
 *   bash deploy/local/bin/infra.sh up   # Kafka and Redis
 *   npx tsx bench/run.ts [--quick]
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { nodeFlagsOf } from '../deploy/local/stack/services.ts';
import { ensureKeyDir } from '../services/common/src/grpc/auth-keys.ts';
import { Pool } from '../services/relay/test/bench/load.ts';
import { BENCH_KEY, BENCH_MODEL } from '../services/relay/test/bench/stub-peers.ts';
import { bundleRelay } from './bundle-relay.ts';

const QUICK = process.argv.includes('--quick');
/** `--only=saturation,fixed,memory,streams,tokenizer` runs just those phases (all by default). */
const ONLY = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const phase = (name: string) => !ONLY || ONLY.includes(name);
/** `--modes=whole` or `--modes=stream` limits the fixed-rate and saturation phases to one mode. */
const MODES = process.argv
  .find((a) => a.startsWith('--modes='))
  ?.slice('--modes='.length)
  .split(',') ?? ['whole', 'stream'];
const STREAM_MODES = [false, true].filter((s) => MODES.includes(s ? 'stream' : 'whole'));
const RATE = 500;
const FIXED_SECONDS = QUICK ? 5 : 10;
/**
 * `--rounds=N`: the fixed-rate phase runs N rounds, each target in turn within a round, so that
 * a burst of machine noise (other tenants of a shared host) lands on one round of one target
 * instead of deciding the whole p99. Default 5 (1 with --quick).
 */
const ROUNDS = Number(
  process.argv.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length) ?? (QUICK ? 1 : 5),
);
const SAT_SECONDS = QUICK ? 5 : 15;
const SAT_CONNECTIONS = 64;
const MEMORY_REQUESTS = QUICK ? 20_000 : 100_000;
const OPEN_STREAMS = QUICK ? 300 : 1000;
const ROOT = resolve(import.meta.dirname, '..');
const children: ChildProcess[] = [];

function start(
  script: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(resolve(ROOT, script), args, {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  children.push(child);
  return new Promise((res, rej) => {
    child.once('message', (m: { port: number }) => res({ child, port: m.port }));
    child.once('exit', (code) => rej(new Error(`${script} exited ${code}`)));
  });
}

async function waitFor(fn: () => Promise<boolean>, what: string, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await fn().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The relay's ops port (/metrics) sits 1000 above its HTTP port here (METRICS_PORT below). */
const METRICS_OFFSET = 1000;

/** The relay's V8 heap in use (MB), from its /metrics (prom-client's default metrics). */
async function heapMb(origin: string): Promise<number> {
  const url = new URL(origin);
  url.port = String(Number(url.port) + METRICS_OFFSET);
  const text = await (await fetch(`${url.origin}/metrics`)).text();
  const m = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
  return Number(m?.[1] ?? 0) / 1024 / 1024;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) / 1024;
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};

interface Target {
  name: string;
  origin: string;
  headers: Record<string, string>;
  /** The process serving it (its CPU time per request is reported at saturation). */
  pid?: number;
}

/** CPU time (user + system) of a process so far, in ms (from /proc, 100 ticks per second). */
function cpuMs(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function body(stream: boolean, model = BENCH_MODEL, content = 'Hello, benchmark!'): string {
  return JSON.stringify({ model, messages: [{ role: 'user', content }], stream });
}

/** One request; resolves with total and first-token latency (ms) from `t0`. */
async function once(
  pool: Pool,
  t: Target,
  stream: boolean,
  t0: number,
  model?: string,
  content?: string,
): Promise<{ total: number; first: number; ok: boolean }> {
  const res = await pool.request({
    path: '/v1/chat/completions',
    method: 'POST',
    headers: t.headers,
    body: body(stream, model, content),
  });
  let first = 0;
  if (stream) {
    for await (const c of res.body) {
      if (!first && (c as Buffer).includes('"content":"o')) first = performance.now() - t0;
    }
  } else await res.body.dump();
  return { total: performance.now() - t0, first, ok: res.statusCode === 200 };
}

/** Open-loop load at `rate` req/s; latency counted from each request's scheduled time. */
async function fixedRate(t: Target, stream: boolean, rate: number, seconds: number) {
  const pool = new Pool(t.origin, { connections: 512, pipelining: 1 });
  const total = rate * seconds;
  const interval = 1000 / rate;
  const lat: number[] = [];
  const first: number[] = [];
  let errors = 0;
  const inflight: Promise<void>[] = [];
  const startAt = performance.now() + 50;
  let sent = 0;
  while (sent < total) {
    const now = performance.now();
    const due = Math.min(total, Math.floor((now - startAt) / interval) + 1);
    while (sent < due) {
      const scheduled = startAt + sent * interval;
      sent++;
      inflight.push(
        once(pool, t, stream, scheduled).then(
          (r) => {
            if (!r.ok) errors++;
            lat.push(r.total);
            if (stream) first.push(r.first);
          },
          () => {
            errors++;
          },
        ),
      );
    }
    await new Promise((r) => setTimeout(r, 0));
  }
  await Promise.all(inflight);
  await pool.close();
  return {
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    fp50: pct(first, 50),
    fp99: pct(first, 99),
    errors,
    n: lat.length,
    lat,
    first,
  };
}

/** Closed-loop load: `connections` workers back to back for `seconds`. */
async function saturate(
  t: Target,
  stream: boolean,
  seconds: number,
  connections = SAT_CONNECTIONS,
  maxRequests = Number.POSITIVE_INFINITY,
) {
  const pool = new Pool(t.origin, { connections, pipelining: 1 });
  const end = performance.now() + seconds * 1000;
  let done = 0;
  let errors = 0;
  const lat: number[] = [];
  const started = performance.now();
  const cpu0 = cpuMs(t.pid);
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end && done + errors < maxRequests) {
        const t0 = performance.now();
        try {
          const r = await once(pool, t, stream, t0);
          if (r.ok) done++;
          else errors++;
          if (lat.length < 200_000) lat.push(r.total);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpuPerRequest = (cpuMs(t.pid) - cpu0) / Math.max(1, done + errors);
  await pool.close();
  return { rps: done / elapsed, errors, p50: pct(lat, 50), p99: pct(lat, 99), n: done, cpuPerRequest };
}

const f = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : '-');

async function openStreams(relayTarget: Target, pid: number, log: (s: string) => void) {
  log('');
  log(`## ${OPEN_STREAMS} concurrent open streams (upstream sends a chunk every 500 ms)`);
  log('');
  await new Promise((r) => setTimeout(r, 3_000));
  const before = rssMb(pid);
  const heapBefore = await heapMb(relayTarget.origin);
  let heapPeak = heapBefore;
  const pool = new Pool(relayTarget.origin, { connections: OPEN_STREAMS + 10, pipelining: 1 });
  let peak = before;
  let finished = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
    void heapMb(relayTarget.origin).then((h) => {
      heapPeak = Math.max(heapPeak, h);
    });
  }, 100);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: OPEN_STREAMS }, () =>
      once(pool, relayTarget, true, performance.now(), `${BENCH_MODEL}-slow`).then((r) => {
        if (r.ok) finished++;
      }),
    ),
  );
  clearInterval(sampler);
  await pool.close();
  log(
    `V8 heap in use before ${f(heapBefore, 1)} MB, peak ${f(heapPeak, 1)} MB: ${f(((heapPeak - heapBefore) * 1024) / OPEN_STREAMS, 1)} KB per open stream (garbage not yet collected counts too)`,
  );
  log(
    `RSS before ${f(before, 1)} MB, peak with ${OPEN_STREAMS} open streams ${f(peak, 1)} MB: ${f(((peak - before) * 1024) / OPEN_STREAMS, 1)} KB per open stream; ${finished}/${OPEN_STREAMS} completed in ${f((performance.now() - t0) / 1000, 1)} s`,
  );
}

/**
 * CPU pinning (on by default, `--no-pin` turns it off): the proxy under test (the bare proxy or
 * the relay) gets the last CPU to itself; this load generator, the fake upstreams and the stub
 * peers share the others. Without it, the proxy and the load generator preempt each other on a
 * 2-core machine and the tail latencies measure the scheduler more than the proxy.
 */
const PIN = !process.argv.includes('--no-pin') && availableParallelism() >= 2;
const PROXY_CPU = availableParallelism() - 1;
function pin(pid: number | undefined, cpus: string): void {
  if (!PIN || !pid) return;
  try {
    execFileSync('taskset', ['-a', '-c', '-p', cpus, String(pid)], { stdio: 'ignore' });
  } catch {
    console.error(`could not pin ${pid} to CPU ${cpus} (taskset missing?): running unpinned`);
  }
}

async function main() {
  // Everything started from here on inherits the generator's CPUs; the proxies move afterwards.
  pin(process.pid, `0-${PROXY_CPU - 1}`);
  const fast = await start('services/relay/test/bench/fake-upstream.ts', ['0', '0']);
  const slow = await start('services/relay/test/bench/fake-upstream.ts', ['0', '500']);
  const upstream = `http://127.0.0.1:${fast.port}`;
  // Internal gRPC keys (ADR 0006): the relay signs its calls as it does in production and the
  // stub peers check them, so the measured hot path includes the authentication.
  const grpcAuthDir = mkdtempSync(join(tmpdir(), 'aigw-bench-keys-'));
  ensureKeyDir(grpcAuthDir);
  const peers = await start(
    'services/relay/test/bench/stub-peers.ts',
    ['0', upstream, `http://127.0.0.1:${slow.port}`],
    { GRPC_AUTH_DIR: grpcAuthDir, SERVICE_NAME: 'billing' },
  );
  const bare = await start('services/relay/test/bench/bare-proxy.ts', ['0', upstream]);
  pin(bare.child.pid, String(PROXY_CPU));
  const relayPort = 3100 + Math.floor(Math.random() * 800);
  const peer = `127.0.0.1:${peers.port}`;
  // The relay runs bundled as it ships (bench/bundle-relay.mjs), not under tsx.
  const relay = fork(await bundleRelay(), [], {
    env: {
      ...process.env,
      HTTP_PORT: String(relayPort),
      METRICS_PORT: String(relayPort + METRICS_OFFSET),
      GRPC_PORT: '0',
      SERVICE_NAME: 'relay',
      GRPC_AUTH_DIR: grpcAuthDir,
      USERS_ADDR: peer,
      CHANNELS_ADDR: peer,
      BILLING_ADDR: peer,
      LOGS_ADDR: peer,
      LOG_LEVEL: 'warn',
      KAFKA_TOPIC_PREFIX: `bench${Date.now().toString(36)}.`,
      NODE_ENV: 'production',
      // No billing runs here to publish its settle lag: without this the relay would count settles
      // as behind and pre-consume every request (docs/security.md ("Overspend bound"), backpressure).
      RELAY_SETTLE_MAX_LAG_MS: '0',
      ...(process.env.BENCH_RELAY_ENV
        ? Object.fromEntries(
            process.env.BENCH_RELAY_ENV.split(',').map((kv) => [
              kv.slice(0, kv.indexOf('=')),
              kv.slice(kv.indexOf('=') + 1),
            ]),
          )
        : {}),
    },
    execArgv: [
      // The flags it runs with everywhere (services/relay/package.json "aigw.nodeFlags").
      ...nodeFlagsOf('relay'),
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      // Extra Node/V8 flags for the relay only (e.g. BENCH_RELAY_FLAGS=--trace-gc).
      ...(process.env.BENCH_RELAY_FLAGS?.split(' ').filter(Boolean) ?? []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(relay);
  pin(relay.pid, String(PROXY_CPU));
  const relayTarget: Target = {
    name: 'relay',
    origin: `http://127.0.0.1:${relayPort}`,
    headers: { 'content-type': 'application/json', authorization: `Bearer sk-${BENCH_KEY}` },
    pid: relay.pid,
  };
  await waitFor(
    async () =>
      (await fetch(`${relayTarget.origin}/v1/models`, { headers: relayTarget.headers })).ok &&
      (await fetch(`${relayTarget.origin}/v1/models`, { headers: relayTarget.headers }).then((r) => r.text())).includes(
        BENCH_MODEL,
      ),
    'relay',
  );
  const allTargets: Target[] = [
    {
      name: 'direct (fake upstream)',
      origin: upstream,
      headers: { 'content-type': 'application/json' },
      pid: fast.child.pid,
    },
    {
      name: 'bare proxy',
      origin: `http://127.0.0.1:${bare.port}`,
      headers: { 'content-type': 'application/json' },
      pid: bare.child.pid,
    },
    relayTarget,
  ];
  /** `--targets=relay,bare` limits the phases to those targets (by the start of their names). */
  const only = process.argv
    .find((a) => a.startsWith('--targets='))
    ?.slice('--targets='.length)
    .split(',');
  const targets = allTargets.filter((t) => !only || only.some((o) => t.name.startsWith(o)));
  // Warm-up: JIT, connection pools, caches, the tokenizer worker.
  for (const t of targets) await saturate(t, false, 2, 16);
  for (const t of targets) await saturate(t, true, 2, 16);

  const out: string[] = [];
  const log = (s: string) => {
    out.push(s);
    console.log(s);
  };
  log(
    PIN
      ? `CPU pinning: the proxy under test on CPU ${PROXY_CPU}; load generator, fake upstreams and stub peers on CPU 0-${PROXY_CPU - 1} (Kafka and Redis unpinned).`
      : 'CPU pinning: off.',
  );
  // Memory per open stream first, on a relay whose heap the throughput runs have not grown yet.
  if (phase('streams')) await openStreams(relayTarget, relay.pid as number, log);
  if (phase('fixed')) await fixedPhase(targets, log);
  if (phase('saturation')) await saturationPhase(targets, log);
  if (phase('memory')) await memoryPhase(relayTarget, relay.pid as number, log);
  if (phase('tokenizer')) await tokenizerPhase(relayTarget, log);

  const counts = await new Promise<{ settles: number; preConsumes: number }>((res) => {
    peers.child.once('message', (m: { counts: { settles: number; preConsumes: number } }) => res(m.counts));
    peers.child.send({ counts: true });
  });
  log('');
  log(`Billing calls seen by the stub peers: ${counts.settles} settles, ${counts.preConsumes} pre-consumes.`);
}

async function fixedPhase(targets: Target[], log: (s: string) => void) {
  type Run = Awaited<ReturnType<typeof fixedRate>>;
  const runs = new Map<string, Run[]>();
  const key = (t: string, stream: boolean) => `${t}|${stream}`;
  for (let round = 0; round < ROUNDS; round++)
    for (const stream of STREAM_MODES)
      for (const t of targets) {
        const r = await fixedRate(t, stream, RATE, FIXED_SECONDS);
        runs.set(key(t.name, stream), [...(runs.get(key(t.name, stream)) ?? []), r]);
      }

  log('');
  log(
    `## Fixed rate: ${RATE} req/s, ${ROUNDS} round(s) of ${FIXED_SECONDS} s per target (latency from the scheduled send time, ms)`,
  );
  log('');
  log('All rounds pooled:');
  log('');
  log('| target | mode | p50 | p99 | first token p50 | first token p99 | errors | requests |');
  log('|---|---|---|---|---|---|---|---|');
  for (const stream of STREAM_MODES)
    for (const t of targets) {
      const rs = runs.get(key(t.name, stream)) ?? [];
      const lat = rs.flatMap((r) => r.lat);
      const first = rs.flatMap((r) => r.first);
      const errors = rs.reduce((a, r) => a + r.errors, 0);
      log(
        `| ${t.name} | ${stream ? 'stream' : 'whole'} | ${f(pct(lat, 50))} | ${f(pct(lat, 99))} | ${stream ? f(pct(first, 50)) : '-'} | ${stream ? f(pct(first, 99)) : '-'} | ${errors} | ${lat.length} |`,
      );
    }

  const direct = 'direct (fake upstream)';
  if (!targets.some((t) => t.name === direct) || !targets.some((t) => t.name === 'relay')) return;
  for (const stream of STREAM_MODES) {
    const [k50, k99] = stream ? (['fp50', 'fp99'] as const) : (['p50', 'p99'] as const);
    const d = runs.get(key(direct, stream)) ?? [];
    const r = runs.get(key('relay', stream)) ?? [];
    const b = runs.get(key('bare proxy', stream)) ?? [];
    log('');
    log(
      `Per round, ${stream ? 'stream first token' : 'whole answers'} (ms; added = over the direct calls of the same round):`,
    );
    log('');
    log(
      '| round | direct p99 | bare proxy p99 | relay p99 | relay added p50 | relay added p99 | bare proxy added p99 |',
    );
    log('|---|---|---|---|---|---|---|');
    const added50: number[] = [];
    const added99: number[] = [];
    const bare99: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const di = d[i];
      const ri = r[i];
      const bi = b[i];
      if (!di || !ri) continue;
      added50.push(ri[k50] - di[k50]);
      added99.push(ri[k99] - di[k99]);
      if (bi) bare99.push(bi[k99] - di[k99]);
      log(
        `| ${i + 1} | ${f(di[k99])} | ${bi ? f(bi[k99]) : '-'} | ${f(ri[k99])} | ${f(ri[k50] - di[k50])} | ${f(ri[k99] - di[k99])} | ${bi ? f(bi[k99] - di[k99]) : '-'} |`,
      );
    }
    log(
      `| **median** | | | | **${f(median(added50))}** | **${f(median(added99))}** | ${bare99.length ? f(median(bare99)) : '-'} |`,
    );
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

async function saturationPhase(targets: Target[], log: (s: string) => void) {
  log('');
  log(`## Saturation: ${SAT_CONNECTIONS} connections for ${SAT_SECONDS} s`);
  log('');
  log('| target | mode | req/s | p50 ms | p99 ms | errors | CPU ms per request |');
  log('|---|---|---|---|---|---|---|');
  const sat: Record<string, number> = {};
  for (const stream of STREAM_MODES) {
    for (const t of targets) {
      const r = await saturate(t, stream, SAT_SECONDS);
      sat[`${t.name}|${stream}`] = r.rps;
      log(
        `| ${t.name} | ${stream ? 'stream' : 'whole'} | ${f(r.rps, 0)} | ${f(r.p50)} | ${f(r.p99)} | ${r.errors} | ${f(r.cpuPerRequest, 3)} |`,
      );
    }
  }
  log('');
  for (const stream of STREAM_MODES) {
    const ratio = (sat[`relay|${stream}`] ?? 0) / (sat[`bare proxy|${stream}`] ?? 1);
    log(`Relay / bare proxy throughput (${stream ? 'stream' : 'whole'}): ${f(ratio * 100, 1)} %`);
  }
}

/**
 * Token counting under abuse (issue 10 item 4): normal requests at 200 req/s, alone and while one
 * client sends prompts made of one 8,000-letter word back to back (one connection, closed loop).
 * Before the tokenizer's bounds, one such prompt held the tokenizer worker for about 3 s and every
 * other request's estimate queued behind it.
 */
async function tokenizerPhase(relayTarget: Target, log: (s: string) => void) {
  const rate = 200;
  const seconds = FIXED_SECONDS;
  const word = Array.from({ length: 8000 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join('');
  const rows: string[] = [];
  const alone: number[] = [];
  const abused: number[] = [];
  let abusive = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const a = await fixedRate(relayTarget, false, rate, seconds);
    alone.push(a.p99);
    const pool = new Pool(relayTarget.origin, { connections: 1, pipelining: 1 });
    let stop = false;
    const attacker = (async () => {
      while (!stop) {
        const r = await once(pool, relayTarget, false, performance.now(), BENCH_MODEL, word).catch(() => null);
        if (r) abusive++;
      }
    })();
    const b = await fixedRate(relayTarget, false, rate, seconds);
    stop = true;
    await attacker;
    await pool.close();
    abused.push(b.p99);
    rows.push(`| ${round + 1} | ${f(a.p50)} | ${f(a.p99)} | ${f(b.p50)} | ${f(b.p99)} | ${a.errors + b.errors} |`);
  }
  log('');
  log(
    `## Token counting under abuse: ${rate} req/s of normal chats for ${seconds} s, without and with one client sending 8,000-letter one-word prompts back to back (${ROUNDS} round(s), ms)`,
  );
  log('');
  log('| round | alone p50 | alone p99 | with abuser p50 | with abuser p99 | errors |');
  log('|---|---|---|---|---|---|');
  for (const r of rows) log(r);
  log(`| **median** | | **${f(median(alone))}** | | **${f(median(abused))}** | |`);
  log('');
  log(
    `The abusive client's prompts served: ${abusive}. p99 with the abuser / p99 alone (median rounds): ${f(median(abused) / median(alone))}x (target <= 2x).`,
  );
}

async function memoryPhase(relayTarget: Target, pid: number, log: (s: string) => void) {
  log('');
  log(`## Memory of the relay process across ${MEMORY_REQUESTS} requests (saturation, whole answers)`);
  log('');
  // A sample every 2 % of the run; per fifth, the lowest and highest. The V8 heap saws up and
  // down between major GCs, so the lows (what survives a GC) show a leak, the highs do not.
  const per = MEMORY_REQUESTS / 50;
  const rows: string[] = [];
  let window: { rss: number; heap: number }[] = [];
  const first = { rss: rssMb(pid), heap: await heapMb(relayTarget.origin) };
  log(`before: RSS ${f(first.rss, 1)} MB, heap in use ${f(first.heap, 1)} MB`);
  log('');
  log('| requests | RSS min | RSS max | heap min | heap max |');
  log('|---|---|---|---|---|');
  for (let i = 1; i <= 50; i++) {
    await saturate(relayTarget, false, 3600, SAT_CONNECTIONS, per);
    window.push({ rss: rssMb(pid), heap: await heapMb(relayTarget.origin) });
    if (i % 10 === 0) {
      const r = window.map((w) => w.rss);
      const h = window.map((w) => w.heap);
      const row = `| ${(i - 10) * per}-${i * per} | ${f(Math.min(...r), 1)} | ${f(Math.max(...r), 1)} | ${f(Math.min(...h), 1)} | ${f(Math.max(...h), 1)} |`;
      rows.push(row);
      log(row);
      window = [];
    }
  }
}

try {
  await main();
} finally {
  for (const c of children) c.kill('SIGTERM');
}
process.exit(0);
