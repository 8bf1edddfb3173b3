/**
 * The usage log store at size (issue 27): seeds realistic log rows straight into the store (the
 * day partitions, their read model and the dashboard's buckets, built in memory and inserted in
 * bulk, not through the relay), then measures
 *  - the logs consumer's ingest rate (usage events through Kafka into the store, with the seeded
 *    rows present), and
 *  - every query of the console's log page and dashboard, through the logs use cases (what the
 *    gateway's /api/log and /api/data call over gRPC): each filter alone and combined, page sizes
 *    10 and 100, page 1 and a deep page, the stat, the dashboard over a day, a week and a month.
 *
 *   MONGO_URL=... KAFKA_BROKERS=... npx tsx bench/log-store.ts [rows=1000000] [events=20000]
 *
 * Rows are spread over the 30 days before now: 1,000 users (skewed: the first ones send most),
 * 8 models, 10 channels, 2 groups, token names per user; 95 % consumption, 4 % errors, 1 %
 * top-ups, admin and system logs. The database (`bench_log_store_<n>`) is dropped at the end.
 *
 * To compare code changes on the same stored rows: `KEEP_DB=1` keeps the database, `SEEDED=1`
 * reuses one a previous run kept (no seeding; each run's events add to it), `CLEANUP=0` skips
 * the 清除历史日志 pass (it deletes half of the rows), `QUERIES=0` the queries; `BATCH=<n>` sets
 * the consumer's largest batch, `FETCH_BYTES=<n>` the bytes a fetch brings of one partition.
 */

import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { mongo } from 'mongoose';
import { deadLetter, TOPICS } from '../proto/src/topics.ts';
import {
  connectMongo,
  createKafka,
  createLogger,
  createPublisher,
  ensureTopics,
  topicName,
} from '../services/common/src/index.ts';
import { logCleanup } from '../services/logs/src/data/log-cleanup.ts';
import { logCubingJob } from '../services/logs/src/data/log-cubing-job.ts';
import { logRepository } from '../services/logs/src/data/log-repository.ts';
import { bucketDocOf, dayIncrement } from '../services/logs/src/domain/day-buckets.ts';
import {
  BLOCK,
  blockId,
  dayOf,
  dirId,
  groupsOf,
  hourBounds,
  hourIncrement,
  type Indexable,
  posKey,
  storedEntry,
} from '../services/logs/src/domain/log-index.ts';
import { classOf, indexCollection, rowsCollection } from '../services/logs/src/domain/log-partitions.ts';
import type { LogDoc } from '../services/logs/src/domain/log-record.ts';
import { logsService } from '../services/logs/src/domain/logs-service.ts';
import { runEventConsumers } from '../services/logs/src/transport/kafka/event-consumer.ts';
import { drained, publishUsage, type TestUsage } from '../services/logs/test/support.ts';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const EVENTS = Number(process.argv[3] ?? 20_000);
const DAYS = 30;
const USERS = 1_000;
const MODELS = [
  'gpt-4o-mini',
  'gpt-4o',
  'claude-3-5-sonnet',
  'gemini-1.5-pro',
  'deepseek-chat',
  'o1-mini',
  'qwen-max',
  'glm-4',
];
const NOW = Math.floor(Date.now() / 1000);
const logger = createLogger('bench-log-store', process.env.LOG_LEVEL ?? 'warn');

/** A deterministic pseudo-random stream (xorshift), so runs seed the same rows. */
let seed = 2463534242;
const rnd = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4294967296;
};
const skewed = (n: number) => Math.floor(n * rnd() ** 2.5);

function row(id: number, at: number): LogDoc & { _id: string } {
  const user = 1 + skewed(USERS);
  const r = rnd();
  const type = r < 0.95 ? 2 : r < 0.99 ? 5 : r < 0.995 ? 1 : r < 0.998 ? 3 : 4;
  const usage = type === 2 || type === 5;
  const prompt = usage ? 20 + Math.floor(rnd() * 2_000) : 0;
  const completion = type === 2 ? Math.floor(rnd() * 800) : 0;
  const eventId = `seed-${id}`;
  return {
    _id: eventId,
    id,
    event_id: eventId,
    created_at: at,
    type,
    channel: usage ? 1 + skewed(10) : 0,
    user_id: user,
    username: `user${user}`,
    token_id: usage ? user * 10 + (id % 2) : 0,
    token_name: usage ? (id % 5 ? 'default' : `key-${user}`) : '',
    model_name: usage ? (MODELS[skewed(MODELS.length)] as string) : '',
    use_time: usage ? 1 + Math.floor(rnd() * 20) : 0,
    is_stream: id % 3 === 0,
    prompt_tokens: prompt,
    completion_tokens: completion,
    tokens: prompt + completion,
    quota: type === 2 ? (prompt + completion * 2) * 3 : type === 1 ? 500_000 : 0,
    content: type === 5 ? 'upstream error: 502 Bad Gateway' : type === 2 ? '' : `top-up or admin change ${id}`,
    other: usage
      ? JSON.stringify({
          frt: 300 + (id % 900),
          model_ratio: 2.5,
          completion_ratio: 4,
          group_ratio: 1,
          model_price: -1,
        })
      : '',
    group: user % 5 ? 'default' : 'vip',
    ip: `10.0.${user % 250}.${id % 250}`,
    request_id: `req-${id}`,
    agg: type === 2 ? 'inline' : 'skip',
  };
}

/** Sets a dotted path (`h.3.n`) in a nested object. */
function setPath(doc: Record<string, unknown>, path: string, value: number) {
  const keys = path.split('.');
  let o = doc;
  for (const k of keys.slice(0, -1)) {
    if (!o[k]) o[k] = {};
    o = o[k] as Record<string, unknown>;
  }
  o[keys[keys.length - 1] as string] = value;
}

/** The read model of one day's rows (all new: positions from 0), as whole documents. */
function indexDocs(rows: Indexable[]): Record<string, unknown>[] {
  const docs: Record<string, unknown>[] = [];
  for (const [scope, hours] of groupsOf(rows)) {
    const dirs = new Map<number, Record<string, unknown>>();
    for (const [hour, list] of hours) {
      const day = dayOf(hour * 3600);
      let dir = dirs.get(day);
      if (!dir) {
        dir = { _id: dirId(scope, day), day };
        dirs.set(day, dir);
      }
      for (const [k, v] of Object.entries(hourIncrement(hour, list))) setPath(dir, k, v);
      const bounds = hourBounds(hour, list);
      for (const [k, v] of Object.entries({ ...bounds.min, ...bounds.max })) setPath(dir, k, v);
      for (let k = 0; k * BLOCK < list.length; k++) {
        const block: Record<string, unknown> = { _id: blockId(scope, hour, k), hour };
        list.slice(k * BLOCK, (k + 1) * BLOCK).forEach((l, i) => {
          block[posKey(k * BLOCK + i)] = storedEntry(l);
        });
        docs.push(block);
      }
    }
    docs.push(...dirs.values());
  }
  return docs;
}

async function insertAll(coll: mongo.Collection, docs: object[]) {
  for (let i = 0; i < docs.length; i += 2_000) {
    await coll.insertMany(docs.slice(i, i + 2_000) as never[], { ordered: false });
  }
}

const dbName = `bench_log_store_${ROWS}`;
// Commands monitored: the ingest's store commands are counted per kind (see commandCounts).
const mongoUrl = process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27027/';
const plain = await connectMongo(mongoUrl, dbName);
const conn = await plain.base
  .createConnection(mongoUrl, { dbName, maxPoolSize: 20, monitorCommands: true })
  .asPromise();
await plain.close();
const db = conn.db as mongo.Db;
const reuse =
  process.env.SEEDED === '1' && (await db.collection('log_index').findOne({ _id: 'meta' } as never)) !== null;
if (!reuse) await db.dropDatabase();

// 1. Seeding, a day at a time (oldest first), timed.
const perDay = Math.ceil(ROWS / DAYS);
const firstDay = dayOf(NOW) - DAYS + 1;
const t0 = performance.now();
let seeded = 0;
let indexDocCount = 0;
const names = new Map<string, number>();
for (let d = 0; d < DAYS && seeded < ROWS && !reuse; d++) {
  const day = firstDay + d;
  const n = Math.min(perDay, ROWS - seeded);
  // The last day ends now (the console's default range, today, holds its share).
  const span = day === dayOf(NOW) ? NOW - day * 86_400 : 86_400;
  const rows = Array.from({ length: n }, (_, i) => row(seeded + i + 1, day * 86_400 + Math.floor((i * span) / n)));
  const byClass = new Map<string, (typeof rows)[number][]>();
  for (const r of rows) {
    const c = rowsCollection(classOf(r.type), day);
    const list = byClass.get(c);
    if (list) list.push(r);
    else byClass.set(c, [r]);
  }
  for (const [c, list] of byClass) await insertAll(db.collection(c), list);
  const ix = indexDocs(rows);
  indexDocCount += ix.length;
  await insertAll(db.collection(indexCollection(day)), ix);
  // The dashboard's sums: per user and day, and everyone's (user 0) per day, each hour's per model.
  const consumed = rows.filter((r) => r.type === 2);
  const everyone = consumed.map((r) => ({ ...r, user_id: 0, username: '' }));
  const perDoc = new Map<string, LogDoc[]>();
  for (const r of [...consumed, ...everyone]) {
    const id = bucketDocOf(r);
    const list = perDoc.get(id);
    if (list) list.push(r);
    else perDoc.set(id, [r]);
  }
  await insertAll(
    db.collection('quota_data'),
    [...perDoc].map(([id, list]) => {
      const doc: Record<string, unknown> = { _id: id, user_id: list[0]?.user_id, username: list[0]?.username, day };
      for (const [k, v] of Object.entries(dayIncrement(list))) setPath(doc, k, v);
      return doc;
    }),
  );
  for (const r of rows) names.set(r.username, r.user_id);
  seeded += n;
  const s = (performance.now() - t0) / 1000;
  console.log(`seeded ${seeded.toLocaleString('en')} rows in ${s.toFixed(0)} s (${Math.round(seeded / s)} rows/s)`);
}
const seedS = (performance.now() - t0) / 1000;
const meta = db.collection('log_index');
if (!reuse) await meta.insertOne({ _id: 'meta', first: firstDay, migrated: true } as never);
if (!reuse) {
  await insertAll(
    meta,
    [...names].flatMap(([name, id]) => [
      { _id: `n|${name}`, ids: [id] },
      { _id: `i|${id}`, names: [name] },
    ]),
  );
  await db.collection('counters').insertOne({ _id: 'logs', seq: ROWS } as never);
  // Every hour's buckets are this version's: the dashboard reads them by _id.
  await db.collection('quota_data').insertOne({ _id: 'meta|dashboard', created_at: 0 } as never);
}
// A reused database's day documents record the offsets of an earlier run's topic (each run has
// its own): without this, the sums of this run's events, at lower offsets, would be skipped.
if (reuse) await db.collection('quota_data').updateMany({ applied: { $exists: true } }, { $unset: { applied: '' } });
const repo = logRepository(conn);
await repo.ensureIndexes();
await repo.buildLists();

/**
 * The store commands while counting, per kind: command and collection class (`log_index_<day>`
 * as `log_index_*`), with the statements they carry (an update's or an insert's list) and the
 * milliseconds they took (summed: commands run concurrently).
 */
const commandCounts = new Map<string, { commands: number; statements: number; ms: number }>();
let counting = false;
const started = new Map<number, string>();
const client = conn.getClient();
client.on('commandStarted', (e) => {
  if (!counting) return;
  const c = e.command as Record<string, unknown>;
  const name = e.commandName === 'getMore' ? c.collection : c[e.commandName];
  const coll = String(name ?? '').replace(/_\d{8}$/, '_*');
  const key = `${e.commandName} ${coll}`;
  const statements = Array.isArray(c.updates) ? c.updates.length : Array.isArray(c.documents) ? c.documents.length : 1;
  const k = commandCounts.get(key) ?? { commands: 0, statements: 0, ms: 0 };
  k.commands++;
  k.statements += statements;
  commandCounts.set(key, k);
  started.set(e.requestId, key);
});
client.on('commandSucceeded', (e) => {
  const key = started.get(e.requestId);
  if (key === undefined) return;
  started.delete(e.requestId);
  const k = commandCounts.get(key);
  if (k) k.ms += e.duration;
});
/** The shared FerretDB's CPU seconds (`FERRETDB_PID`: its pid; utime + stime from /proc). */
function ferretCpuS(): number | undefined {
  const pid = process.env.FERRETDB_PID;
  if (!pid) return undefined;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

// 2. Ingest: usage events through Kafka, with the seeded rows stored.
const kafka = createKafka(
  (process.env.KAFKA_BROKERS ?? '127.0.0.1:9094').split(','),
  `bench-log-store-${Date.now()}`,
  logger,
);
process.env.KAFKA_TOPIC_PREFIX = `bench-log-store-${Date.now()}.`;
const usageTopic = topicName(TOPICS.usage);
await ensureTopics(kafka, [
  usageTopic,
  topicName(TOPICS.audit),
  deadLetter(usageTopic),
  deadLetter(topicName(TOPICS.audit)),
]);
const publisher = await createPublisher(kafka);
const publishedAt = Date.now();
const events: TestUsage[] = Array.from({ length: EVENTS }, (_, i) => ({
  eventId: `ingest-${publishedAt}-${i}`,
  userId: 1 + skewed(USERS),
  modelName: MODELS[skewed(MODELS.length)] as string,
  promptTokens: 100 + (i % 500),
  completionTokens: i % 300,
  quota: 1_000 + i,
  // As they arrive at 1,000 requests/s, ending when they are published (recent logs: the
  // consumer writes their per-second counts too).
  occurredAtMs: publishedAt - EVENTS + i,
}));
await publishUsage(publisher, events);
const ti = performance.now();
const cpu0 = ferretCpuS();
counting = true;
const consumers = await runEventConsumers({
  kafka,
  publisher,
  logger,
  repo,
  flags: () => ({ logConsume: true, aggregate: true }),
  ...(process.env.BATCH ? { maxBatchSize: Number(process.env.BATCH) } : {}),
  ...(process.env.FETCH_BYTES ? { maxBytesPerPartition: Number(process.env.FETCH_BYTES) } : {}),
});
await drained(kafka, topicName('logs.events'), usageTopic, 600_000);
const ingestS = (performance.now() - ti) / 1000;
counting = false;
const cpu1 = ferretCpuS();
const ferretS = cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : undefined;
console.log(
  ferretS === undefined
    ? 'FerretDB CPU: not measured (set FERRETDB_PID)'
    : `FerretDB CPU: ${ferretS.toFixed(1)} s = ${Math.round(EVENTS / ferretS)} events per FerretDB CPU second`,
);
console.log('| store command during ingest | commands | statements | statements per 1,000 events | ms (summed) |');
console.log('|---|---|---|---|---|');
for (const [key, k] of [...commandCounts].sort((a, b) => b[1].statements - a[1].statements)) {
  console.log(
    `| ${key} | ${k.commands} | ${k.statements} | ${((k.statements * 1_000) / EVENTS).toFixed(1)} | ${Math.round(k.ms)} |`,
  );
}
console.log(
  `ingest: ${EVENTS} events in ${ingestS.toFixed(1)} s = ${Math.round(EVENTS / ingestS)} events/s (load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(', ')})`,
);
await consumers.stop();
await publisher.disconnect();

/**
 * The single insert into the same database, timed over and over while `work` runs (what the
 * consumer's writes wait behind it): p50, p99 and max.
 */
async function probed<T>(work: () => Promise<T>): Promise<{ result: T; probe: string }> {
  let running = true;
  const probeMs: number[] = [];
  const probe = (async () => {
    for (let i = 0; running; i++) {
      const t = performance.now();
      await db.collection('probe').insertOne({ i } as never);
      probeMs.push(performance.now() - t);
    }
  })();
  const result = await work().finally(() => {
    running = false;
  });
  await probe;
  probeMs.sort((a, b) => a - b);
  const pct = (p: number) => (probeMs[Math.min(probeMs.length - 1, Math.floor(probeMs.length * p))] ?? 0).toFixed(0);
  return { result, probe: `p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms, max ${pct(1)} ms (${probeMs.length} inserts)` };
}

// 3. The cubes' background job until it has nothing left (the seeded days and today's closed
// hours), as a service started on this store does, timed (CUBES=0 skips it).
let cubingReport = 'cubing job: not run (CUBES=0)';
if (process.env.CUBES !== '0') {
  const job = logCubingJob(repo.index, logger, 3_600_000);
  const tj = performance.now();
  const { result, probe } = await probed(async () => {
    const sum = { days: 0, hours: 0, segments: 0, passes: 0 };
    for (let more = true; more; ) {
      const r = await job.run();
      sum.days += r.days;
      sum.hours += r.hours;
      sum.segments += r.segments;
      sum.passes++;
      more = r.more;
    }
    return sum;
  });
  cubingReport =
    `cubing job: ${result.days} closed days, ${result.hours} closed hours and ${result.segments} segments of the current hour in ${((performance.now() - tj) / 1000).toFixed(1)} s ` +
    `(${result.passes} passes, load average ${(loadavg()[0] as number).toFixed(1)}); a single insert meanwhile: ${probe}`;
  console.log(cubingReport);
}

// 4. Queries, through the use cases the gateway calls.
const uc = logsService(repo);
const loadBefore = loadavg()[0] as number;
// Ranges end at the time the queries start, as an API call ending at now (the ingested events
// are later than NOW, the seeding's end).
const QNOW = Math.floor(Date.now() / 1000);
const today = Math.floor(QNOW / 86_400) * 86_400;
const day = { start: today, end: QNOW + 3_600 };
const week = { start: QNOW - 7 * 86_400, end: QNOW };
const month = { start: QNOW - 30 * 86_400, end: QNOW };
const heavy = { username: 'user1' };
const light = { username: 'user977' };
/** Per query: its name, the median of 3 runs, the first run (cubes computed by it), the answer. */
const results: [string, number, number, string][] = [];
async function time(name: string, fn: () => Promise<unknown>, note: (r: never) => string = () => '') {
  if (process.env.QUERIES === '0') return;
  const runs: number[] = [];
  let last: unknown;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    last = await fn();
    runs.push(performance.now() - t);
  }
  const first = runs[0] as number;
  runs.sort((a, b) => a - b);
  results.push([name, runs[1] as number, first, note(last as never)]);
}
const total = (r: { total: number }) => `total ${r.total.toLocaleString('en')}`;
const filters: [string, Record<string, unknown>][] = [
  ['no filter', {}],
  ['type=1 (top-up)', { type: 1 }],
  ['type=2 (consumption)', { type: 2 }],
  ['type=3 (admin)', { type: 3 }],
  ['type=4 (system)', { type: 4 }],
  ['type=5 (error)', { type: 5 }],
  ['username (heaviest user)', heavy],
  ['username (light user)', light],
  ['model', { model_name: 'gpt-4o' }],
  ['token name', { token_name: 'default' }],
  ['channel', { channel: 3 }],
  ['group', { group: 'vip' }],
  ['username + model', { ...heavy, model_name: 'gpt-4o' }],
  ['username + type=2', { ...heavy, type: 2 }],
  ['model + channel + type=2', { model_name: 'gpt-4o-mini', channel: 1, type: 2 }],
  ['group + token name + type=5', { group: 'vip', token_name: 'default', type: 5 }],
];
for (const [name, f] of filters) {
  for (const [page, size] of [
    [1, 10],
    [1, 100],
    [100, 10],
    [20, 100],
  ] as const) {
    await time(`page, today, ${name}, page ${page} of ${size}`, () => uc.query({ ...day, ...f }, page, size), total);
  }
}
// Every filter combined with another over 30 days (each alone lists far more than they share).
const combined: [string, Record<string, unknown>][] = [
  ['model + channel', { model_name: 'gpt-4o-mini', channel: 1 }],
  ['group + token name', { group: 'vip', token_name: 'default' }],
  ['username + token name + type=5', { ...heavy, token_name: 'default', type: 5 }],
  ['self (user_id) + model + group', { user_id: 1, model_name: 'gpt-4o', group: 'default' }],
];
for (const [name, f] of [
  ...filters.filter(([n]) => /no filter|username \(heaviest|model$|type=5|\+/.test(n)),
  ...combined,
]) {
  await time(`page, 30 days, ${name}, page 1 of 100`, () => uc.query({ ...month, ...f }, 1, 100), total);
  if (name.includes('+')) {
    await time(`page, 30 days, ${name}, page 20 of 100`, () => uc.query({ ...month, ...f }, 20, 100), total);
  }
}
const stat = (r: { quota: number; rpm: number; tpm: number }) => `quota ${r.quota}, rpm ${r.rpm}, tpm ${r.tpm}`;
await time('stat, today, everyone', () => uc.stat({ ...day }), stat);
await time('stat, 30 days, everyone', () => uc.stat({ ...month }), stat);
await time('stat, 30 days, heaviest user (username)', () => uc.stat({ ...month, ...heavy }), stat);
await time('stat, 30 days, one user (self, user_id)', () => uc.stat({ ...month, user_id: 1 }), stat);
await time('stat, 7 days, model', () => uc.stat({ ...week, model_name: 'gpt-4o' }), stat);
await time('stat, 7 days, username + model', () => uc.stat({ ...week, ...heavy, model_name: 'gpt-4o' }), stat);
const rows = (r: unknown[]) => `${r.length.toLocaleString('en')} buckets`;
for (const [name, range] of [
  ['day', { start: NOW - 86_400, end: NOW }],
  ['week', week],
  ['month', month],
] as const) {
  await time(
    `dashboard, ${name}, everyone`,
    () => uc.dashboard({ userId: 0, username: '', start: range.start, end: range.end, self: false }),
    rows,
  );
  await time(
    `dashboard, ${name}, one user (self)`,
    () => uc.dashboard({ userId: 1, username: '', start: range.start, end: range.end, self: true }),
    rows,
  );
}

// 5. 清除历史日志 in the middle of the period: the answer, then the background pass, with a
// single write of the same database timed over and over while it runs (what the consumer waits).
async function cleanupPass(): Promise<string> {
  const cutAt = NOW - 15 * 86_400 + 43_210;
  const tc = performance.now();
  const cutCount = await uc.deleteBefore(cutAt);
  const answerMs = performance.now() - tc;
  const cleanup = logCleanup(repo, logger, () => ({ consume: 0, error: 0, system: 0 }));
  let cleaning = true;
  const probeMs: number[] = [];
  const probe = (async () => {
    for (let i = 0; cleaning; i++) {
      const t = performance.now();
      await db.collection('probe').insertOne({ i } as never);
      probeMs.push(performance.now() - t);
    }
  })();
  const tp = performance.now();
  const pass = await cleanup.run();
  const passS = (performance.now() - tp) / 1000;
  cleaning = false;
  await probe;
  probeMs.sort((a, b) => a - b);
  const pct = (p: number) => (probeMs[Math.min(probeMs.length - 1, Math.floor(probeMs.length * p))] ?? 0).toFixed(0);
  return (
    `清除历史日志 before day 15 + 12 h: answered in ${answerMs.toFixed(0)} ms (${cutCount.toLocaleString('en')} logs); ` +
    `background pass ${passS.toFixed(1)} s (${pass.droppedPartitions} partitions and ${pass.droppedIndexDays} days of lists dropped, ` +
    `${pass.deletedRows.toLocaleString('en')} rows of the cut day deleted by id); a single insert meanwhile: ` +
    `p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms, max ${pct(1)} ms (${probeMs.length} inserts)\n`
  );
}
const cleanupReport = process.env.CLEANUP === '0' ? '清除历史日志: not run (CLEANUP=0)\n' : await cleanupPass();

const stored = (await db.collections()).filter((c) => /^logs_/.test(c.collectionName)).length;
const seededBy = reuse ? 'seeded by an earlier run' : `${indexDocCount.toLocaleString('en')} read-model documents`;
console.log(`\n## Log store at ${ROWS.toLocaleString('en')} seeded rows (${stored} day partitions, ${seededBy})\n`);
console.log(
  reuse
    ? 'seeding: reused (SEEDED=1), not timed'
    : `seeding: ${seedS.toFixed(0)} s (${Math.round(ROWS / seedS).toLocaleString('en')} rows/s; 10,000,000 would take about ${Math.round(10_000_000 / (ROWS / seedS) / 60)} min)`,
);
console.log(
  `ingest: ${EVENTS.toLocaleString('en')} usage events through Kafka in ${ingestS.toFixed(1)} s = ${Math.round(EVENTS / ingestS).toLocaleString('en')} events/s\n`,
);
console.log(cleanupReport);
console.log(`${cubingReport}\n`);
console.log(
  `queries at load average ${loadBefore.toFixed(1)} (start) to ${(loadavg()[0] as number).toFixed(1)} (end)\n`,
);
console.log('| query | ms (median of 3) | first run, ms | answer |');
console.log('|---|---|---|---|');
for (const [name, ms, first, note] of results) {
  console.log(`| ${name} | ${ms.toFixed(0)} | ${first.toFixed(0)} | ${note} |`);
}
const slow = results.filter(([, ms]) => ms >= 1_000);
console.log(
  `\n${results.length} queries, ${slow.length} at 1 s or more; slowest ${Math.max(...results.map(([, ms]) => ms)).toFixed(0)} ms`,
);
if (process.env.KEEP_DB !== '1') await db.dropDatabase();
await conn.close();
process.exit(0);
