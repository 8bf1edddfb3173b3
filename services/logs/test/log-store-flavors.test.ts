/**
 * The two log stores (domain/log-store.ts) agree: the same events written through the ferretdb
 * flavor (day partitions and the list read model) and the mongodb flavor (the rows in one
 * collection, ordinary queries) answer the same pages, totals, stats, exports and dashboards,
 * before and after a history cut and a retention pass. Only the MongoDB-compatible server is
 * started (the plain store runs on FerretDB too, only slower at scale).
 */
import { connectMongo, createLogger } from '@aigw/common';
import { uniqueName } from '@aigw/local-stack';
import { type AuditEvent, AuditEventSchema, type UsageEvent, UsageEventSchema } from '@aigw/proto/events/v1/events';
import { create } from '@bufbuild/protobuf';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogQuery } from '../src/data/log-filter.ts';
import { logRepository } from '../src/data/log-repository.ts';
import { openLogStore } from '../src/data/log-stores.ts';
import { plainFilter } from '../src/data/plain-log-store.ts';
import { ingestAudit, ingestUsage, type ReadEvent } from '../src/domain/ingest-events.ts';
import type { LogDoc } from '../src/domain/log-record.ts';
import type { LogStore } from '../src/domain/log-store.ts';

const logger = createLogger('logs-flavors-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const KEEP_ALL = { consume: 0, error: 0, system: 0 };
/** Two days of logs of late Nov 2026 (stats are asked at times then: rpm counts them). */
const DAY = Math.floor(Date.UTC(2026, 10, 22) / 86_400_000);
const T0 = DAY * 86_400 + 9 * 3600;
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet'];

function usage(i: number, at: number): UsageEvent {
  const user = 1 + (i % 4);
  const error = i % 11 === 0;
  return create(UsageEventSchema, {
    eventId: `u-${i}`,
    requestId: `r-${i}`,
    userId: user,
    username: `user${user}`,
    tokenId: user * 10 + (i % 2),
    tokenName: i % 2 ? 'ci' : 'default',
    modelName: MODELS[i % 3] as string,
    channelId: 1 + (i % 3),
    group: i % 4 ? 'default' : 'vip',
    promptTokens: 10 + (i % 9),
    completionTokens: 3 + (i % 5),
    quota: error ? 0 : 100 + i,
    useTimeMs: 700,
    occurredAtMs: at * 1000,
    error,
    errorMessage: error ? 'upstream failed' : '',
    statusCode: error ? 502 : 0,
  });
}

const audit = (i: number, at: number): AuditEvent =>
  create(AuditEventSchema, {
    eventId: `a-${i}`,
    type: i % 2 ? 1 : 3,
    userId: 1 + (i % 4),
    username: `user${1 + (i % 4)}`,
    quotaDelta: 1_000 + i,
    content: `top-up ${i}`,
    occurredAtMs: at * 1000,
  });

const read = <E>(events: E[], from: number): ReadEvent<E>[] =>
  events.map((event, i) => ({ event, partition: 0, offset: String(from + i) }));

/** The same deliveries to a store: batches over 20 hours of two days, a late log, hidden logs, a redelivery. */
async function feed(store: LogStore): Promise<void> {
  const on = { logConsume: true, aggregate: true };
  const at = (i: number) => T0 + i * 450;
  const events = Array.from({ length: 160 }, (_, i) => usage(i, at(i)));
  for (let i = 0; i < events.length; i += 80) {
    await ingestUsage(store, read(events.slice(i, i + 120), i), on);
    await ingestAudit(store, read([audit(i, at(i + 79)), audit(i + 1, at(i + 79))], i));
  }
  // A late log (an hour of the first batch, logged after the last) and hidden consumption logs.
  await ingestUsage(store, read([usage(900, T0 + 1_800)], 900), on);
  await ingestUsage(store, read([usage(901, at(150)), usage(902, at(151))], 901), { ...on, logConsume: false });
  // A redelivered batch (same offsets) and an event published twice (another offset).
  await ingestUsage(store, read(events.slice(80, 160), 80), on);
  await ingestUsage(store, read([events[7] as UsageEvent], 5_000), on);
}

const QUERIES: [string, LogQuery][] = [
  ['everything', {}],
  ['consumption', { type: 2 }],
  ['errors', { type: 5 }],
  ['top-ups', { type: 1 }],
  ['one user', { user_id: 3 }],
  ['a username', { username: 'user2' }],
  ['a token name', { token_name: 'ci' }],
  ['a model', { model_name: 'gpt-4o-mini' }],
  ['a channel', { channel: 3 }],
  ['a group', { group: 'vip' }],
  ['a user, a model, consumption', { user_id: 2, model_name: 'claude-3-5-sonnet', type: 2 }],
  ['a channel and a group over a cut range', { channel: 2, group: 'default', start: T0 + 5_000, end: T0 + 50_000 }],
  ['a range cut mid-hour', { start: T0 + 1_234, end: T0 + 3 * 3600 + 77 }],
  ['no such user', { username: 'nobody' }],
];

let ferretConn: Connection;
let plainConn: Connection;
let ferret: LogStore;
let plain: LogStore;

beforeAll(async () => {
  ferretConn = await connectMongo(process.env.MONGO_URL!, uniqueName('logs_ferret'));
  plainConn = await connectMongo(process.env.MONGO_URL!, uniqueName('logs_plain'));
  // The ferretdb flavor as the service opens it, but with the clock of the data (rpm, tpm).
  ferret = logRepository(ferretConn, { clock: () => 0 });
  plain = openLogStore(plainConn, 'mongodb');
  for (const store of [ferret, plain]) {
    await store.ensureIndexes();
    await store.adopt();
  }
  await Promise.all([feed(ferret), feed(plain)]);
}, 60_000);

afterAll(async () => {
  for (const c of [ferretConn, plainConn]) {
    await c?.dropDatabase().catch(() => undefined);
    await c?.close();
  }
});

const byId = (rows: LogDoc[]) => [...rows].sort((a, b) => a.id - b.id);

async function exported(store: LogStore, q: LogQuery): Promise<LogDoc[]> {
  const out: LogDoc[] = [];
  for await (const chunk of store.exportRows({ start: 1, ...q }, { chunk: 50, now: T0 + 2 * 86_400 })) {
    expect(chunk.length).toBeLessThanOrEqual(50);
    out.push(...chunk);
  }
  return out;
}

/** The queries named (the cleanup's checks ask half of them each: the first test asks them all). */
const some = (...names: string[]) => QUERIES.filter(([n]) => names.includes(n));

/** Each query's pages, totals and stat through both stores (the queries side by side). */
async function agree(queries: [string, LogQuery][], pages: [number, number][], now: number): Promise<number> {
  const counts = await Promise.all(
    queries.map(async ([name, q]) => {
      let listed = 0;
      for (const [page, size] of pages) {
        const [f, p] = await Promise.all([ferret.find(q, page, size), plain.find(q, page, size)]);
        expect(p.total, `${name}: total`).toBe(f.total);
        expect(p.items, `${name}: page ${page} of ${size}`).toEqual(f.items);
        listed += f.items.length;
      }
      const [f, p] = await Promise.all([ferret.stat(q, now), plain.stat(q, now)]);
      expect(p, `${name}: stat`).toEqual(f);
      return listed;
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}

describe('the ferretdb and the mongodb log stores', () => {
  it('when the same logs are written through both, then every page, total, stat, export and dashboard is the same', async () => {
    const now = T0 + 151 * 450 + 20;
    // Page 2 of 25: the order and the skip (most filters select 40 to 90 of these logs).
    expect(await agree(QUERIES, [[2, 25]], now)).toBeGreaterThan(150);
    // The late log (the newest id) is listed in its hour, after the later hours' logs: newest hour
    // first, then arrival, in both.
    const early = { start: T0, end: T0 + 3 * 3600 };
    const [f, p] = await Promise.all([ferret.find(early, 1, 100), plain.find(early, 1, 100)]);
    expect(p).toEqual(f);
    const late = p.items.findIndex((l) => l.event_id === 'u-900');
    expect(late).toBeGreaterThan(10);
    expect(p.items[late - 1]?.created_at).toBeGreaterThanOrEqual(T0 + 3_600);
    expect((await plain.stat({ user_id: 2 }, now)).rpm).toBeGreaterThan(0);
    for (const q of [{}, { type: 2, model_name: 'gpt-4o', start: T0 + 9_000 }]) {
      const [f, p] = await Promise.all([exported(ferret, q), exported(plain, q)]);
      expect(f.length).toBeGreaterThan(0);
      // The ferretdb export is by day and class, unsorted within a day: the same rows.
      expect(byId(p)).toEqual(byId(f));
    }
    const range = { start: T0 - 3_600, end: T0 + 2 * 86_400 };
    for (const q of [range, { ...range, username: 'user3' }]) {
      expect(await plain.dashboard(q)).toEqual(await ferret.dashboard(q));
    }
  });

  it('when logs before a time are deleted and a retention pass runs, then both answer the same counts and pages after it', async () => {
    const cut = T0 + 3 * 3600 + 1_111;
    expect(await plain.deleteBefore(cut)).toBe(await ferret.deleteBefore(cut));
    const now = T0 + 151 * 450 + 20;
    await agree(some('everything', 'consumption', 'errors', 'a range cut mid-hour'), [[1, 20]], now);
    await ferret.cleaner(logger, () => KEEP_ALL).run();
    const gone = await plain.cleaner(logger, () => KEEP_ALL).run();
    expect(gone.deletedRows).toBeGreaterThan(0);
    expect(await plainConn.collection('logs').countDocuments({ created_at: { $lt: cut } })).toBe(0);
    const cutChecks = ['everything', 'errors', 'one user', 'a token name', 'a channel', 'a range cut mid-hour'];
    await agree(some(...cutChecks, 'a channel and a group over a cut range'), [[2, 20]], now);
    // Errors and system logs kept one day, two days after the first: the first day's go.
    const later = (DAY + 2) * 86_400 + 60;
    const errorsKept = { ...KEEP_ALL, error: 1, system: 1 };
    await ferret.cleaner(logger, () => errorsKept).run(later);
    expect((await plain.cleaner(logger, () => errorsKept).run(later)).deletedRows).toBeGreaterThan(0);
    const kept = ['consumption', 'errors', 'top-ups', 'a username', 'a model', 'a group'];
    await agree(some(...kept, 'a user, a model, consumption'), [[1, 50]], now);
  });

  it('when a database of the ferretdb flavor is opened as mongodb, then its partitions move into one collection and the answers stay the same', async () => {
    const adopted = openLogStore(ferretConn, 'mongodb');
    await adopted.ensureIndexes();
    expect(await adopted.adopt()).toBeGreaterThan(0);
    const names = (await ferretConn.db!.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
    expect(names.filter((n) => /^logs_|^log_index_\d/.test(n))).toEqual([]);
    // The same rows, the cut and the names kept: the pages and the dashboard answer as before.
    for (const q of [{}, { user_id: 2 }, { username: 'user3', type: 2 }]) {
      expect(await adopted.find(q, 2, 10)).toEqual(await plain.find(q, 2, 10));
    }
    const range = { start: T0 - 3_600, end: T0 + 2 * 86_400, username: 'user3' };
    expect(await adopted.dashboard(range)).toEqual(await plain.dashboard(range));
    expect(await adopted.adopt()).toBe(0);
  });

  it('when a filter names a range, then the plain query bounds its hours (the indexes serve it)', () => {
    expect(plainFilter({ user_id: 3, start: 7_300, end: 10_800 }, 0)).toEqual({
      hidden: { $ne: true },
      user_id: 3,
      created_at: { $gte: 7_300, $lte: 10_800 },
      hour: { $gte: 2, $lte: 3 },
    });
    expect(plainFilter({ model_name: 'm' }, 0)).toEqual({ hidden: { $ne: true }, model_name: 'm' });
  });
});
