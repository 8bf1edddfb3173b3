/**
 * Fault suite (issue 15, first slice): the platform's services as separate processes (users,
 * channels, billing, logs, relay) on the real Kafka, Redis and MongoDB-compatible servers, a fake
 * OpenAI upstream whose streams last a few seconds, and per scenario a fresh set of users with two
 * tokens each under steady mixed load (whole and streamed chats, open loop). Each scenario kills
 * one service with SIGKILL while the load runs, starts it again on the same ports, waits for the
 * usage pipeline to drain and checks, per user:
 *
 * - wallet change = sum of the logged charges = requests the client saw succeed x the price, used
 *   quota and request count agreeing; every request the client saw succeed settled in billing's
 *   ledger and logged, exactly once; nothing the client saw fail charged; no hold left open;
 * - for the relay (whose batched usage events die with it): the same, except that answered
 *   requests may go unbilled, and the under-charge must stay within the documented bound (the
 *   answers of the last RELAY_USAGE_LINGER_MS plus one send before the kill); holds of requests cut
 *   in flight are reported (ADR 0003 gives them back after an hour).
 *
 * It prints a markdown report (client-visible errors, recovery times, the bound) and exits 1 when
 * an invariant fails, 2 when the suite overruns its time limit. Loopback only; every loop bounded.
 *
 *   npm run test:faults [-- --only=billing,logs,relay] [--rate=250] [--load=45] [--keep]
 */
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceName } from '../deploy/local/stack/in-process.ts';
import { TOPICS } from '../proto/src/topics.ts';
import { connectMongo, createKafka, createLogger } from '../services/common/src/index.ts';

type Admin = ReturnType<ReturnType<typeof createKafka>['admin']>;

import { Pool } from '../services/relay/test/bench/load.ts';
import { startFakeProvider } from '../services/relay/test/fakes/fake-provider.ts';
import { clientsFor, type RelayStack, routable, userWithToken } from '../services/relay/test/relay-harness.ts';
import { MODEL, type Platform, PRICE, priceModel, REPLY, sleep, startPlatform } from './platform.ts';

const arg = (name: string, dflt: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const ONLY = arg('only', 'billing,logs,relay').split(',');
/** Requests per second, open loop. */
const RATE = Number(arg('rate', '250'));
/** Seconds of load per scenario: past the kill (8 s) plus the 30 s a killed consumer's restart can take. */
const LOAD_S = Number(arg('load', '45'));
/** The fault comes this many seconds into the load. */
const KILL_AT_S = Number(arg('kill-at', '8'));
const STREAM_SHARE = Number(arg('stream', '0.25'));
/** Delay between streamed chunks: a stream lasts about 13 chunks x this. */
const CHUNK_MS = Number(arg('chunk-ms', '250'));
/** Users with a large balance (the relay skips their pre-consume) and with a modest one (never skipped). */
const RICH_USERS = 10;
const MODEST_USERS = 3;
const RICH_QUOTA = 1_000_000_000;
/** Below RELAY_TRUST_FACTOR (100) x one reservation (66,036 for a model without max_tokens). */
const MODEST_QUOTA = 5_000_000;
/** A request the client gives up on. */
const REQUEST_TIMEOUT_MS = 30_000;
/** How long the usage pipeline may take to drain after the load. */
const DRAIN_LIMIT_S = Number(arg('drain', '90'));
/** The whole suite, start to end. */
const SUITE_LIMIT_S = Number(arg('limit', '345'));
const KEEP = process.argv.includes('--keep');
/** The relay's usage batching window (RELAY_USAGE_LINGER_MS, default). */
const LINGER_MS = 100;
/** Allowed for the send in flight when the relay died and for the client's delay in seeing an answer. */
const SEND_ALLOWANCE_MS = 500;

interface Scenario {
  name: string;
  target: ServiceName;
  /** Time between the kill and the restart. */
  downMs: number;
  /** The consumer group whose catch-up is the recovery (none for the relay). */
  group?: 'billing' | 'logs';
  /** Exact identity (billing, logs) or under-charge within the bound (relay). */
  exact: boolean;
}

const SCENARIOS: Scenario[] = [
  { name: 'billing', target: 'billing', downMs: 10_000, group: 'billing', exact: true },
  { name: 'logs', target: 'logs', downMs: 5_000, group: 'logs', exact: true },
  { name: 'relay', target: 'relay', downMs: 1_000, exact: false },
];

const now = () => performance.timeOrigin + performance.now();
const f = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');
const s1 = (ms: number) => `${f(ms / 1000)} s`;

interface UserRec {
  userId: number;
  keys: string[];
  rich: boolean;
  before: { quota: number; used: number; count: number };
}

interface Req {
  user: UserRec;
  stream: boolean;
  sentAt: number;
  doneAt: number;
  status: number;
  rid: string;
  ok: boolean;
  /** Why it failed, as the client saw it (HTTP status and message, or the socket error). */
  err: string;
}

interface LagSample {
  t: number;
  billing: number;
  logs: number;
}

interface Result {
  scenario: Scenario;
  pass: boolean;
  lines: string[];
  summary: {
    served: number;
    sent: number;
    errors: number;
    errorKinds: string;
    outage: string;
    ready: string;
    caughtUp: string;
    drained: string;
    invariant: string;
    bound: string;
  };
}

/** Consumer lag (high watermark - committed offset, summed over partitions) of the two usage groups. */
async function lagOf(admin: Admin, topic: string, groups: Record<'billing' | 'logs', string>) {
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

async function main(): Promise<number> {
  const run = Date.now().toString(36);
  const suiteStart = now();
  const logDir = mkdtempSync(join(tmpdir(), 'aigw-faults-'));
  const upstream = await startFakeProvider({
    kind: 'openai',
    record: true,
    reply: REPLY,
    promptTokens: 10,
    chunkDelayMs: CHUNK_MS,
  });
  const pf = await startPlatform({
    tag: 'flt',
    run,
    services: ['users', 'channels', 'billing', 'logs', 'relay'],
    logDir,
    // Start-up lines of the services that get killed (they log nothing per request).
    serviceEnv: { billing: { LOG_LEVEL: 'info' }, logs: { LOG_LEVEL: 'info' } },
  });
  platform = pf;
  const s: RelayStack = clientsFor(pf.stack);
  const topic = `${pf.prefix}${TOPICS.usage}`;
  const groups = { billing: `${pf.prefix}billing.settle`, logs: `${pf.prefix}logs.events` };
  const kafka = createKafka(
    (pf.stack.env.KAFKA_BROKERS as string).split(','),
    'faults',
    createLogger('faults', 'warn'),
  );
  const admin = kafka.admin();
  await admin.connect();
  const logsDb = await connectMongo(pf.stack.env.MONGO_URL as string, pf.database('logs'));
  const billingDb = await connectMongo(pf.stack.env.MONGO_URL as string, pf.database('billing'));
  const results: Result[] = [];
  const out = (line = '') => console.log(line);
  try {
    await priceModel(s, upstream.url);
    out(`# Fault suite (${new Date().toISOString()})`);
    out();
    out(
      `Services as separate processes from source (Node ${process.version}); per scenario ${RICH_USERS} users with a large balance and ${MODEST_USERS} with a modest one (always pre-consumed), two tokens each; ${RATE} req/s for ${LOAD_S} s, ${Math.round(STREAM_SHARE * 100)} % streamed (chunks every ${CHUNK_MS} ms: about ${f((13 * CHUNK_MS) / 1000)} s per stream); fault at ${KILL_AT_S} s. Each request costs ${PRICE}. Service logs: ${logDir}.`,
    );
    let first = true;
    for (const sc of SCENARIOS.filter((x) => ONLY.includes(x.name))) {
      const r = await runScenario(sc, { pf, s, admin, topic, groups, logsDb, billingDb, upstream, first });
      first = false;
      results.push(r);
      out();
      out(`## ${sc.name}: kill -9, restart after ${s1(sc.downMs)} — ${r.pass ? 'PASS' : 'FAIL'}`);
      out();
      for (const l of r.lines) out(l);
    }
    out();
    out('## Summary');
    out();
    out(
      '| scenario | invariant | requests sent / served | client errors | errors (kinds) | client-visible outage | restart -> listening / ready | consumer caught up | drained after load | bound |',
    );
    out('|---|---|---|---|---|---|---|---|---|---|');
    for (const r of results) {
      const m = r.summary;
      out(
        `| ${r.scenario.name} | ${m.invariant} | ${m.sent} / ${m.served} | ${m.errors} | ${m.errorKinds} | ${m.outage} | ${m.ready} | ${m.caughtUp} | ${m.drained} | ${m.bound} |`,
      );
    }
    out();
    out(`Suite time: ${s1(now() - suiteStart)}.`);
  } finally {
    await admin.disconnect().catch(() => undefined);
    s.users.close();
    s.options.close();
    s.channels.close();
    s.tokens.close();
    s.wallet.close();
    s.logs.close();
    await pf.stop();
    await upstream.close();
    if (!KEEP) {
      // Only this run's own databases and topics.
      for (const name of ['users', 'channels', 'billing', 'logs', 'relay'] as ServiceName[]) {
        const conn = name === 'logs' ? logsDb : name === 'billing' ? billingDb : undefined;
        const c = conn ?? (await connectMongo(pf.stack.env.MONGO_URL as string, pf.database(name)));
        await c.dropDatabase().catch(() => undefined);
        await c.close().catch(() => undefined);
      }
      const clean = kafka.admin();
      await clean.connect();
      const mine = (await clean.listTopics()).filter((t) => t.startsWith(pf.prefix));
      await clean.deleteTopics({ topics: mine }).catch(() => undefined);
      await clean.disconnect();
    } else {
      await logsDb.close();
      await billingDb.close();
    }
  }
  return results.every((r) => r.pass) ? 0 : 1;
}

async function runScenario(
  sc: Scenario,
  ctx: {
    pf: Platform;
    s: RelayStack;
    admin: Admin;
    topic: string;
    groups: Record<'billing' | 'logs', string>;
    logsDb: Awaited<ReturnType<typeof connectMongo>>;
    billingDb: Awaited<ReturnType<typeof connectMongo>>;
    upstream: Awaited<ReturnType<typeof startFakeProvider>>;
    first: boolean;
  },
): Promise<Result> {
  const { pf, s, admin, topic, groups, upstream } = ctx;
  const lines: string[] = [];
  const say = (l: string) => lines.push(l);

  // Fresh users for each scenario, so that its checks see only its own traffic.
  const users: UserRec[] = [];
  for (let i = 0; i < RICH_USERS + MODEST_USERS; i++) {
    const rich = i < RICH_USERS;
    const u = await userWithToken(s, { quota: rich ? RICH_QUOTA : MODEST_QUOTA });
    const { tokens } = await s.tokens.createTokens({
      userId: u.userId,
      name: 'second-token',
      remainQuota: 0,
      expiredTime: -1,
      unlimitedQuota: true,
    });
    users.push({
      userId: u.userId,
      keys: [u.key, `sk-${tokens[0]?.key}`],
      rich,
      before: { quota: 0, used: 0, count: 0 },
    });
  }
  if (ctx.first) await routable(pf.stack.relayUrl, users[0]?.keys[0] as string, MODEL);
  for (const u of users) {
    const w = (await s.wallet.getWallet({ userId: u.userId })).wallet;
    u.before = { quota: w?.quota ?? 0, used: w?.usedQuota ?? 0, count: w?.requestCount ?? 0 };
  }
  upstream.requests.length = 0;
  const abortedBefore = upstream.aborted;

  // Consumer lag, sampled every 250 ms from the scenario's start until it drained.
  const lags: LagSample[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const t = now();
      const l = await lagOf(admin, topic, groups).catch(() => undefined);
      if (l) lags.push({ t, ...l });
      await sleep(Math.max(0, 250 - (now() - t)));
    }
  })();

  // The fault, on its own clock.
  const loadStart = now() + 20;
  const times = { kill: 0, restart: 0, listening: 0, ready: 0 };
  let inflightAtKill = 0;
  let streamsAtKill = 0;
  const reqs: Req[] = [];
  const fault = (async () => {
    await sleep(Math.max(0, loadStart + KILL_AT_S * 1000 - now()));
    inflightAtKill = reqs.filter((r) => !r.doneAt).length;
    streamsAtKill = reqs.filter((r) => !r.doneAt && r.stream).length;
    times.kill = now();
    await pf.kill(sc.target, 'SIGKILL');
    await sleep(sc.downMs);
    times.restart = now();
    const ready = pf.restart(sc.target);
    // When it listens again: gRPC for billing and logs, HTTP for the relay.
    const port = sc.target === 'relay' ? pf.stack.ports.relay.http : pf.stack.ports[sc.target].grpc;
    const listening = (async () => {
      for (const until = now() + 120_000; now() < until; await sleep(100)) {
        if (await canConnect(port)) {
          times.listening = now();
          return;
        }
      }
    })();
    await ready;
    times.ready = now();
    await listening;
  })();

  // Open-loop load.
  const pool = new Pool(pf.stack.relayUrl, {
    connections: 1024,
    pipelining: 1,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  const total = RATE * LOAD_S;
  const interval = 1000 / RATE;
  const inflight: Promise<void>[] = [];
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor((now() - loadStart) / interval) + 1);
    while (sent < due) {
      const i = sent++;
      const user = users[i % users.length] as UserRec;
      const key = user.keys[Math.floor(i / users.length) % 2] as string;
      const stream = (i * 7919) % 100 < STREAM_SHARE * 100;
      const r: Req = { user, stream, sentAt: now(), doneAt: 0, status: 0, rid: '', ok: false, err: '' };
      reqs.push(r);
      inflight.push(
        pool
          .request({
            path: '/v1/chat/completions',
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
            body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: `hello ${i}` }], stream }),
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          })
          .then(async (res) => {
            r.status = res.statusCode;
            r.rid = String(res.headers['x-aigw-request-id'] ?? '');
            const text = await res.body.text();
            r.ok = res.statusCode === 200 && (stream ? text.includes('data: [DONE]') : text.includes('"choices"'));
            if (!r.ok) r.err = `${res.statusCode} ${errorMessage(text)}`;
          })
          .catch((err: { code?: string; name?: string }) => {
            r.err = `${r.status ? `${r.status} then ` : ''}${err.code ?? err.name ?? 'error'}`;
          })
          .finally(() => {
            r.doneAt = now();
          }),
      );
    }
    await sleep(1);
  }
  const loadEnd = now();
  await Promise.all(inflight);
  await pool.close();
  await fault.catch((err) => {
    say(`- the restart failed: ${(err as Error).message}`);
  });
  const answered = now();

  // Drain: both consumer groups at lag 0 twice in a row (bounded).
  await sleep(LINGER_MS + 500);
  let drainedAt = 0;
  const drainUntil = now() + DRAIN_LIMIT_S * 1000;
  let zeros = 0;
  while (now() < drainUntil) {
    const l = lags[lags.length - 1];
    if (l && l.t > answered && l.billing === 0 && l.logs === 0) {
      if (++zeros >= 2) {
        drainedAt = l.t;
        break;
      }
    } else zeros = 0;
    await sleep(300);
  }
  sampling = false;
  await sampler;

  // What the client saw.
  const ok = reqs.filter((r) => r.ok);
  const failed = reqs.filter((r) => !r.ok);
  const kindsOf = (xs: Req[]) => {
    const kinds = new Map<string, number>();
    for (const r of xs) kinds.set(r.err, (kinds.get(r.err) ?? 0) + 1);
    return (
      [...kinds.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${n} × ${k}`)
        .join('; ') || 'none'
    );
  };
  const errorKinds = kindsOf(failed);
  const phases = [
    ['before the kill', failed.filter((r) => r.doneAt < times.kill)],
    ['from the kill until ready again', failed.filter((r) => r.doneAt >= times.kill && r.doneAt < times.ready)],
    ['after ready again', failed.filter((r) => r.doneAt >= times.ready)],
  ] as const;
  const byPhase = phases
    .filter(([, xs]) => xs.length)
    .map(([name, xs]) => `${name}: ${xs.length} (${kindsOf(xs)})`)
    .join('; ');
  const firstErr = failed.reduce((m, r) => Math.min(m, r.doneAt), Number.POSITIVE_INFINITY);
  const lastErr = failed.reduce((m, r) => Math.max(m, r.doneAt), 0);
  const outage = failed.length
    ? `errors from +${f((firstErr - times.kill) / 1000)} s to +${f((lastErr - times.kill) / 1000)} s after the kill`
    : 'none';

  // What billing and logs recorded, for this scenario's users.
  const ids = users.map((u) => u.userId);
  const logs = await ctx.logsDb
    .collection('logs')
    .find({ user_id: { $in: ids }, type: 2 }, { projection: { request_id: 1, quota: 1, user_id: 1 } })
    .toArray();
  const entries = await ctx.billingDb
    .collection('ledger_entries')
    .find(
      { user_id: { $in: ids } },
      { projection: { user_id: 1, seq: 1, ops: 1, op_id: 1, kind: 1, amount: 1, at: 1 } },
    )
    .toArray();

  let pass = true;
  let underQuota = 0;
  let unbilledAnswers: Req[] = [];
  let holdsOpen = 0;
  let holdsOpenQuota = 0;
  let holdsOfAnswered = 0;
  let settledTotal = 0;
  let refunds = 0;
  let refundedQuota = 0;
  let emptyRefunds = 0;
  const settleAt = new Map<string, number>();
  for (const u of users) {
    const mine = reqs.filter((r) => r.user === u);
    const A = new Set(mine.filter((r) => r.ok).map((r) => r.rid));
    const w = (await s.wallet.getWallet({ userId: u.userId })).wallet;
    const walletChange = u.before.quota - (w?.quota ?? 0);
    const usedChange = (w?.usedQuota ?? 0) - u.before.used;
    const countChange = (w?.requestCount ?? 0) - u.before.count;
    const rows = logs.filter((l) => l.user_id === u.userId);
    const loggedSum = rows.reduce((a, l) => a + (l.quota as number), 0);
    const loggedIds = new Map<string, number>();
    for (const l of rows) loggedIds.set(l.request_id as string, (loggedIds.get(l.request_id as string) ?? 0) + 1);
    const loggedTwice = [...loggedIds.values()].filter((n) => n > 1).length;
    // Billing's ledger: every close recorded once (a replayed close is answered, not appended).
    const closes = new Map<string, number>();
    const settled = new Map<string, number>();
    let maxSeq = 0;
    for (const e of entries.filter((x) => x.user_id === u.userId)) {
      maxSeq = Math.max(maxSeq, e.seq as number);
      const ops = (e.ops as { id: string; kind: string; amount: number }[] | undefined) ?? [
        { id: e.op_id as string, kind: e.kind as string, amount: e.amount as number },
      ];
      for (const o of ops) {
        if (!o.id.startsWith('close:')) continue;
        closes.set(o.id, (closes.get(o.id) ?? 0) + 1);
        if (o.kind === 'refund') {
          if (o.amount > 0) {
            refunds++;
            refundedQuota += o.amount;
          } else emptyRefunds++;
        }
        if (o.kind === 'settle') {
          const rid = o.id.slice('close:'.length);
          settled.set(rid, o.amount);
          settleAt.set(rid, e.at as number);
        }
      }
    }
    const closedTwice = [...closes.values()].filter((n) => n > 1).length;
    const settledSum = [...settled.values()].reduce((a, b) => a + b, 0);
    settledTotal += settled.size;
    const head = maxSeq
      ? await ctx.billingDb
          .collection('ledger_entries')
          .findOne({ _id: `${u.userId}:${maxSeq}` as never }, { projection: { 'state.holds': 1 } })
      : null;
    const holds = Object.entries(
      ((head?.state as { holds?: Record<string, { a: number }> } | undefined)?.holds ?? {}) as Record<
        string,
        { a: number }
      >,
    );
    const heldQuota = holds.reduce((a, [, h]) => a + h.a, 0);
    holdsOpen += holds.length;
    holdsOpenQuota += heldQuota;
    holdsOfAnswered += holds.filter(([rid]) => A.has(rid)).length;
    const notSettled = [...A].filter((rid) => !settled.has(rid));
    const notLogged = [...A].filter((rid) => !loggedIds.has(rid));
    const chargedButFailed = [...settled.keys()].filter((rid) => !A.has(rid));
    const loggedButFailed = [...loggedIds.keys()].filter((rid) => !A.has(rid));
    const problems: string[] = [];
    if (loggedTwice) problems.push(`${loggedTwice} request ids logged twice`);
    if (closedTwice) problems.push(`${closedTwice} requests closed twice in the ledger`);
    if (chargedButFailed.length) problems.push(`${chargedButFailed.length} charged though the client saw them fail`);
    if (loggedButFailed.length) problems.push(`${loggedButFailed.length} logged though the client saw them fail`);
    if (settledSum !== loggedSum) problems.push(`settled ${settledSum} != logged ${loggedSum}`);
    if (usedChange !== loggedSum) problems.push(`used-quota change ${usedChange} != logged ${loggedSum}`);
    if (countChange !== rows.length) problems.push(`request count change ${countChange} != ${rows.length} rows`);
    if (walletChange - heldQuota !== settledSum)
      problems.push(`wallet change ${walletChange} - held ${heldQuota} != settled ${settledSum}`);
    if (sc.exact) {
      if (walletChange !== A.size * PRICE) problems.push(`wallet change ${walletChange} != ${A.size} x ${PRICE}`);
      if (notSettled.length) problems.push(`${notSettled.length} answered requests not settled`);
      if (notLogged.length) problems.push(`${notLogged.length} answered requests not logged`);
      if (holds.length) problems.push(`${holds.length} holds left open (${heldQuota})`);
    } else {
      underQuota += A.size * PRICE - settledSum;
      const unsettled = new Set(notSettled);
      unbilledAnswers = unbilledAnswers.concat(mine.filter((r) => r.ok && unsettled.has(r.rid)));
      if (notLogged.length !== notSettled.length)
        problems.push(`${notLogged.length} answered requests not logged but ${notSettled.length} not settled`);
    }
    if (problems.length) {
      pass = false;
      say(`- user ${u.userId} (${u.rich ? 'large' : 'modest'} balance, ${A.size} answered): ${problems.join('; ')}`);
    }
  }

  // The bound (relay): what was unbilled must have been answered within the batching window (plus
  // the send in flight) before the kill, so the under-charge is at most the answers of that window.
  let bound = 'exact';
  if (!sc.exact) {
    const windowStart = times.kill - LINGER_MS - SEND_ALLOWANCE_MS;
    // Answers the killed process gave: requests sent before the kill, answered after windowStart.
    const inWindow = ok.filter((r) => r.sentAt < times.kill && r.doneAt > windowStart).length;
    const oldest = unbilledAnswers.reduce((m, r) => Math.max(m, times.kill - r.doneAt), Number.NEGATIVE_INFINITY);
    const within = unbilledAnswers.every((r) => r.doneAt > windowStart);
    const boundQuota = inWindow * PRICE;
    if (!within || underQuota > boundQuota) pass = false;
    bound = `under-charge ${underQuota} (${unbilledAnswers.length} answers) ≤ ${boundQuota} (${inWindow} answers in the last ${LINGER_MS} + ${SEND_ALLOWANCE_MS} ms): ${within && underQuota <= boundQuota ? 'yes' : 'NO'}`;
    say(
      `- Answered but unbilled: ${unbilledAnswers.length} (${underQuota} quota); the oldest answered ${unbilledAnswers.length ? `${f(oldest, 0)} ms` : '-'} before the kill. Answers in the ${LINGER_MS} + ${SEND_ALLOWANCE_MS} ms before the kill: ${inWindow} (bound ${boundQuota}).`,
    );
    say(
      `- Open holds after the drain: ${holdsOpen} (${holdsOpenQuota} quota; ${holdsOfAnswered} of answered requests whose settle was lost), returned by the user's first change after an hour (ADR 0003).`,
    );
    const cut = reqs.filter((r) => !r.ok && r.status === 200).length;
    say(
      `- Requests in flight at the kill: ${inflightAtKill} (${streamsAtKill} streams); cut after their headers: ${cut}. The upstream served ${upstream.requests.length} calls (${upstream.aborted - abortedBefore} cut), ${settledTotal} were billed: ${upstream.requests.length - settledTotal} upstream calls unbilled.`,
    );
  } else {
    say(
      `- In flight at the kill: ${inflightAtKill} requests (${streamsAtKill} streams). Open holds after the drain: ${holdsOpen}.`,
    );
  }

  // Recovery.
  const g = sc.group;
  const caughtLimit = RATE * 2;
  let caughtUp = '-';
  let maxLag = 0;
  if (g) {
    for (const l of lags) if (l.t > times.kill) maxLag = Math.max(maxLag, l[g]);
    const back = lags.find((l) => l.t > times.ready && l[g] <= caughtLimit && l.t > times.kill);
    caughtUp = back ? `${s1(back.t - times.kill)} after the kill` : 'never';
    say(
      `- ${g} consumer lag: up to ${maxLag} events after the kill; back under ${caughtLimit} (2 s of traffic) ${caughtUp} (${s1((back?.t ?? Number.NaN) - times.ready)} after it was ready again).`,
    );
  }
  if (sc.target === 'billing') {
    // Requests answered before the restart were settled by the new process: when was the last one?
    const before = ok.filter((r) => r.doneAt < times.restart && r.doneAt > times.kill - 1000);
    const last = before.reduce((m, r) => Math.max(m, settleAt.get(r.rid) ?? 0), 0);
    say(
      `- The ${before.length} requests answered between the kill and the restart were all settled ${s1(last - times.kill)} after the kill.`,
    );
  }
  if (sc.target === 'relay') {
    const back = ok
      .filter((r) => r.sentAt > times.kill)
      .reduce((m, r) => Math.min(m, r.doneAt), Number.POSITIVE_INFINITY);
    say(`- First request sent after the kill and served: answered ${s1(back - times.kill)} after the kill.`);
  }
  const lat = (xs: Req[]) => xs.map((r) => r.doneAt - r.sentAt).sort((a, b) => a - b);
  const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? Number.NaN;
  const calm = ok.filter((r) => r.doneAt < times.kill);
  const wholeLat = lat(calm.filter((r) => !r.stream));
  const streamLat = lat(calm.filter((r) => r.stream));
  const maxLags = { billing: 0, logs: 0 };
  for (const l of lags) for (const k of ['billing', 'logs'] as const) maxLags[k] = Math.max(maxLags[k], l[k]);
  say(
    `- Before the kill: whole answers p50 ${f(pct(wholeLat, 50), 0)} ms, p99 ${f(pct(wholeLat, 99), 0)} ms; streams p50 ${s1(pct(streamLat, 50))}, p99 ${s1(pct(streamLat, 99))}. Largest consumer lag seen (committed offsets): billing ${maxLags.billing}, logs ${maxLags.logs} events.`,
  );
  const during = lat(ok.filter((r) => r.sentAt >= times.kill && r.sentAt < times.ready));
  if (during.length)
    say(
      `- Requests sent between the kill and ready again and served: ${during.length}, answered in p50 ${f(pct(during, 50), 0)} ms, p99 ${f(pct(during, 99), 0)} ms, at most ${f(during[during.length - 1] as number, 0)} ms.`,
    );
  say(
    `- Kill -> restart ${s1(times.restart - times.kill)}, restart -> listening ${s1(times.listening - times.restart)}, restart -> ready (/readyz) ${s1(times.ready - times.restart)}; load ${s1(loadEnd - loadStart)} (${reqs.length} requests, ${f(reqs.length / ((loadEnd - loadStart) / 1000), 0)} req/s sent), ${ok.length} served, ${failed.length} client errors: ${errorKinds}.`,
  );
  say(`- Client-visible outage: ${outage}.${byPhase ? ` Errors ${byPhase}.` : ''}`);
  say(
    `- Failed requests closed in the ledger: ${refunds} refunds (${refundedQuota} quota given back), ${emptyRefunds} with nothing held (recorded so that a late pre-consume is refused).`,
  );
  say(
    `- Usage pipeline drained (billing and logs at lag 0) ${drainedAt ? `${s1(drainedAt - answered)} after the last answer` : `NOT within ${DRAIN_LIMIT_S} s`}.`,
  );
  if (!drainedAt) pass = false;
  const invariant = pass
    ? sc.exact
      ? `holds for ${users.length} users`
      : `holds for ${users.length} users (within the bound)`
    : 'FAILS';
  return {
    scenario: sc,
    pass,
    lines,
    summary: {
      served: ok.length,
      sent: reqs.length,
      errors: failed.length,
      errorKinds,
      outage,
      ready: `${s1(times.listening - times.restart)} / ${s1(times.ready - times.restart)}`,
      caughtUp,
      drained: drainedAt ? s1(drainedAt - answered) : 'no',
      invariant,
      bound,
    },
  };
}

/** Whether a TCP connection to a loopback port succeeds. */
function canConnect(port: number): Promise<boolean> {
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
function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } };
    return (body.error?.message ?? text).slice(0, 60);
  } catch {
    return text.slice(0, 60);
  }
}

let platform: Platform | undefined;
const watchdog = setTimeout(() => {
  console.error(`fault suite: over its ${SUITE_LIMIT_S} s limit; stopping`);
  platform?.killAll();
  process.exit(2);
}, SUITE_LIMIT_S * 1000);
watchdog.unref();

let code = 1;
try {
  code = await main();
} catch (err) {
  console.error(err);
} finally {
  platform?.killAll();
}
process.exit(code);
