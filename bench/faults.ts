/**
 * Fault suite (issue 15): the platform's services as separate processes (users, channels, billing,
 * logs, relay) on a PRIVATE set of Kafka, Redis and MongoDB-compatible servers (infra.sh with its
 * own folder and ports: this suite stops and kills them), a fake OpenAI upstream whose streams last
 * a few seconds, and per scenario a fresh set of users with two tokens each under steady mixed load
 * (whole and streamed chats, open loop). Each scenario injects one fault while the load runs:
 *
 *   billing, logs, relay  kill -9 of the service, restarted on the same ports (billing's also
 *                         meets Stripe webhooks before, during and after it: faults-webhook.ts)
 *   kafka                 the broker stopped for 12 s, then started again
 *   redis                 Redis stopped for 12 s, then started again
 *   mongo                 the MongoDB-compatible server restarted (stopped, started 5 s later)
 *   stall                 the network between the relay and billing stalls for 12 s (a proxy that
 *                         stops forwarding, connections left open)
 *
 * then waits for the usage pipeline to drain, sends each user one more request (the user's next
 * change, which gives back holds of a dead relay process), drains again and checks, per user:
 *
 * - wallet change = sum of the logged charges = requests the client saw succeed x the price, used
 *   quota and request count agreeing; every request the client saw succeed settled in billing's
 *   ledger and logged, exactly once; nothing the client saw fail charged; no hold left open;
 * - for the relay the same, exactly: its usage spool (RELAY_USAGE_SPOOL_DIR) keeps the events the
 *   kill cut off and the restarted process sends them (a scenario with exact: false would check an
 *   under-charge bound of the last RELAY_USAGE_LINGER_MS plus one send instead).
 *
 * It prints a markdown report (client-visible errors, recovery times, the bound) and exits 1 when
 * an invariant fails, 2 when the suite overruns its time limit, 3 when scenarios were left out
 * because they would not have fitted in it. Loopback only; every loop bounded.
 *
 *   npm run test:faults [-- --only=billing,logs,relay,kafka,redis,mongo,stall] [--rate=250] [--load=40] [--keep]
 *
 * Its parts: faults-config.ts (flags, scenarios, records), faults-load.ts (the load and what the
 * client saw), faults-inject.ts (the faults), faults-probes.ts (lag sampling, side probes, drain),
 * faults-checks.ts (the invariants as plain functions), faults-verify.ts (reading the records and
 * checking them), faults-report.ts (the report's lines).
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeProvider } from '@aigw/testkit/fakes';
import { clientsFor, type RelayStack, routable, userWithToken } from '@aigw/testkit/harness';
import { TOPICS } from '../proto/src/topics.ts';
import {
  connectMongo,
  connectRedis,
  createKafka,
  createLogger,
  RELAY_LEASE_LAPSE_MS,
  RELAY_LEASE_RENEW_MS,
  type Redis,
} from '../services/common/src/index.ts';
import { errorsByPhase, kindsOf, outageOf } from './faults-checks.ts';
import {
  BUFFER_MAX,
  CHECK_READ_MS,
  CHUNK_MS,
  DRAIN_LIMIT_S,
  f,
  KEEP,
  KILL_AT_S,
  type LagSample,
  LOAD_S,
  MODEST_QUOTA,
  MODEST_USERS,
  now,
  ONLY,
  type Probe,
  RATE,
  type Req,
  type Result,
  RICH_QUOTA,
  RICH_USERS,
  RPM,
  SCENARIOS,
  type Scenario,
  STREAM_SHARE,
  SUITE_LIMIT_S,
  s1,
  type UserRec,
} from './faults-config.ts';
import { type FaultRun, injectFault } from './faults-inject.ts';
import { LOAD_TOTAL, loadClient, openLoop, playgroundCookie, sessionId } from './faults-load.ts';
import { type Admin, checkRead, drain, rateCount, startLagSampler, startProber } from './faults-probes.ts';
import {
  brokenResult,
  clientLines,
  ledgerLines,
  monitorRestartsLine,
  recoveryLines,
  scenarioLines,
  sectionLines,
  summaryLines,
} from './faults-report.ts';
import { boundOf, markerCheck, slicesReleased, type Verdict, verifyUsers } from './faults-verify.ts';
import { startWebhookFake, type WebhookCheck, webhookCheck } from './faults-webhook.ts';
import { countLogRows } from './log-rows.ts';
import { MODEL, type Platform, PRICE, priceModel, REPLY, sleep, startPlatform } from './platform.ts';
import { type PrivateInfra, startPrivateInfra } from './private-infra.ts';
import { type StallProxy, startStallProxy } from './stall-proxy.ts';

/** Everything the scenarios share: the platform, its clients and the private servers. */
interface Suite {
  pf: Platform;
  s: RelayStack;
  admin: Admin;
  topic: string;
  groups: Record<'billing' | 'logs', string>;
  logsDb: Awaited<ReturnType<typeof connectMongo>>;
  billingDb: Awaited<ReturnType<typeof connectMongo>>;
  upstream: Awaited<ReturnType<typeof startFakeProvider>>;
  infra: PrivateInfra;
  infraUpMs: number;
  proxy: StallProxy;
  redis: Redis;
  run: string;
  /** Where the services write their logs (`<name>.log`). */
  logDir: string;
  /** The fake Stripe of the billing scenario's webhook check. */
  stripe?: Awaited<ReturnType<typeof startWebhookFake>>;
}

/** What runScenario needs beyond the suite: whether it is the first scenario (the model's route is warmed up). */
type ScenarioCtx = Suite & { first: boolean };

/** The private servers, the fake upstream and Stripe, the platform's processes and the suite's clients. */
async function startSuite(run: string): Promise<Suite> {
  const logDir = mkdtempSync(join(tmpdir(), 'aigw-faults-'));
  const upstream = await startFakeProvider({
    kind: 'openai',
    record: true,
    reply: REPLY,
    promptTokens: 10,
    chunkDelayMs: CHUNK_MS,
  });
  // Stripe's API, for the billing scenario's webhook check (billing's STRIPE_API_BASE names it).
  const stripe = ONLY.includes('billing') ? await startWebhookFake() : undefined;
  // Private servers: the suite stops and kills them.
  const t0 = now();
  const infra = await startPrivateInfra({
    onCreate: (i) => {
      privateInfra = i;
    },
  });
  Object.assign(process.env, infra.env);
  const infraUpMs = now() - t0;
  // The relay reaches billing through a proxy that the stall scenario stalls.
  let billingGrpc = 0;
  const proxy = await startStallProxy({ port: () => billingGrpc });
  const pf = await startPlatform({
    tag: 'flt',
    run,
    services: ['users', 'channels', 'billing', 'logs', 'relay', 'gateway'],
    logDir,
    // Start-up lines and warnings of every service (none logs per request at info).
    env: { LOG_LEVEL: 'info' },
    serviceEnv: {
      relay: {
        LOG_LEVEL: 'warn',
        RELAY_TOKEN_RPM: String(RPM),
        RELAY_USER_RPM: String(RPM),
        RELAY_USAGE_BUFFER_MAX: String(BUFFER_MAX),
      },
      ...(stripe ? { billing: { STRIPE_API_BASE: stripe.baseUrl } } : {}),
    },
    serviceEnvOf: (ports) => {
      billingGrpc = ports.billing.grpc;
      return { relay: { BILLING_ADDR: `127.0.0.1:${proxy.port}` } };
    },
  });
  platform = pf;
  return { ...(await connectSuite(pf, infra)), pf, upstream, infra, infraUpMs, proxy, run, logDir, stripe };
}

/** The suite's own clients of the platform: Redis, Kafka's admin, the logs and billing databases, gRPC. */
async function connectSuite(pf: Platform, infra: PrivateInfra) {
  const log = createLogger('faults', 'warn');
  const redis = await connectRedis(infra.env.REDIS_URL, pf.stack.env.REDIS_KEY_PREFIX as string, log);
  const s: RelayStack = clientsFor(pf.stack);
  const topic = `${pf.prefix}${TOPICS.usage}`;
  const groups = { billing: `${pf.prefix}billing.settle`, logs: `${pf.prefix}logs.events` };
  const kafka = createKafka((pf.stack.env.KAFKA_BROKERS as string).split(','), 'faults', log);
  const admin = kafka.admin();
  await admin.connect();
  const logsDb = await connectMongo(pf.stack.env.MONGO_URL as string, pf.database('logs'));
  const billingDb = await connectMongo(pf.stack.env.MONGO_URL as string, pf.database('billing'));
  return { redis, s, topic, groups, admin, logsDb, billingDb };
}

/** Closes the suite's clients, stops the platform and the fakes, and removes the private servers (unless --keep). */
async function stopSuite(x: Suite) {
  await x.admin.disconnect().catch(() => undefined);
  x.s.users.close();
  x.s.options.close();
  x.s.channels.close();
  x.s.tokens.close();
  x.s.wallet.close();
  x.s.logs.close();
  await x.pf.stop();
  await x.upstream.close();
  await x.stripe?.stop();
  await x.proxy.close();
  x.redis.disconnect();
  await x.logsDb.close().catch(() => undefined);
  await x.billingDb.close().catch(() => undefined);
  if (KEEP) console.error(`--keep: private servers left running in ${x.infra.dir}: ${JSON.stringify(x.infra.env)}`);
  else await x.infra.destroy();
  privateInfra = undefined;
}

/** The report's heading and the load's description. */
function headerLines(x: Suite): string[] {
  return [
    `# Fault suite (${new Date().toISOString()})`,
    '',
    `Services as separate processes from source (Node ${process.version}); per scenario ${RICH_USERS} users with a large balance and ${MODEST_USERS} with a modest one (always pre-consumed), two tokens each; ${RATE} req/s for ${LOAD_S} s, ${Math.round(STREAM_SHARE * 100)} % streamed (chunks every ${CHUNK_MS} ms: about ${f((13 * CHUNK_MS) / 1000)} s per stream); fault at ${KILL_AT_S} s. Each request costs ${PRICE}. Private Kafka, Redis and FerretDB (${x.infra.dir}, up in ${s1(x.infraUpMs)}); the relay reaches billing through a TCP proxy; rate limits on (${RPM}/min per user and token: never reached, so that the limiter runs); relay usage buffer ${BUFFER_MAX} events. Service logs: ${x.logDir}.`,
  ];
}

/**
 * The scenarios in turn, each printed as it ends. Within the suite's limit (15 s kept for stopping
 * everything): a scenario that would not fit (as long as the longest so far, at least the load plus
 * 30 s) is not started; the suite then reports it and fails. A scenario that throws (a check's read
 * failing three times, a server that does not come back) fails with what its services last logged,
 * and the suite stops there.
 */
async function runScenarios(x: Suite, suiteStart: number, out: (line?: string) => void) {
  const results: Result[] = [];
  const skipped: string[] = [];
  let first = true;
  let longest = 0;
  for (const sc of SCENARIOS.filter((y) => ONLY.includes(y.name))) {
    const left = SUITE_LIMIT_S * 1000 - (now() - suiteStart) - 15_000;
    if (left < Math.max(longest, (LOAD_S + 30) * 1000)) {
      skipped.push(sc.name);
      continue;
    }
    const started = now();
    let broken = false;
    const r: Result = await runScenario(sc, { ...x, first }).catch((err: Error) => {
      broken = true;
      return brokenResult(sc, err, x.logDir, x.infra.dir);
    });
    first = false;
    longest = Math.max(longest, now() - started);
    results.push(r);
    for (const l of sectionLines(r)) out(l);
    if (broken) break;
  }
  return { results, skipped };
}

async function main(): Promise<number> {
  const run = Date.now().toString(36);
  const suiteStart = now();
  const x = await startSuite(run);
  const out = (line = '') => console.log(line);
  let results: Result[] = [];
  let skipped: string[] = [];
  try {
    await priceModel(x.s, x.upstream.url);
    for (const l of headerLines(x)) out(l);
    ({ results, skipped } = await runScenarios(x, suiteStart, out));
    for (const l of summaryLines(results, skipped, now() - suiteStart)) out(l);
  } finally {
    await stopSuite(x);
  }
  if (!results.every((r) => r.pass)) return 1;
  return skipped.length ? 3 : 0;
}

/** Fresh users for each scenario (so that its checks see only its own traffic), two tokens each. */
async function createUsers(s: RelayStack): Promise<UserRec[]> {
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
  return users;
}

/** Each user's wallet before the load (the checks compare with it); the reads' slowest time and failed tries. */
async function readWalletsBefore(s: RelayStack, users: UserRec[]) {
  const startReads = { slowestMs: 0, failed: 0 };
  for (const u of users) {
    const w = await checkRead(
      () => s.wallet.getWallet({ userId: u.userId }, { deadlineMs: CHECK_READ_MS }),
      startReads,
    );
    u.before = { quota: w?.quota ?? 0, used: w?.usedQuota ?? 0, count: w?.requestCount ?? 0 };
  }
  return startReads;
}

/** What a scenario's traffic left for the checks. */
interface Traffic {
  reqs: Req[];
  lags: LagSample[];
  probes: Probe[];
  fault: FaultRun;
  load: { start: number; end: number };
  /** When every load request had ended (and the fault was over). */
  answered: number;
  /** When the pipeline drained after the load and after the next requests (0: it did not). */
  drainedAt: number;
  drained2: number;
  /** The rate-limit counter of users[1] before and after its next request. */
  rlNext: [number, number];
  /** How long the wallet slices took to go back after the next requests were recorded, and any still held then. */
  slices: { ms: number; held: number; quota: number };
  /** The report's lines written while the traffic ran (a restart that failed). */
  lines: string[];
}

/**
 * The load with the fault on its own clock, lag sampling and side probes beside it, until every
 * load request ended; then the drain, each user's next request and the drain again (afterLoad).
 */
async function runTraffic(sc: Scenario, ctx: ScenarioCtx, users: UserRec[], webhook?: WebhookCheck) {
  const { pf, s, redis } = ctx;
  const lines: string[] = [];
  const sampler = startLagSampler(ctx.admin, ctx.topic, ctx.groups);
  const loadStart = now() + 20;
  const reqs: Req[] = [];
  const fault = injectFault(sc, { pf, infra: ctx.infra, proxy: ctx.proxy, webhook }, loadStart, reqs);
  const rlUser = users[1] as UserRec;
  const prober = startProber(pf, s, redis, rlUser.userId);
  // A console session for users[0]: one playground request every 500 ms, part of the load (billed like the others).
  const pgUser = users[0] as UserRec;
  const cookie = await playgroundCookie(pf, redis, sessionId(ctx.run, sc), pgUser);
  const client = loadClient(pf.stack.relayUrl, cookie, reqs);
  await openLoop(client, users, pgUser, loadStart);
  const loadEnd = now();
  await client.settled();
  await fault.done.catch((err) => {
    lines.push(`- the restart failed: ${(err as Error).message}`);
  });
  const answered = now();
  const after = await afterLoad(ctx, { users, reqs, client, sampler, prober, fault, answered, rlUser });
  return {
    reqs,
    lags: sampler.lags,
    probes: prober.probes,
    fault,
    load: { start: loadStart, end: loadEnd },
    answered,
    lines,
    ...after,
  } satisfies Traffic;
}

/**
 * Drain (both consumer groups at lag 0), then each user's next request (after the lease of a
 * killed relay lapsed: its holds go back), then drain again: what the checks read is final.
 */
async function afterLoad(
  ctx: ScenarioCtx,
  x: {
    users: UserRec[];
    reqs: Req[];
    client: ReturnType<typeof loadClient>;
    sampler: ReturnType<typeof startLagSampler>;
    prober: ReturnType<typeof startProber>;
    fault: FaultRun;
    answered: number;
    rlUser: UserRec;
  },
) {
  const { redis } = ctx;
  const drainedAt = await drain(x.sampler.lags, x.answered);
  await x.prober.stop();
  // Billing reads the leases every RELAY_LEASE_RENEW_MS: the last move it saw is up to one read after
  // the kill, and a loaded machine delays its reads; one more read of margin.
  await sleep(Math.max(0, x.fault.times.kill + RELAY_LEASE_LAPSE_MS + 3 * RELAY_LEASE_RENEW_MS - now()));
  // Same buckets for both reads (a minute may turn in between).
  const rlBucket = Math.floor(Date.now() / 60_000);
  const rlBeforeNext = await rateCount(redis, x.rlUser.userId, rlBucket);
  for (const [i, u] of x.users.entries())
    x.client.send(u, { key: u.keys[0] as string, stream: false, n: LOAD_TOTAL + 1000 + i, phase: 'next' });
  await x.client.settled();
  await x.client.close();
  const drained2 = drainedAt ? await drain(x.sampler.lags, now()) : 0;
  // The rate limiter counts again once Redis is back: the user's next request moved its counter.
  const rlAfterNext = await rateCount(redis, x.rlUser.userId, rlBucket);
  await nextRequestsRecorded(ctx, x.reqs);
  // Wallet slices (when on) go back once idle: the checks read the wallets after every release.
  const slices = await slicesReleased(ctx.s, x.users);
  await x.sampler.stop();
  return { drainedAt, drained2, rlNext: [rlBeforeNext, rlAfterNext] as [number, number], slices };
}

/**
 * The next requests' usage events may reach Kafka after the lag was sampled at 0: waits (bounded:
 * 30 s) until billing closed and logs recorded every one the client saw answered.
 */
async function nextRequestsRecorded(ctx: ScenarioCtx, reqs: Req[]) {
  const lastIds = reqs.filter((r) => r.phase === 'next' && r.ok).map((r) => r.rid);
  for (const until = now() + 30_000; now() < until; await sleep(300)) {
    const [closed, logged] = await Promise.all([
      ctx.billingDb
        .collection('ledger_ops')
        .countDocuments({ _id: { $in: lastIds.map((id) => `close:${id}`) as never[] } }),
      countLogRows(ctx.logsDb, [2], { request_id: { $in: lastIds } }),
    ]);
    if (closed === lastIds.length && logged === lastIds.length) break;
  }
}

async function runScenario(sc: Scenario, ctx: ScenarioCtx): Promise<Result> {
  const { pf, s } = ctx;
  const users = await createUsers(s);
  if (ctx.first) await routable(pf.stack.relayUrl, users[0]?.keys[0] as string, MODEL);
  // Billing's kill also meets card-payment webhooks (faults-webhook.ts): one order paid before it.
  let webhook: WebhookCheck | undefined;
  if (sc.target === 'billing' && ctx.stripe) {
    const payer = await userWithToken(s, { quota: 0 });
    webhook = webhookCheck(ctx.stripe, s, pf.stack.gatewayUrl, payer.username);
    await webhook.prepare();
  }
  const startReads = await readWalletsBefore(s, users);
  ctx.upstream.requests.length = 0;
  const abortedBefore = ctx.upstream.aborted;
  const traffic = await runTraffic(sc, ctx, users, webhook);
  const upstream = { calls: ctx.upstream.requests.length, cut: ctx.upstream.aborted - abortedBefore };
  return judge(sc, ctx, { users, traffic, startReads, upstream, webhook });
}

/** A scenario's verdict so far: whether it passes and why not (printed again under the summary). */
interface Failures {
  pass: boolean;
  why: string[];
}

/** The scenario's checks and report: what the client saw against what billing and logs recorded. */
async function judge(
  sc: Scenario,
  ctx: ScenarioCtx,
  x: {
    users: UserRec[];
    traffic: Traffic;
    startReads: { slowestMs: number; failed: number };
    upstream: { calls: number; cut: number };
    webhook?: WebhookCheck;
  },
): Promise<Result> {
  const t = x.traffic;
  const { reqs, fault } = t;
  const times = fault.times;
  const lines = [...t.lines];
  const say = (l: string) => lines.push(l);
  const ok = reqs.filter((r) => r.ok);
  const failed = reqs.filter((r) => !r.ok);
  const v = await verifyUsers(ctx, sc, x.users, reqs, say);
  const fails: Failures = { pass: v.pass, why: v.why };
  const bound = sc.exact ? undefined : boundOf(v, ok, times.kill);
  if (bound && !bound.holds) {
    fails.pass = false;
    fails.why.push(`- the bound: ${bound.text}`);
  }
  const atKill = { inflight: fault.inflightAtKill, streams: fault.streamsAtKill };
  for (const l of ledgerLines({ sc, v, bound, reqs, atKill, upstream: x.upstream })) say(l);
  const recovery = recoveryLines(sc, t.lags, times, ok, v.settleAt);
  for (const l of recovery.lines) say(l);
  const errorKinds = kindsOf(failed);
  const outage = outageOf(failed, times.kill);
  const byPhase = errorsByPhase(failed, times);
  const seen = { reqs, ok, failed, lags: t.lags, times, load: t.load, startReads: x.startReads, verdict: v };
  for (const l of clientLines({ ...seen, errorKinds, outage, byPhase, drainedAt: t.drainedAt, answered: t.answered }))
    say(l);
  if (t.slices.held > 0) {
    fails.pass = false;
    fails.why.push(
      `- ${t.slices.held} wallet slices (${t.slices.quota}) still held ${s1(t.slices.ms)} after the last requests were recorded`,
    );
  }
  say(
    `- Wallet slices: ${t.slices.held === 0 ? 'none held' : `${t.slices.held} still held`} ${s1(t.slices.ms)} after the last requests were recorded (the checks waited for their release).`,
  );
  if (!t.drainedAt || !t.drained2) {
    fails.pass = false;
    fails.why.push(
      `- the usage pipeline did not drain within ${DRAIN_LIMIT_S} s (${t.drainedAt ? 'after the next requests' : 'after the load'})`,
    );
  }
  const [pgUser, rlUser] = x.users as [UserRec, UserRec];
  const view = { sc, times, reqs, probes: t.probes, holdsAt: v.holdsAt, users: x.users, pgUser, rlUser };
  for (const l of scenarioLines({ ...view, rlNext: t.rlNext })) say(l);
  await targetChecks(sc, ctx, { t, v, say, fails, webhook: x.webhook });
  const invariant = fails.pass
    ? sc.exact
      ? `holds for ${x.users.length} users`
      : `holds for ${x.users.length} users (within the bound)`
    : 'FAILS';
  return {
    scenario: sc,
    pass: fails.pass,
    lines,
    summary: {
      served: ok.length,
      sent: reqs.length,
      errors: failed.length,
      errorKinds,
      outage,
      ready: `${s1(times.listening - times.restart)} / ${s1(times.ready - times.restart)}`,
      caughtUp: recovery.caughtUp,
      drained: t.drainedAt ? s1(t.drainedAt - t.answered) : 'no',
      invariant,
      bound: bound?.text ?? 'exact',
      ...(fails.why.length ? { why: fails.why } : {}),
    },
  };
}

/**
 * The checks of one target: the rate limiter counting again after Redis came back, the ledger's
 * operation markers and the driver monitors after the MongoDB restart, the webhooks of billing's kill.
 */
async function targetChecks(
  sc: Scenario,
  ctx: ScenarioCtx,
  x: { t: Traffic; v: Verdict; say: (l: string) => void; fails: Failures; webhook?: WebhookCheck },
) {
  const { fails, say } = x;
  const [rlBeforeNext, rlAfterNext] = x.t.rlNext;
  if (sc.target === 'redis' && !(rlAfterNext > rlBeforeNext)) {
    fails.pass = false;
    fails.why.push(`- the rate limiter did not count again after Redis came back (${rlBeforeNext} -> ${rlAfterNext})`);
  }
  if (sc.target === 'mongo') {
    const m = await markerCheck(ctx.billingDb, x.v.entryOps);
    if (m.why) {
      fails.pass = false;
      fails.why.push(m.why);
    }
    say(m.line);
    say(monitorRestartsLine(ctx.logDir));
  }
  if (x.webhook) {
    const w = await x.webhook.afterRestart();
    for (const l of w.lines) say(l);
    if (!w.pass) {
      fails.pass = false;
      fails.why.push(...w.lines);
    }
  }
}

let platform: Platform | undefined;
let privateInfra: PrivateInfra | undefined;
const watchdog = setTimeout(() => {
  console.error(`fault suite: over its ${SUITE_LIMIT_S} s limit; stopping`);
  platform?.killAll();
  privateInfra?.killAll();
  privateInfra?.removeDir();
  process.exit(2);
}, SUITE_LIMIT_S * 1000);
watchdog.unref();
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    platform?.killAll();
    privateInfra?.killAll();
    privateInfra?.removeDir();
    process.exit(130);
  });
}

let code = 1;
try {
  code = await main();
} catch (err) {
  console.error(err);
} finally {
  platform?.killAll();
  if (privateInfra) await privateInfra.destroy().catch(() => privateInfra?.killAll());
}
process.exit(code);
