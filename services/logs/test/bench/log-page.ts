/**
 * The admin log page at 100,000 logs (a script, not a test): logs written through the consumer's
 * own path (ingestUsage / ingestAudit, batches of 2,000), then the page's queries timed through
 * the collection scan (as before the lists) and through the lists, on a database of its own.
 *
 *   MONGO_URL=mongodb://127.0.0.1:27027/ npx tsx services/logs/test/bench/log-page.ts [--rows=100000] [--users=50] [--scan=1] [--write=20000]
 *
 * First the write cost of the lists: `--write` logs through the consumer path with and without
 * the lists (each on a database of its own), then the 100,000 with them and the queries.
 *
 * The logs span the 24 hours before now (four in five consumption, the rest errors, top-ups and
 * admin changes), so "today" as the page asks for it holds a part of them.
 */
import { performance } from 'node:perf_hooks';
import { connectMongo } from '@aigw/common';
import { AuditEventSchema, UsageEventSchema } from '@aigw/proto/events/v1/events';
import { create } from '@bufbuild/protobuf';
import { type LogQuery, logRepository } from '../../src/data/log-repository.ts';
import { type IngestRepo, ingestAudit, ingestUsage } from '../../src/domain/ingest-events.ts';

const arg = (name: string, dflt: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const ROWS = Number(arg('rows', '100000'));
const USERS = Number(arg('users', '50'));
const SCAN = arg('scan', '1') === '1';
const WRITE = Number(arg('write', '20000'));
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet', 'gemini-1.5-pro'];
const flags = { logConsume: true, aggregate: true };

const now = Math.floor(Date.now() / 1000);
const from = now - 24 * 3600;
const url = process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27027/';
const dbName = (what: string) => `bench_log_page_${what}_${Date.now().toString(36)}`;

/** Writes `rows` logs through the consumer path (ingestUsage / ingestAudit), batches of 2,000. */
async function write(repo: IngestRepo, rows: number): Promise<number> {
  const t0 = performance.now();
  const BATCH = 2_000;
  for (let i = 0; i < rows; i += BATCH) {
    const n = Math.min(BATCH, rows - i);
    const at = (j: number) => from + Math.floor(((i + j) * 24 * 3600) / rows);
    const usage = [];
    const audit = [];
    for (let j = 0; j < n; j++) {
      const k = i + j;
      const user = 1 + (k % USERS);
      if (k % 50 === 7) {
        audit.push({
          event: create(AuditEventSchema, {
            eventId: `a-${k}`,
            type: k % 100 === 7 ? 1 : 3,
            userId: user,
            username: `user${user}`,
            quotaDelta: 500_000,
            content: 'top-up',
            occurredAtMs: at(j) * 1000,
          }),
          partition: 0,
          offset: String(k),
        });
        continue;
      }
      const error = k % 20 === 3;
      usage.push({
        event: create(UsageEventSchema, {
          eventId: `u-${k}`,
          requestId: `r-${k}`,
          userId: user,
          username: `user${user}`,
          tokenId: user * 10 + (k % 3),
          tokenName: `token-${k % 3}`,
          modelName: MODELS[k % MODELS.length] as string,
          channelId: 1 + (k % 4),
          group: 'default',
          promptTokens: 20 + (k % 50),
          completionTokens: 5 + (k % 30),
          quota: error ? 0 : 150 + (k % 100),
          isStream: k % 2 === 0,
          useTimeMs: 1_100,
          occurredAtMs: at(j) * 1000,
          error,
          errorMessage: error ? 'upstream failed' : '',
          statusCode: error ? 502 : 0,
        }),
        partition: 0,
        offset: String(k),
      });
    }
    await ingestUsage(repo, usage, flags);
    if (audit.length) await ingestAudit(repo, audit);
  }
  return (performance.now() - t0) / 1000;
}

for (const withLists of [false, true]) {
  if (!WRITE) break;
  const c = await connectMongo(url, dbName(withLists ? 'w1' : 'w0'));
  const r = logRepository(c);
  await r.ensureIndexes();
  const repo: IngestRepo = withLists ? r : { ...r, indexBatch: async () => undefined };
  const s = await write(repo, WRITE);
  console.log(
    `write ${WRITE} logs ${withLists ? 'with' : 'without'} the lists: ${s.toFixed(1)} s (${Math.round(WRITE / s)} logs/s)`,
  );
  await c.dropDatabase().catch(() => undefined);
  await c.close();
}

if (ROWS === 0) process.exit(0);
const conn = await connectMongo(url, dbName('q'));
const lists = logRepository(conn);
const scan = logRepository(conn, { lists: false });
await lists.ensureIndexes();

try {
  // As at a service's first start on an empty database: nothing older to list.
  await lists.buildLists();
  await lists.buildDimensions();
  const writeS = await write(lists, ROWS);
  console.log(
    `${ROWS} logs written through the consumer path in ${writeS.toFixed(1)} s (${Math.round(ROWS / writeS)} logs/s)`,
  );
  const today = Math.floor(now / 86_400) * 86_400;
  const page: [string, LogQuery, number][] = [
    ['admin default: today, all types, page 1 of 10', { start: today, end: now + 3600 }, 1],
    ['admin: all time, page 1', {}, 1],
    ['admin: all time, page 500', {}, 500],
    ['admin: consumption only, page 1', { type: 2, start: today, end: now + 3600 }, 1],
    ['admin: a range cut mid-hour', { start: now - 5 * 3600 - 1_234, end: now - 3600 + 77 }, 1],
    ['self: one user, today', { user_id: 7, start: today, end: now + 3600 }, 1],
    ['self: one user, consumption, page 3', { user_id: 7, type: 2, start: today, end: now + 3600 }, 3],
    ['admin: a username (entries filtered)', { username: 'user9', start: today, end: now + 3600 }, 1],
    ['admin: a model (its scope)', { model_name: 'gpt-4o', start: today, end: now + 3600 }, 1],
    ['admin: a channel (its scope)', { channel: 3, start: today, end: now + 3600 }, 1],
    ['admin: a token name (its scope)', { token_name: 'token-1', start: today, end: now + 3600 }, 1],
    ['admin: a group, all time (its scope)', { group: 'default' }, 1],
    ['admin: a model and a channel (model scope, channel filtered)', { model_name: 'gpt-4o', channel: 1 }, 1],
    ['self: one user, a model (user scope, model filtered)', { user_id: 7, model_name: 'gpt-4o' }, 1],
  ];
  const time = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
    const t = performance.now();
    const r = await fn();
    return [r, performance.now() - t];
  };
  console.log('| query | lists: page | lists: stat | total | scan: page | scan: stat |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, q, p] of page) {
    const [r, pageMs] = await time(() => lists.find(q, p, 10));
    const [st, statMs] = await time(() => lists.stat(q, now));
    let scanPage = '-';
    let scanStat = '-';
    if (SCAN && name.startsWith('admin default')) {
      const [s, sMs] = await time(() => scan.find(q, p, 10));
      const [ss, ssMs] = await time(() => scan.stat(q, now));
      // Same total and the same logs (the scan orders by id, the lists by hour, then arrival).
      const ids = (items: { id: number }[]) => JSON.stringify(items.map((l) => l.id).sort());
      const same = s.total === r.total && ids(s.items) === ids(r.items);
      scanPage = `${(sMs / 1000).toFixed(1)} s (total ${s.total}${same ? ', same logs' : ', other logs'})`;
      scanStat = `${(ssMs / 1000).toFixed(1)} s${JSON.stringify(ss) === JSON.stringify(st) ? '' : ' (differs!)'}`;
    }
    console.log(
      `| ${name} | ${pageMs.toFixed(0)} ms | ${statMs.toFixed(0)} ms | ${r.total} | ${scanPage} | ${scanStat} |`,
    );
  }
} finally {
  await conn.dropDatabase().catch(() => undefined);
  await conn.close();
}
