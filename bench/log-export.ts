/**
 * The CSV export of logs at size (issue 25.6): the users, logs and gateway services as separate
 * processes (bench/platform.ts), rows seeded straight into the logs service's day partitions
 * (spread evenly over `days` days before now), then GET /api/log/export as root through the
 * gateway, read to the end as fast as the client can. The gateway's RSS is sampled every 50 ms
 * from /proc while the file streams: an export that held its rows would grow with them. One day
 * is exported first (rows/days rows), then the same day by a client that pauses after each
 * megabyte (the stream must wait for it, not buffer), then the whole window: the peaks compare.
 *
 *   MONGO_URL=... KAFKA_BROKERS=... REDIS_URL=... npx tsx bench/log-export.ts [rows=1000000] [days=10]
 *
 * The databases of the run are dropped at the end, unless `KEEP_DB=1`; `RUN=<id> SEEDED=1` reuses
 * the rows of a run kept that way (seeding a million rows takes minutes). `LOG_DIR=<dir>` keeps
 * each service's output there.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { connectMongo, createLogger } from '../services/common/src/index.ts';
import { DAY, dayOf, rowsCollection } from '../services/logs/src/domain/log-partitions.ts';
import { startPlatform } from './platform.ts';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const DAYS = Number(process.argv[3] ?? 10);
const NOW = Math.floor(Date.now() / 1000);
/** `CASES=day,slow,whole` (the default: all three) and `MAX_SECONDS` per export (default: no cap). */
const CASES = (process.env.CASES ?? 'day,slow,whole').split(',');
const MAX_SECONDS = Number(process.env.MAX_SECONDS ?? 24 * 3600);
const logger = createLogger('bench-log-export', 'warn');

/** Resident set size of a process (MB), from /proc. */
function rssMb(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return Number(line?.replace(/\D+/g, '') ?? Number.NaN) / 1024;
  } catch {
    return Number.NaN; // the process is gone (the export fails and says so)
  }
}

/** A consumption log like the relay's, with some Chinese and some text that needs quoting. */
function row(id: number, at: number) {
  const user = 1 + (id % 500);
  const prompt = 20 + (id % 1_900);
  const completion = id % 700;
  return {
    _id: `exp-${id}`,
    id,
    event_id: `exp-${id}`,
    created_at: at,
    type: 2,
    channel: 1 + (id % 10),
    user_id: user,
    username: `user${user}`,
    token_id: user * 10,
    token_name: id % 7 ? 'default' : '测试令牌, "quoted"',
    model_name: ['gpt-4o-mini', 'claude-3-5-sonnet', 'deepseek-chat'][id % 3],
    use_time: 1 + (id % 20),
    is_stream: id % 2 === 0,
    prompt_tokens: prompt,
    completion_tokens: completion,
    tokens: prompt + completion,
    quota: (prompt + completion * 2) * 3,
    content: id % 11 ? '' : '模型倍率 2.5，补全倍率 4',
    other: JSON.stringify({ frt: 300 + (id % 900), model_ratio: 2.5, completion_ratio: 4, group_ratio: 1 }),
    group: 'default',
    ip: `10.0.${user % 250}.${id % 250}`,
    request_id: `req-${id}`,
    agg: 'skip',
  };
}

async function seed(mongoUrl: string, db: string): Promise<void> {
  const conn = await connectMongo(mongoUrl, db, logger);
  const perDay = Math.ceil(ROWS / DAYS);
  const started = Date.now();
  let id = 0;
  for (let d = 0; d < DAYS && id < ROWS; d++) {
    const day = dayOf(NOW) - DAYS + 1 + d;
    const coll = conn.collection(rowsCollection('consume', day));
    const last = Math.min(ROWS, id + perDay);
    const n = last - id;
    const base = day * DAY;
    const span = d === DAYS - 1 ? Math.max(1, NOW - base - 60) : DAY;
    while (id < last) {
      const batch = [];
      for (let i = 0; i < 10_000 && id < last; i++, id++)
        batch.push(row(id + 1, base + Math.floor(((id % n) * span) / n)));
      await coll.insertMany(batch as never[], { ordered: false });
    }
  }
  console.log(`seeded ${ROWS} rows over ${DAYS} days in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await conn.close();
}

/** `pauseMs`: a slow client, pausing that long after each megabyte it reads. */
async function exportOnce(
  gatewayUrl: string,
  cookie: string,
  query: Record<string, string>,
  pid: number | undefined,
  pauseMs = 0,
) {
  const url = new URL('/api/log/export', gatewayUrl);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const startRss = rssMb(pid);
  let peak = startRss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 50);
  const started = performance.now();
  const stop = new AbortController();
  // A loaded machine may not read a million rows in the time there is: stop, and say so.
  const cap = setTimeout(() => stop.abort(), MAX_SECONDS * 1000);
  const res = await fetch(url, { headers: { cookie, 'New-Api-User': '1' }, signal: stop.signal });
  if (!res.ok || !res.body) throw new Error(`export answered ${res.status}`);
  let bytes = 0;
  let lines = 0;
  let nextPause = 1e6;
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      if (pauseMs && bytes >= nextPause) {
        nextPause += 1e6;
        // The slow client is the scenario: it stops reading for a while.
        await new Promise((r) => setTimeout(r, pauseMs));
      }
      for (const b of chunk) if (b === 10) lines++;
    }
  } catch (err) {
    if (!stop.signal.aborted) throw err;
  }
  clearTimeout(cap);
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, rssMb(pid));
  return { rows: lines - 1, seconds, mb: bytes / 1e6, startRss, peak, stopped: stop.signal.aborted };
}

async function main() {
  const run = process.env.RUN ?? Date.now().toString(36);
  const mongoUrl = process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27027/';
  const logDir = process.env.LOG_DIR;
  const p = await startPlatform({ tag: 'lex', run, services: ['users', 'logs', 'gateway'], logDir });
  try {
    if (process.env.SEEDED !== '1') await seed(mongoUrl, p.database('logs'));
    const login = await fetch(`${p.stack.gatewayUrl}/api/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root', password: '123456' }),
    });
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const pid = p.proc('gateway').child.pid;
    const start = String(NOW - DAYS * DAY);
    const today = dayOf(NOW) * DAY;
    console.log(
      `load average before: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const results: [string, Awaited<ReturnType<typeof exportOnce>>][] = [];
    const run = async (name: string, query: Record<string, string>, pauseMs = 0) => {
      const r = await exportOnce(p.stack.gatewayUrl, cookie, query, pid, pauseMs);
      results.push([name, r]);
      console.log(
        `${name}: ${r.rows} rows, ${r.mb.toFixed(1)} MB in ${r.seconds.toFixed(1)} s (${Math.round(r.rows / r.seconds)} rows/s)${r.stopped ? ' (stopped at MAX_SECONDS)' : ''}; gateway RSS ${r.startRss.toFixed(0)} MB at start, peak ${r.peak.toFixed(0)} MB`,
      );
      return r;
    };
    if (CASES.includes('day')) await run('one day', { start_timestamp: String(today) });
    if (CASES.includes('slow'))
      await run('one day, a client pausing 1 s per MB', { start_timestamp: String(today) }, 1_000);
    const whole = CASES.includes('whole') ? await run('whole window', { start_timestamp: start }) : undefined;
    console.log(
      `load average after: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    if (whole && !whole.stopped && whole.rows !== ROWS) throw new Error(`exported ${whole.rows} rows, seeded ${ROWS}`);
  } finally {
    await p.stop();
    if (process.env.KEEP_DB !== '1') {
      const conn = await connectMongo(mongoUrl, p.database('logs'), logger);
      for (const svc of ['users', 'logs', 'gateway'] as const) await conn.useDb(p.database(svc)).dropDatabase();
      await conn.close();
    }
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
