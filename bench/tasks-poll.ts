/**
 * The task pollers under load: N unfinished video tasks (Kling, channel type 50) spread over
 * several fake Kling upstreams, followed by two tasks-service replicas (separate OS processes on
 * one database) that claim due tasks from the Redis schedule (the claim is the lease) and write to
 * Mongo only when a poll changes a task. Services run as processes (bench/platform.ts) against the
 * real MONGO_URL / KAFKA_BROKERS / REDIS_URL servers.
 *
 * Phases: submit N tasks through the real API (each charged: pre-consume + charge log); follow
 * them for a window while they stay unfinished (the fakes log every query per task); then let
 * every task end (10 % fail) and wait until all are final and billed. Printed (Markdown, for
 * docs/benchmarks.md):
 * - sweep: after the submits, how long until every task was polled again;
 * - poll gaps per task in the window (p50/p95/p99, share within the interval +-20 %), gaps under
 *   half the interval (a task polled twice at once would show here), polls per interval of the
 *   window, Mongo writes of the pollers (the tasks' version counter `polls`) in the window;
 * - CPU per poll of the two replicas (user + system, /proc);
 * - writes per task over its life: a Kling task changes at most twice (processing, then final), so
 *   more than two writes would be a result applied twice;
 * - money: per user, wallet change = succeeded x price, used quota = succeeded x price, no hold
 *   left, one charge log per task and one refund log per failed task.
 *
 *   npx tsx bench/tasks-poll.ts [--tasks=10000] [--upstreams=4] [--users=10] [--interval=30000]
 *     [--window=90000] [--batch=1000] [--concurrency=32]
 * Exit 1 when an invariant fails.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type FakeKling, startFakeKling } from '@aigw/testkit/fakes';
import { clientsFor, createChannel, setOption, userWithToken } from '@aigw/testkit/harness';
import { freePort } from '../deploy/local/stack/in-process.ts';
import { nodeFlagsOf } from '../deploy/local/stack/services.ts';
import { connectMongo, connectRedis } from '../services/common/src/index.ts';
import { dueSchedules } from '../services/tasks/src/data/due-schedule.ts';
import { countLogRows } from './log-rows.ts';
import { cpuMs, type Platform, sleep, startPlatform, waitReady } from './platform.ts';

const arg = (name: string, d: number) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split('=')[1]) : d;
};
const TASKS = arg('tasks', 10_000);
const UPSTREAMS = arg('upstreams', 4);
const USERS = arg('users', 10);
const INTERVAL = arg('interval', 30_000);
const WINDOW = arg('window', 90_000);
const BATCH = arg('batch', 1_000);
const CONCURRENCY = arg('concurrency', 32);
const MODEL = 'kling-v1';
// 0.002 $ per second x 5 s x 500,000 = 5,000 per task.
const PRICE = 5_000;
const ROOT = resolve(import.meta.dirname, '..');

/** The local FerretDB server's pid (read from /proc; its CPU is where the pollers' writes go). */
function ferretPid(port: string): number | undefined {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() !== 'ferretdb') continue;
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(`:${port}`)) return Number(d);
    } catch {
      // gone
    }
  }
  return undefined;
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};

async function main() {
  const run = randomBytes(3).toString('hex');
  const logDir = mkdtempSync(join(tmpdir(), 'aigw-tpb-'));
  const fakes: FakeKling[] = [];
  for (let i = 0; i < UPSTREAMS; i++) {
    fakes.push(
      await startFakeKling({ accessKey: `ak-${i}`, secretKey: `sk-${i}`, stepMs: 1_000, steps: 2, log: true }),
    );
  }
  const taskEnv = {
    TASKS_POLL_INTERVAL_MS: String(INTERVAL),
    TASKS_POLL_TICK_MS: '500',
    TASKS_POLL_BATCH: String(BATCH),
    TASKS_LEASE_MS: '60000',
    // Longer than the run: no task ends by timeout.
    TASKS_TIMEOUT_MS: String(60 * 60 * 1000),
  };
  const pf: Platform = await startPlatform({
    tag: 'tpb',
    run,
    services: ['users', 'channels', 'billing', 'logs', 'tasks'],
    logDir,
    serviceEnv: { tasks: taskEnv },
  });
  let second: ChildProcess | undefined;
  let failed = false;
  const check = (ok: boolean, what: string) => {
    console.log(`- ${ok ? 'OK' : 'FAILED'}: ${what}`);
    if (!ok) failed = true;
  };
  const mongoUrl = pf.stack.env.MONGO_URL as string;
  const tasksDb = await connectMongo(mongoUrl, pf.database('tasks'));
  const logsDb = await connectMongo(mongoUrl, pf.database('logs'));
  const billingDb = await connectMongo(mongoUrl, pf.database('billing'));
  try {
    // The second replica: the same environment and database, its own ports.
    const ports = { http: await freePort(), grpc: await freePort(), metrics: await freePort() };
    second = spawn(process.execPath, [...nodeFlagsOf('tasks'), '--import', 'tsx', 'services/tasks/src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...pf.stack.env,
        ...taskEnv,
        SERVICE_NAME: 'tasks',
        HTTP_PORT: String(ports.http),
        METRICS_PORT: String(ports.metrics),
        GRPC_PORT: String(ports.grpc),
        MONGO_DB: pf.database('tasks'),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitReady(ports.metrics);
    const replicas = [pf.proc('tasks').child, second];

    const s = clientsFor(pf.stack);
    await setOption(s, 'ModelPrice', JSON.stringify({ [MODEL]: 0.002 }));
    const channelIds: number[] = [];
    for (const [i, f] of fakes.entries()) {
      channelIds.push(await createChannel(s, { type: 50, baseUrl: f.url, key: `ak-${i}|sk-${i}`, models: MODEL }));
    }
    const users: Awaited<ReturnType<typeof userWithToken>>[] = [];
    for (let i = 0; i < USERS; i++) users.push(await userWithToken(s, { quota: 1_000_000_000 }));
    console.log(`# Task pollers: ${TASKS} tasks, ${UPSTREAMS} upstreams, 2 replicas (${new Date().toISOString()})`);
    console.log('');
    console.log(
      `Settings: poll interval ${INTERVAL} ms, tick 500 ms, batch ${BATCH} per tick and replica, ${USERS} users, submit concurrency ${CONCURRENCY}.`,
    );
    console.log('');

    // Seed: each task reserved in billing (WalletService.PreConsume, as a submit does), created
    // at its fake upstream and stored as the submit stores it. (Submitting 10,000 through the
    // API reached 3/s on this machine under load: the benchmark is about the pollers.)
    const t0 = Date.now();
    const tokenOf = new Map(users.map((u) => [u.userId, u.tokenId]));
    const fails = new Map<number, number>();
    const oks = new Map<number, number>();
    const docs: Record<string, unknown>[] = [];
    let next = 0;
    const seedOne = async () => {
      while (next < TASKS) {
        const i = next++;
        const u = users[i % USERS] as (typeof users)[number];
        const fail = i % 10 === 0;
        const upstream = i % UPSTREAMS;
        // "never": processing until the window ends (finishAt), then succeed or fail.
        const prompt = fail ? `never fail-me ${i}` : `never task ${i}`;
        const requestId = `kling:bench-${run}-${i}`;
        // Idempotent by request id: a retry after a deadline reserves nothing twice.
        for (let attempt = 1; ; attempt++) {
          try {
            await s.wallet.preConsume({ requestId, userId: u.userId, tokenId: u.tokenId, amount: PRICE });
            break;
          } catch (err) {
            if (attempt >= 5) throw err;
            await sleep(500);
          }
        }
        const taskId = (fakes[upstream] as FakeKling).create('text2video', {
          model_name: MODEL,
          prompt,
          duration: '5',
        });
        const m = fail ? fails : oks;
        m.set(i % USERS, (m.get(i % USERS) ?? 0) + 1);
        const now = Date.now();
        docs.push({
          _id: 1_000_000 + i,
          id: 1_000_000 + i,
          status: 'SUBMITTED',
          progress: '10%',
          data: '',
          user_id: u.userId,
          username: u.username,
          token_id: tokenOf.get(u.userId),
          token_name: 'test-token',
          group: 'default',
          channel_id: channelIds[upstream],
          platform: 'kling',
          action: 'VIDEO',
          task_id: taskId,
          fail_reason: '',
          created_at: Math.floor(now / 1000),
          submit_time: Math.floor(now / 1000),
          start_time: 0,
          finish_time: 0,
          submitted_ms: now,
          properties: JSON.stringify({ kind: 'text2video', model: MODEL, duration: '5', mode: '', prompt }),
          quota: PRICE,
          model: MODEL,
          model_price: 0.002,
          group_ratio: 1,
          request_id: requestId,
          billing: 'held',
          final: false,
          notify_hook: '',
          // Spread over one interval, as tasks submitted over time would be.
          next_poll_at: now + Math.floor((i / TASKS) * INTERVAL),
          lease_until: 0,
          lease_owner: '',
          polls: 0,
          updated_at: now,
        });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, seedOne));
    const reserved = Date.now();
    const col = tasksDb.collection('tasks');
    for (let k = 0; k < docs.length; k += 1_000) await col.insertMany(docs.slice(k, k + 1_000) as never[]);
    // And scheduled the way a submit schedules it (the Redis poll schedule, due-schedule.ts).
    const redis = await connectRedis(pf.stack.env.REDIS_URL as string);
    const kling = dueSchedules(redis, pf.database('tasks'))('kling');
    for (const d of docs) await kling.schedule([d._id as number], d.next_poll_at as number);
    await redis.quit();
    const submitted = Date.now();
    console.log(
      `Seeded ${docs.length} tasks: reserved in ${((reserved - t0) / 1000).toFixed(1)} s, stored in ${((submitted - reserved) / 1000).toFixed(1)} s.`,
    );

    // The window: tasks stay unfinished; the fakes log every query.
    const ferret = ferretPid(new URL(mongoUrl).port);
    const f0 = cpuMs(ferret);
    const cpu0 = replicas.map((c) => cpuMs(c.pid));
    const q0 = fakes.reduce((n, f) => n + f.queries, 0);
    const writes = async () =>
      ((await col.aggregate([{ $group: { _id: null, n: { $sum: '$polls' } } }]).toArray())[0]?.n as number) ?? 0;
    const w0 = await writes();
    const load0 = loadavg();
    await sleep(WINDOW);
    const load1 = loadavg();
    const end = Date.now();
    const cpu1 = replicas.map((c) => cpuMs(c.pid));
    const f1 = cpuMs(ferret);
    const polls = fakes.reduce((n, f) => n + f.queries, 0) - q0;
    const w1 = await writes();
    // Polls per interval of the window (the first holds the change writes of processing tasks).
    const slices = Array.from({ length: Math.ceil(WINDOW / INTERVAL) }, () => 0);
    // Sweep: first query after the submits ended, per task.
    const firstAfter: number[] = [];
    const gaps: number[] = [];
    const later: number[] = [];
    let never = 0;
    for (const f of fakes) {
      for (const times of f.queryLog.values()) {
        const after = times.find((t) => t >= submitted);
        if (after === undefined || after > end) never += 1;
        else firstAfter.push(after - submitted);
        const inWindow = times.filter((t) => t >= submitted && t <= end);
        for (const t of inWindow) {
          const k = Math.min(slices.length - 1, Math.floor((t - submitted) / INTERVAL));
          slices[k] = (slices[k] as number) + 1;
        }
        for (let i = 1; i < inWindow.length; i++) {
          const gap = (inWindow[i] as number) - (inWindow[i - 1] as number);
          gaps.push(gap);
          // After the first interval: the first sweep writes every task once (processing).
          if ((inWindow[i - 1] as number) >= submitted + INTERVAL) later.push(gap);
        }
      }
    }
    const within = gaps.filter((g) => Math.abs(g - INTERVAL) <= INTERVAL * 0.2).length;
    const withinLater = later.filter((g) => Math.abs(g - INTERVAL) <= INTERVAL * 0.2).length;
    const short = gaps.filter((g) => g < INTERVAL / 2).length;
    const cpu = cpu1.reduce((a, b, i) => a + (b - (cpu0[i] as number)), 0);
    console.log('');
    console.log('| figure | value |');
    console.log('|---|---|');
    console.log(
      `| sweep: every task polled again after the submits | ${(pct(firstAfter, 100) / 1000).toFixed(1)} s (${never} not polled in the window) |`,
    );
    console.log(
      `| polls in the ${WINDOW / 1000} s window | ${polls} (${(polls / (WINDOW / 1000)).toFixed(0)}/s; needed ${(TASKS / (INTERVAL / 1000)).toFixed(0)}/s) |`,
    );
    console.log(
      `| polls per ${INTERVAL / 1000} s of the window | ${slices.map((n) => `${n} (${(n / (INTERVAL / 1000)).toFixed(0)}/s)`).join(', ')} |`,
    );
    console.log(
      `| Mongo writes of the pollers in the window (changed polls) | ${w1 - w0} (${((w1 - w0) / Math.max(1, polls)).toFixed(3)} per poll) |`,
    );
    console.log(
      `| gap between polls of a task, p50 / p95 / p99 | ${pct(gaps, 50)} / ${pct(gaps, 95)} / ${pct(gaps, 99)} ms |`,
    );
    console.log(
      `| gaps within the interval +-20 % | ${((100 * within) / Math.max(1, gaps.length)).toFixed(1)} % of ${gaps.length} |`,
    );
    console.log(
      `| the same for gaps that start after the first interval (p50 / p99 ${pct(later, 50)} / ${pct(later, 99)} ms) | ${((100 * withinLater) / Math.max(1, later.length)).toFixed(1)} % of ${later.length} |`,
    );
    console.log(`| gaps under half the interval (double polls) | ${short} |`);
    console.log(
      `| CPU of the database server (FerretDB, shared with other sessions) over the window | ${Number.isNaN(f1 - f0) ? 'n/a' : `${((f1 - f0) / 1000).toFixed(1)} s`} |`,
    );
    console.log(
      `| CPU of the two replicas per poll | ${(cpu / Math.max(1, polls)).toFixed(2)} ms (${(cpu / 1000).toFixed(1)} s over the window) |`,
    );
    console.log(
      `| machine load average (1/5/15 min) at the window's start / end | ${load0.map((x) => x.toFixed(2)).join(' ')} / ${load1.map((x) => x.toFixed(2)).join(' ')} |`,
    );

    // Let every task end; wait until all are final and billed.
    const tEnd = Date.now();
    for (const f of fakes) f.finishAt = tEnd;
    for (;;) {
      const open = await col.countDocuments({
        $or: [{ final: false }, { billing: { $in: ['held', 'settle', 'refund'] } }],
      });
      if (open === 0 || Date.now() - tEnd > 15 * 60_000) break;
      await sleep(2_000);
    }
    const doneIn = Date.now() - tEnd;
    console.log(`| all tasks final and billed after they ended upstream | ${(doneIn / 1000).toFixed(1)} s |`);
    console.log('');

    // Invariants.
    const rows = await col
      .find({}, { projection: { task_id: 1, polls: 1, status: 1, billing: 1, pollers: 1 } })
      .toArray();
    const queried = new Map<string, number>();
    for (const f of fakes) for (const [id, times] of f.queryLog) queried.set(id, times.length);
    // Processing, then final: a Kling task changes at most twice after its submit.
    const tooMany = rows.filter((d) => (d.polls as number) > 2 || (d.polls as number) < 1).length;
    const moreThanQueried = rows.filter((d) => (d.polls as number) > (queried.get(d.task_id as string) ?? 0)).length;
    const totalWrites = rows.reduce((n, d) => n + (d.polls as number), 0);
    const totalQueries = [...queried.values()].reduce((a, b) => a + b, 0);
    const both = rows.filter((d) => ((d.pollers as string[]) ?? []).length > 1).length;
    check(rows.length === TASKS, `${rows.length} task rows for ${TASKS} tasks`);
    check(
      tooMany === 0,
      `every task written once or twice by the pollers (${tooMany} outside; a double apply would be a third)`,
    );
    check(moreThanQueried === 0, `no task written more often than queried (${moreThanQueried})`);
    console.log(`- over the run: ${totalQueries} upstream queries, ${totalWrites} Mongo writes by the pollers`);
    check(short === 0, `no task polled twice within half an interval (${short})`);
    console.log(`- tasks polled by both replicas over their life: ${both} of ${rows.length}`);
    const succeeded = rows.filter((d) => d.status === 'SUCCESS' && d.billing === 'settled').length;
    const refunded = rows.filter((d) => d.status === 'FAILURE' && d.billing === 'refunded').length;
    check(succeeded + refunded === rows.length, `${succeeded} settled + ${refunded} refunded = ${rows.length}`);

    // Money: the logs consumer and the wallet catch up.
    let refunds = 0;
    for (let i = 0; i < 60; i++) {
      refunds = await countLogRows(logsDb, [6], {});
      if (refunds >= refunded) break;
      await sleep(2_000);
    }
    // (Seeded tasks have no charge log: that is the submit's, not the poller's.)
    check(refunds === refunded, `${refunds} refund logs (type 6) for ${refunded} failed tasks`);
    let exact = 0;
    for (const [i, u] of users.entries()) {
      const w = (await s.wallet.getWallet({ userId: u.userId })).wallet;
      const ok = oks.get(i) ?? 0;
      if (w?.quota === 1_000_000_000 - ok * PRICE && w?.usedQuota === ok * PRICE) exact += 1;
      else
        console.log(
          `  user ${u.userId}: quota ${w?.quota}, used ${w?.usedQuota}, succeeded ${ok}, failed ${fails.get(i) ?? 0}`,
        );
    }
    check(exact === USERS, `${exact} of ${USERS} wallets = start - succeeded x price, used = succeeded x price`);
    let holdsLeft = 0;
    // By `_id` only (the wallet head, then entries after it: the head may lag, never leads). A
    // filter on user_id sorted by seq scans every entry, each carrying its holds (hung for minutes).
    type Entry = { _id: string; state?: { holds?: object } };
    const entries = billingDb.collection<Entry>('ledger_entries');
    for (const u of users) {
      const head = await billingDb.collection<{ _id: number; seq: number }>('wallets').findOne({ _id: u.userId });
      let seq = head?.seq ?? 0;
      let last: Entry | null = await entries.findOne({ _id: `${u.userId}:${seq}` });
      for (;;) {
        const next = await entries.findOne({ _id: `${u.userId}:${seq + 1}` });
        if (!next) break;
        last = next;
        seq += 1;
      }
      holdsLeft += Object.keys(last?.state?.holds ?? {}).length;
    }
    check(holdsLeft === 0, `no reservation left in billing (${holdsLeft})`);
  } finally {
    second?.kill('SIGTERM');
    await Promise.all([tasksDb.close(), logsDb.close(), billingDb.close()]);
    await pf.stop();
    for (const f of fakes) await f.close();
    console.log(`\nService logs: ${logDir}`);
  }
  // Let stdout drain into a pipe before exiting (gRPC channels would keep the process alive).
  await new Promise<void>((r) => process.stdout.write('', () => r()));
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
