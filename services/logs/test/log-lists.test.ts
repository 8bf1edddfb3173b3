/**
 * The log list's read model against the MongoDB-compatible server: every page and stat the lists
 * answer (by `_id` only) equals what the collection scan answers on the same data, for each filter
 * of spec 02 section 7, after a backfill of logs stored before the lists, a redelivered batch and
 * a cleanup in the middle of an hour.
 */
import { connectMongo, createLogger } from '@aigw/common';
import { uniqueName } from '@aigw/local-stack';
import { type AuditEvent, AuditEventSchema, type UsageEvent, UsageEventSchema } from '@aigw/proto/events/v1/events';
import { create } from '@bufbuild/protobuf';
import mongoose, { type Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logCleanup } from '../src/data/log-cleanup.ts';
import { logCubingJob } from '../src/data/log-cubing-job.ts';
import { type LogQuery, type LogRepository, logRepository } from '../src/data/log-repository.ts';
import { logRows } from '../src/data/log-rows.ts';
import { ingestAudit, ingestUsage, type ReadEvent } from '../src/domain/ingest-events.ts';
import type { HourSlot } from '../src/domain/log-index.ts';
import { indexCollection } from '../src/domain/log-partitions.ts';
import { type LogDoc, logFromUsage } from '../src/domain/log-record.ts';

const flags = { logConsume: true, aggregate: true };
const KEEP_ALL = { consume: 0, error: 0, system: 0 };
/** The data is of 20-21 Nov 2026 and stats are asked at times then: every log counts for rpm. */
const PAST = () => 0;
const logger = createLogger('logs-lists-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const T0 = Date.UTC(2026, 10, 20, 8, 0) / 1000;
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet'];

let conn: Connection;
let repo: LogRepository;

/** Usage event i: five users, three models, two tokens, two channels, every 7 s from T0 + 1 day. */
function usage(i: number, at: number): UsageEvent {
  const user = 1 + (i % 5);
  const error = i % 17 === 0;
  return create(UsageEventSchema, {
    eventId: `u-${i}`,
    requestId: `r-${i}`,
    userId: user,
    username: `user${user}`,
    tokenId: user * 10 + (i % 2),
    tokenName: i % 2 ? 'ci' : 'default',
    modelName: MODELS[i % 3] as string,
    channelId: 1 + (i % 2),
    group: i % 4 ? 'default' : 'vip',
    promptTokens: 10 + (i % 9),
    completionTokens: 3 + (i % 5),
    quota: error ? 0 : 100 + i,
    isStream: i % 2 === 0,
    useTimeMs: 900,
    occurredAtMs: at * 1000,
    error,
    errorMessage: error ? 'upstream failed' : '',
    statusCode: error ? 502 : 0,
  });
}

function audit(i: number, at: number): AuditEvent {
  const user = 1 + (i % 5);
  return create(AuditEventSchema, {
    eventId: `a-${i}`,
    type: i % 2 ? 1 : 3,
    userId: user,
    username: `user${user}`,
    quotaDelta: 5_000 + i,
    content: `top-up ${i}`,
    occurredAtMs: at * 1000,
  });
}

const read = <E>(events: E[], from: number): ReadEvent<E>[] =>
  events.map((event, i) => ({ event, partition: 0, offset: String(from + i) }));

/**
 * What the collection scan answers, computed in memory from every stored row (read once per state
 * of the data: scanning the partitions per query made this file spend a minute in the scans).
 */
interface Snapshot {
  rows: LogDoc[];
  cut: number;
}

async function snapshot(lists: LogRepository): Promise<Snapshot> {
  return { rows: await logRows(conn).scan({}), cut: (await lists.index.meta()).cut ?? 0 };
}

function selected(s: Snapshot, q: LogQuery): LogDoc[] {
  const lo = Math.max(q.start ?? 0, s.cut);
  return s.rows
    .filter(
      (l) =>
        !l.hidden &&
        (!q.type || l.type === q.type) &&
        (!q.user_id || l.user_id === q.user_id) &&
        (!q.username || l.username === q.username) &&
        (!q.token_name || l.token_name === q.token_name) &&
        (!q.model_name || l.model_name === q.model_name) &&
        (!q.channel || l.channel === q.channel) &&
        (!q.group || l.group === q.group) &&
        l.created_at >= lo &&
        (!q.end || l.created_at <= q.end),
    )
    .sort((a, b) => b.id - a.id);
}

function scanPage(s: Snapshot, q: LogQuery, page: number, size: number) {
  const all = selected(s, q);
  return { total: all.length, items: all.slice((page - 1) * size, page * size) };
}

function scanStat(s: Snapshot, q: LogQuery, now: number) {
  const all = selected(s, { ...q, type: 2 });
  const recent = selected(s, { ...q, type: 2, start: now - 60, end: undefined });
  return {
    quota: all.reduce((n, l) => n + l.quota, 0),
    rpm: recent.length,
    tpm: recent.reduce((n, l) => n + l.tokens, 0),
  };
}

/** A page as the API lists it, through the scan and through the lists. */
async function both(q: LogQuery, page: number, size: number, lists: LogRepository, s: Snapshot) {
  const listed = await lists.find(q, page, size);
  return { scan: scanPage(s, q, page, size), listed: { total: listed.total, items: listed.items } };
}

const QUERIES: [string, LogQuery][] = [
  ['everything', {}],
  ['consumption', { type: 2 }],
  ['errors', { type: 5 }],
  ['top-ups', { type: 1 }],
  ['one user', { user_id: 3 }],
  ['one user, consumption', { user_id: 3, type: 2 }],
  ['a username', { username: 'user2' }],
  ['a model', { model_name: 'gpt-4o-mini' }],
  ['a token of a user', { user_id: 4, token_name: 'ci' }],
  ['a channel and a group', { channel: 2, group: 'vip' }],
  ['a model of one user', { user_id: 2, model_name: 'claude-3-5-sonnet' }],
  ['a token name across users', { token_name: 'default', type: 2 }],
  ['a username and a model', { username: 'user5', model_name: 'gpt-4o' }],
  [
    'a group, consumption, over a cut range',
    { group: 'default', type: 2, start: T0 + 86_400 + 999, end: T0 + 86_400 + 9_000 },
  ],
  ['a range cut mid-hour', { start: T0 + 86_400 + 1_234, end: T0 + 86_400 + 2 * 3600 + 77 }],
  ['a user over a cut range', { user_id: 1, type: 2, start: T0 + 86_400 + 3_599, end: T0 + 86_400 + 7_300 }],
  ['today to an hour ahead', { start: T0 + 86_400, end: T0 + 86_400 + 5 * 3600 }],
  ['no such user', { username: 'nobody' }],
  // Up to "now" inside the newest hour (after its last log): that hour counts whole.
  ['everything up to now', { start: T0 + 86_400 + 1_800, end: T0 + 86_400 + 1_299 * 7 + 20 }],
  // Far ends (fuzzed inputs): answered like the scan, without stepping through every hour to them.
  ['an end far in the future', { start: T0, end: 9_999_999_999_999 }],
  ['a user up to the largest safe integer', { user_id: 3, end: Number.MAX_SAFE_INTEGER }],
];

beforeAll(async () => {
  conn = await connectMongo(process.env.MONGO_URL!, uniqueName('logs_lists'));
  repo = logRepository(conn, { lists: false, clock: PAST });
  await repo.ensureIndexes();
  // Before the lists: 300 logs of the day before, stored without them (as an older version did).
  const older = Array.from({ length: 300 }, (_, i) => ({
    ...logFromUsage(usage(100_000 + i, T0 + i * 97), flags),
    _id: `u-${100_000 + i}`,
    id: i + 1,
  }));
  await conn.collection('logs').insertMany(older as never[]);
  await conn.collection('counters').insertOne({ _id: 'logs', seq: 300 } as never);
  // The consumer: 1,300 usage events over about 2.5 hours and 40 audit events, in batches (the
  // queries' ranges cut hours inside them; twice as many only made every scan twice as long).
  const at = (i: number) => T0 + 86_400 + i * 7;
  const events = Array.from({ length: 1_300 }, (_, i) => usage(i, at(i)));
  for (let i = 0; i < events.length; i += 400) {
    await ingestUsage(repo, read(events.slice(i, i + 400), i), flags);
    // Top-ups and admin changes logged at the time of the batch's last request.
    const last = at(Math.min(i + 399, events.length - 1));
    if (i % 800 === 0)
      await ingestAudit(
        repo,
        read(
          Array.from({ length: 20 }, (_, j) => audit(i + j, last)),
          i,
        ),
      );
  }
  // A redelivered batch (same offsets) and an event published twice (another offset).
  await ingestUsage(repo, read(events.slice(800, 1_200), 800), flags);
  await ingestUsage(repo, read([events[5] as UsageEvent], 5_000), flags);
}, 240_000);

afterAll(async () => {
  await conn?.dropDatabase().catch(() => undefined);
  await conn?.close();
});

describe('log lists', () => {
  let lists: LogRepository;
  let snap: Snapshot;
  beforeAll(async () => {
    lists = logRepository(conn, { clock: PAST });
    // The 300 logs of the older single collection move into the day partitions and the lists.
    expect(await lists.buildLists()).toBe(300);
    expect(await lists.buildLists()).toBe(0);
    expect((await conn.db?.listCollections({ name: 'logs' }).toArray())?.length).toBe(0);
    snap = await snapshot(lists);
  }, 240_000);

  it.each(QUERIES)(
    'when the page asks for %s, then the lists answer what the scan answers',
    async (_name, q) => {
      for (const [page, size] of [
        [1, 10],
        [3, 50],
        [40, 20],
      ] as const) {
        const r = await both(q, page, size, lists, snap);
        expect(r.listed.total).toBe(r.scan.total);
        expect(r.listed.items).toEqual(r.scan.items);
      }
    },
    240_000,
  );

  it('when stats are asked, then quota, rpm and tpm equal the scan', async () => {
    const now = T0 + 86_400 + 1_250 * 7 + 30;
    for (const [, q] of QUERIES) {
      expect(await lists.stat(q, now)).toEqual(scanStat(snap, q, now));
    }
    const s = await lists.stat({ user_id: 2 }, now);
    expect(s.rpm).toBeGreaterThan(0);
    // The repository's own scan (queries before the older logs are moved) answers the same.
    expect(await repo.stat({ user_id: 2 }, now)).toEqual(s);
    expect(await repo.find({ model_name: 'gpt-4o' }, 2, 10)).toEqual(await lists.find({ model_name: 'gpt-4o' }, 2, 10));
  }, 240_000);

  it('when the newest page is asked, then it comes from a few documents read by _id', async () => {
    const t0 = performance.now();
    const r = await lists.find({}, 1, 10);
    expect(r.items).toHaveLength(10);
    expect(r.items[0]?.event_id).toBe('u-1299');
    expect(r.total).toBe(300 + 1_300 + 40);
    console.info(`newest page from the lists: ${(performance.now() - t0).toFixed(0)} ms`);
  });

  it('when each query of the log page and its stat runs, then every read is by _id and its plan uses the index', async () => {
    // A connection of its own that reports every command it sends.
    const watched = mongoose.createConnection(process.env.MONGO_URL!, { dbName: conn.name, monitorCommands: true });
    await watched.asPromise();
    const reads: { coll: string; filter: Record<string, unknown> }[] = [];
    watched.getClient().on('commandStarted', (e) => {
      const c = e.command as Record<string, unknown>;
      if (e.commandName === 'find')
        reads.push({ coll: String(c.find), filter: (c.filter ?? {}) as Record<string, unknown> });
      if (['aggregate', 'count', 'distinct', 'listCollections'].includes(e.commandName))
        reads.push({ coll: e.commandName, filter: { command: e.commandName } });
    });
    try {
      const watchedRepo = logRepository(watched);
      const now = T0 + 86_400 + 1_250 * 7 + 30;
      const range = { start: T0, end: now };
      // Each filter of the page alone and combined, page 1 of 100 and a deep page of 10.
      for (const [, q] of QUERIES) {
        for (const [page, size] of [
          [1, 100],
          [30, 10],
        ] as const)
          await watchedRepo.find({ ...range, ...q }, page, size);
        await watchedRepo.stat({ ...range, ...q }, now);
      }
      expect(reads.length).toBeGreaterThan(QUERIES.length * 4);
      for (const r of reads) {
        expect(Object.keys(r.filter), `${r.coll} ${JSON.stringify(r.filter)}`).toEqual(['_id']);
      }
      // The plan of each distinct read: the _id index, never a scan (FerretDB: SQLite's plan).
      const shapes = new Map<string, { coll: string; filter: Record<string, unknown> }>();
      for (const r of reads) shapes.set(`${r.coll}:${typeof r.filter._id}`, r);
      const existing = new Set(
        (await watched.db!.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name),
      );
      // Days without logs are read too (an empty answer, nothing to plan): only stored collections.
      for (const r of [...shapes.values()].filter((x) => existing.has(x.coll))) {
        const plan = JSON.stringify(await watched.collection(r.coll).find(r.filter).explain());
        expect(plan, `${r.coll} ${JSON.stringify(r.filter).slice(0, 200)}`).toMatch(
          /USING INDEX|IDHACK|IXSCAN|EXPRESS/,
        );
      }
    } finally {
      await watched.close();
    }
  }, 120_000);

  it('when a range ends at now inside an hour, then that hour is counted, not read: only the page block is', async () => {
    const watched = mongoose.createConnection(process.env.MONGO_URL!, { dbName: conn.name, monitorCommands: true });
    await watched.asPromise();
    let blocks = 0;
    watched.getClient().on('commandStarted', (e) => {
      const ids = ((e.command as Record<string, { _id?: { $in?: string[] } }>).filter?._id?.$in ?? []) as string[];
      if (e.commandName === 'find') blocks += ids.filter((id) => id.split('|').length === 3).length;
    });
    try {
      const watchedRepo = logRepository(watched);
      const now = T0 + 86_400 + 1_299 * 7 + 20;
      const range = { start: T0 - 1_800, end: now };
      const read = async (q: LogQuery) => {
        blocks = 0;
        const r = await watchedRepo.find(q, 1, 10);
        expect(r.items.length).toBe(10);
        return blocks;
      };
      // Everyone's newest hour holds about 270 logs (2 blocks): one block for the page, not both.
      expect(await read(range)).toBe(1);
      expect(await read({ ...range, type: 2 })).toBe(1);
      // An hour listed before the bounds existed (no w): its logs' times are unknown, it is read whole (both blocks).
      const day = Math.floor((T0 + 86_400) / 86_400);
      const dirs = watched.collection(indexCollection(day));
      const dir = await dirs.findOne({ _id: `a|d${day}` } as never);
      const slots = (dir?.h ?? {}) as Record<string, HourSlot>;
      const unset = Object.fromEntries(Object.keys(slots).map((h) => [`h.${h}.w`, '']));
      await dirs.updateOne({ _id: dir?._id } as never, { $unset: unset });
      try {
        expect(await read(range)).toBe(2);
        const r = await both(range, 2, 10, lists, snap);
        expect(r.listed).toEqual(r.scan);
        expect(await lists.stat(range, now)).toEqual(scanStat(snap, range, now));
      } finally {
        const set = Object.fromEntries(Object.entries(slots).map(([h, s]) => [`h.${h}.w`, s.w]));
        await dirs.updateOne({ _id: dir?._id } as never, { $set: set });
      }
    } finally {
      await watched.close();
    }
  }, 120_000);

  it("when the closed days' cubes are computed in the background, then a first combined stat over them reads no block and its pages answer what the scan answers", async () => {
    const watched = mongoose.createConnection(process.env.MONGO_URL!, { dbName: conn.name, monitorCommands: true });
    await watched.asPromise();
    let blocks = 0;
    watched.getClient().on('commandStarted', (e) => {
      const ids = ((e.command as Record<string, { _id?: { $in?: string[] } }>).filter?._id?.$in ?? []) as string[];
      if (e.commandName === 'find') blocks += ids.filter((id) => /^[^|]+\|\d+\|\d+$/.test(id)).length;
    });
    try {
      // The days from the first logged to yesterday, all closed (a pass of the cleanup computes them).
      const today = Math.floor(Date.now() / 1000 / 86_400);
      expect(await lists.index.cubeClosedDays(today * 86_400 + 60)).toBe(today - Math.floor(T0 / 86_400));
      expect(await lists.index.cubeClosedDays(today * 86_400 + 60)).toBe(0);
      const start = Math.floor(T0 / 86_400) * 86_400;
      const watchedRepo = logRepository(watched);
      // Asked now: the last minute (rpm, tpm) holds none of these logs, only the quota reads lists.
      const now = Math.floor(Date.now() / 1000);
      for (const q of [
        { username: 'user3', channel: 1, start, end: start + 2 * 86_400 - 1 },
        { group: 'vip', token_name: 'default', type: 5, start, end: start + 2 * 86_400 - 1 },
        { model_name: 'gpt-4o', channel: 2, group: 'default', start, end: start + 2 * 86_400 - 1 },
      ]) {
        // The quota over whole days: counted from the day cubes, no block read.
        blocks = 0;
        expect(await watchedRepo.stat(q, now)).toEqual(scanStat(snap, q, now));
        expect(blocks, JSON.stringify(q)).toBe(0);
        // A page reads the day it falls in (and keeps that day's hour cubes).
        for (const page of [1, 4]) {
          const r = await both(q, page, 10, watchedRepo, snap);
          expect(r.listed.total).toBe(r.scan.total);
          expect(r.listed.items).toEqual(r.scan.items);
        }
      }
    } finally {
      await watched.close();
    }
  }, 120_000);

  it('when combined filters span whole days and hours, then they are counted from cubes and a page reads only its hour blocks', async () => {
    const watched = mongoose.createConnection(process.env.MONGO_URL!, { dbName: conn.name, monitorCommands: true });
    await watched.asPromise();
    let blocks = 0;
    let cubes = 0;
    watched.getClient().on('commandStarted', (e) => {
      const ids = ((e.command as Record<string, { _id?: { $in?: string[] } }>).filter?._id?.$in ?? []) as string[];
      if (e.commandName !== 'find') return;
      blocks += ids.filter((id) => /^[^|]+\|\d+\|\d+$/.test(id)).length;
      cubes += ids.filter((id) => id.endsWith('|q')).length;
    });
    try {
      const watchedRepo = logRepository(watched);
      const now = T0 + 86_400 + 1_299 * 7 + 20;
      // From the start of the older logs' day (a whole day) to now; a user's model, and a group's
      // token name and errors (each filter alone lists many more logs than they share).
      const queries: LogQuery[] = [
        { username: 'user5', model_name: 'gpt-4o', start: Math.floor(T0 / 86_400) * 86_400, end: now },
        { group: 'default', token_name: 'ci', type: 5, start: Math.floor(T0 / 86_400) * 86_400, end: now },
        { model_name: 'gpt-4o-mini', channel: 2, start: Math.floor(T0 / 86_400) * 86_400, end: now },
      ];
      for (const q of queries) {
        // Page 1, and a deep page in the whole day: the first time walks and stores the cubes.
        for (const page of [1, 3, 1, 3]) await watchedRepo.find(q, page, 10);
        blocks = 0;
        cubes = 0;
        for (const page of [1, 3]) {
          const r = await both(q, page, 10, watchedRepo, snap);
          expect(r.listed.total).toBe(r.scan.total);
          expect(r.listed.items).toEqual(r.scan.items);
        }
        // Each page reads the blocks of the hours it falls in (one or two), not the scope's every hour.
        expect(blocks, JSON.stringify(q)).toBeLessThanOrEqual(4);
        expect(cubes).toBeGreaterThan(0);
        expect(await watchedRepo.stat(q, now)).toEqual(scanStat(snap, q, now));
      }
    } finally {
      await watched.close();
    }
  }, 120_000);

  it('when logs before a time in the middle of an hour are deleted, then the answer counts them at once, every query starts there, and the cleanup deletes them in the background', async () => {
    const cut = T0 + 86_400 + 3_600 + 1_800 + 13;
    const before = await logRows(conn).scan({});
    const gone = before.filter((l) => l.created_at < cut).length;
    expect(await lists.deleteBefore(cut)).toBe(gone);
    // Answered before a row was deleted: they are all still stored, and no query shows them.
    expect((await logRows(conn).scan({})).length).toBe(before.length);
    snap = await snapshot(lists);
    const check = async () => {
      for (const [, q] of QUERIES) {
        const r = await both(q, 1, 20, lists, snap);
        expect(r.listed.total).toBe(r.scan.total);
        expect(r.listed.items).toEqual(r.scan.items);
      }
      expect(await lists.stat({ type: 2 }, cut + 30)).toEqual(scanStat(snap, { type: 2 }, cut + 30));
    };
    await check();
    // The background pass: the day before goes whole (its consumption and error partitions and
    // its lists), the cut's day loses its logs before the cut, by id.
    const r = await logCleanup(lists, logger, () => KEEP_ALL).run();
    expect(r).toMatchObject({ droppedPartitions: 2, droppedIndexDays: 1, deletedRows: gone - 300 });
    const after = await logRows(conn).scan({});
    expect(after.length).toBe(before.length - gone);
    expect(after.every((l) => l.created_at >= cut)).toBe(true);
    snap = await snapshot(lists);
    await check();
    // A second pass has nothing left to do.
    expect(await logCleanup(lists, logger, () => KEEP_ALL).run()).toMatchObject({
      droppedPartitions: 0,
      deletedRows: 0,
    });
  }, 240_000);

  it('when errors and system logs (the audit records: top-ups, admin actions) are kept one day and consumption forever, then older ones go with their partitions and that day is listed again without them', async () => {
    const day = Math.floor((T0 + 86_400) / 86_400);
    const before = await logRows(conn).scan({});
    const dropped = (l: LogDoc) => l.type !== 2;
    expect(before.filter((l) => l.type === 5).length).toBeGreaterThan(0);
    expect(before.filter((l) => l.type === 1 || l.type === 3).length).toBeGreaterThan(0);
    const r = await logCleanup(lists, logger, () => ({ ...KEEP_ALL, error: 1, system: 1 })).run(
      (day + 2) * 86_400 + 60,
    );
    expect(r).toMatchObject({ droppedPartitions: 2, rebuiltDays: 1 });
    const after = await logRows(conn).scan({});
    expect(after.length).toBe(before.length - before.filter(dropped).length);
    expect(after.some(dropped)).toBe(false);
    expect(after.length).toBeGreaterThan(0);
    snap = await snapshot(lists);
    for (const [, q] of QUERIES) {
      for (const [page, size] of [
        [1, 20],
        [3, 50],
      ] as const) {
        const x = await both(q, page, size, lists, snap);
        expect(x.listed.total).toBe(x.scan.total);
        expect(x.listed.items).toEqual(x.scan.items);
      }
    }
    const now = T0 + 86_400 + 1_250 * 7 + 30;
    expect(await lists.stat({ user_id: 2 }, now)).toEqual(scanStat(snap, { user_id: 2 }, now));
  }, 240_000);
});

describe('sums past 2^31', () => {
  it("when an hour's quota passes 2^31, then the stat and the dashboard count it whole (FerretDB wraps a 32-bit $inc)", async () => {
    const own = await connectMongo(process.env.MONGO_URL!, uniqueName('logs_wide'));
    try {
      const lists = logRepository(own, { clock: PAST });
      await lists.buildLists();
      const at = T0 + 7 * 86_400 + 60;
      // Two batches in one hour, 1.5e9 each (users 2 and 5, one model): the second $inc takes the
      // hour's sums (everyone's directory and dashboard bucket) past 2^31.
      for (const i of [1, 4]) {
        await ingestUsage(
          lists,
          read([create(UsageEventSchema, { ...usage(i, at + i), quota: 1_500_000_000 })], i),
          flags,
        );
      }
      const range = { start: at - 60, end: at + 3_000 };
      expect((await lists.stat(range, at + 30)).quota).toBe(3_000_000_000);
      expect((await lists.stat({ ...range, user_id: 2 }, at + 30)).quota).toBe(1_500_000_000);
      const buckets = await lists.dashboard(range);
      expect(buckets.map((b) => [b.model_name, b.quota])).toEqual([['gpt-4o-mini', 3_000_000_000]]);
    } finally {
      await own.dropDatabase().catch(() => undefined);
      await own.close();
    }
  }, 60_000);
});

describe('block parts', () => {
  it('when a batch is listed, then its blocks are one insert per day and no update, and hours holding whole blocks of older versions read both', async () => {
    const own = mongoose.createConnection(process.env.MONGO_URL!, {
      dbName: uniqueName('logs_parts'),
      monitorCommands: true,
    });
    await own.asPromise();
    const statements = { insert: 0, update: 0 };
    own.getClient().on('commandStarted', (e) => {
      const c = e.command as { insert?: string; update?: string; updates?: unknown[] };
      if (e.commandName === 'insert' && c.insert?.startsWith('log_index_')) statements.insert += 1;
      if (e.commandName === 'update' && c.update?.startsWith('log_index_')) statements.update += c.updates?.length ?? 0;
    });
    try {
      const parts = logRepository(own, { clock: PAST });
      const scan = logRepository(own, { lists: false, clock: PAST });
      await parts.buildLists();
      const at = (i: number) => T0 + 5 * 86_400 + i * 3;
      const events = Array.from({ length: 300 }, (_, i) => usage(i, at(i)));
      await ingestUsage(parts, read(events.slice(0, 150), 0), flags);
      // Every scope's blocks of the batch: one insert command, not an update per scope and hour.
      expect(statements).toEqual({ insert: 1, update: 0 });
      // An older version's whole blocks: the hour's parts merged into one document per block.
      const day = Math.floor(at(0) / 86_400);
      const coll = own.collection(indexCollection(day));
      const stored = await coll.find({ _id: { $regex: /^a\|\d+\|\d+\|\d+$/ } } as never).toArray();
      const whole = new Map<string, Record<string, unknown>>();
      for (const d of stored) {
        const id = String(d._id).split('|').slice(0, 3).join('|');
        whole.set(id, { ...(whole.get(id) ?? {}), ...d, _id: id });
      }
      await coll.deleteMany({ _id: { $in: stored.map((d) => d._id) } } as never);
      await coll.insertMany([...whole.values()] as never[]);
      await ingestUsage(parts, read(events.slice(150), 150), flags);
      for (const [page, size] of [
        [1, 10],
        [14, 20],
      ] as const) {
        expect(await parts.find({}, page, size)).toEqual(await scan.find({}, page, size));
        expect(await parts.find({ user_id: 2 }, page, size)).toEqual(await scan.find({ user_id: 2 }, page, size));
      }
    } finally {
      await own.dropDatabase().catch(() => undefined);
      await own.close();
    }
  }, 60_000);
});

describe('cubes computed in the background', () => {
  it('when the job has cubed the closed hours of today and the closed days, then a combined stat over them reads no block and pages answer what the scan answers', async () => {
    const own = mongoose.createConnection(process.env.MONGO_URL!, {
      dbName: uniqueName('logs_cubing'),
      monitorCommands: true,
    });
    await own.asPromise();
    let blocks = 0;
    own.getClient().on('commandStarted', (e) => {
      const ids = ((e.command as Record<string, { _id?: { $in?: string[] } }>).filter?._id?.$in ?? []) as string[];
      if (e.commandName === 'find') blocks += ids.filter((id) => /^[^|]+\|\d+\|\d+$/.test(id)).length;
    });
    try {
      const lists = logRepository(own, { clock: PAST });
      const scan = logRepository(own, { lists: false, clock: PAST });
      await lists.buildLists();
      // A day with a log every 5 minutes from 00:00 to 20:00.
      const day = Math.floor(T0 / 86_400) + 3;
      const events = Array.from({ length: 240 }, (_, i) => usage(i, day * 86_400 + i * 300));
      for (let i = 0; i < events.length; i += 120) await ingestUsage(lists, read(events.slice(i, i + 120), i), flags);
      const job = logCubingJob(lists.index, logger, 60_000);
      // At 10:01 of that day: hours 0 to 9 are closed (6 per pass, then the next pass at once).
      const tenOclock = day * 86_400 + 10 * 3600;
      expect(await job.run(tenOclock + 61)).toEqual({ days: 0, hours: 6, segments: 0, more: true });
      expect(await job.run(tenOclock + 61)).toEqual({ days: 0, hours: 4, segments: 0, more: false });
      expect(await job.run(tenOclock + 61)).toEqual({ days: 0, hours: 0, segments: 0, more: false });
      const queries: LogQuery[] = [
        { username: 'user3', model_name: 'gpt-4o' },
        { group: 'vip', token_name: 'default', type: 5 },
        { channel: 2, model_name: 'gpt-4o-mini', group: 'default' },
      ];
      const check = async (range: LogQuery) => {
        for (const f of queries) {
          const q = { ...f, ...range };
          // Asked now (days later): rpm and tpm walk the last minute, which holds none of these logs.
          const now = Math.floor(Date.now() / 1000);
          blocks = 0;
          expect(await lists.stat(q, now)).toEqual(await scan.stat(q, now));
          expect(blocks, JSON.stringify(q)).toBe(0);
          for (const page of [1, 2]) expect(await lists.find(q, page, 5)).toEqual(await scan.find(q, page, 5));
        }
      };
      // Today's closed hours, from 01:00 (the range cuts the day): counted from the hour cubes.
      await check({ start: day * 86_400 + 3600, end: tenOclock - 1 });
      // The next day: hours 10 to 19, then the closed day's cubes (merged from its hours'); a
      // range from 02:00 to the end counts hours and not a whole day, from the hour cubes.
      expect(await job.run((day + 1) * 86_400 + 61)).toEqual({ days: 0, hours: 6, segments: 0, more: true });
      expect(await job.run((day + 1) * 86_400 + 61)).toEqual({ days: 1, hours: 4, segments: 0, more: true });
      expect(await job.run((day + 1) * 86_400 + 61)).toEqual({ days: 0, hours: 0, segments: 0, more: false });
      await check({ start: day * 86_400 + 2 * 3600, end: (day + 1) * 86_400 - 1 });
      await check({ start: day * 86_400, end: (day + 1) * 86_400 - 1 });
      // A day cube counts what its scope's directory counts (valid: the whole day is read from it).
      const coll = own.collection(indexCollection(day));
      const dir = await coll.findOne({ _id: `u3|d${day}` } as never);
      const counts = Object.entries((dir?.h ?? {}) as Record<string, HourSlot>)
        .map(([h, slot]) => [day * 24 + Number(h), slot.n])
        .sort((a, b) => (a[0] as number) - (b[0] as number));
      expect(JSON.parse(String((await coll.findOne({ _id: `u3|d${day}|q` } as never))?.n))).toEqual(counts);
      await job.stop();
    } finally {
      await own.dropDatabase().catch(() => undefined);
      await own.close();
    }
  }, 60_000);

  it('when the job has cubed the complete segments of the current hour, then a combined stat over it reads only the tail blocks, a late log is counted, and pages answer what the scan answers', async () => {
    const own = mongoose.createConnection(process.env.MONGO_URL!, {
      dbName: uniqueName('logs_segments'),
      monitorCommands: true,
    });
    await own.asPromise();
    let blocks = 0;
    own.getClient().on('commandStarted', (e) => {
      const ids = ((e.command as Record<string, { _id?: { $in?: string[] } }>).filter?._id?.$in ?? []) as string[];
      if (e.commandName === 'find') blocks += ids.filter((id) => /^[^|]+\|\d+\|\d+$/.test(id)).length;
    });
    try {
      // Segments of one block (200 positions) instead of 10,000: the same code on fewer logs.
      const lists = logRepository(own, { clock: PAST, segment: 200 });
      await lists.buildLists();
      // The current hour: 10:00 to 10:55 of a day, a log every 3 s (1,100 logs: a model's 367).
      const day = Math.floor(T0 / 86_400) + 4;
      const hour = day * 24 + 10;
      const events = Array.from({ length: 1_100 }, (_, i) => usage(i, hour * 3600 + i * 3));
      for (let i = 0; i < events.length; i += 550) await ingestUsage(lists, read(events.slice(i, i + 550), i), flags);
      const job = logCubingJob(lists.index, logger, 60_000);
      // At 10:56: no hour has closed; the scopes' complete segments are cubed (users' 1, models'
      // 1, channels' 2, groups' 4 and 1, token names' 2).
      const now = hour * 3600 + 3_360;
      expect(await job.run(now)).toEqual({ days: 0, hours: 0, segments: 21, more: false });
      expect(await job.run(now)).toEqual({ days: 0, hours: 0, segments: 0, more: false });
      const queries: LogQuery[] = [
        { username: 'user3', model_name: 'gpt-4o' },
        { channel: 2, model_name: 'gpt-4o-mini', group: 'default' },
        { group: 'default', token_name: 'ci', type: 2 },
      ];
      const check = async (range: LogQuery, maxBlocks: number, asked = queries) => {
        const snap = { rows: await logRows(own).scan({}), cut: 0 };
        for (const f of asked) {
          const q = { ...f, ...range };
          blocks = 0;
          // rpm and tpm: the last minute (the segments before it are skipped, the tail walked).
          expect(await lists.stat(q, now), JSON.stringify(q)).toEqual(scanStat(snap, q, now));
          expect(blocks, JSON.stringify(q)).toBeLessThanOrEqual(maxBlocks);
          // Page 1 holds the tail and the newest segment, page 2 lies in that segment.
          for (const page of [1, 2]) {
            const r = await both(q, page, 10, lists, snap);
            expect(r.listed).toEqual(r.scan);
          }
        }
      };
      // The console's range (today to an hour ahead): the hour is counted from its segments'
      // cubes; only the tail is walked, for the quota and for rpm (one block: the scope's last
      // 200 positions hold the tail; without the segments, every block of the scope's hour).
      await check({ start: day * 86_400, end: (hour + 2) * 3600 }, 2);
      // A range from 10:30: the segments wholly before it are skipped, the one it cuts is walked.
      await check({ start: hour * 3600 + 1_800, end: (hour + 2) * 3600 }, 3);
      // A late log of 10:01 (user3, gpt-4o, ci, default) takes a position in the tail: counted,
      // the segments' cubes unchanged.
      await ingestUsage(lists, read([usage(5_007, hour * 3600 + 60)], 5_000), flags);
      await check({ start: day * 86_400, end: (hour + 2) * 3600 }, 2, queries.slice(0, 1));
      // A segment cube missing: the first query walks the hour and stores it for the next, which
      // skips that segment (its logs end at 10:49:51, before the range).
      await own.collection(indexCollection(day)).deleteOne({ _id: `u3|${hour}|q0-200` } as never);
      const q = { username: 'user3', model_name: 'gpt-4o', start: hour * 3600 + 3_000, end: (hour + 2) * 3600 };
      blocks = 0;
      await lists.stat(q, now);
      expect(blocks).toBe(3);
      blocks = 0;
      await lists.stat(q, now);
      expect(blocks).toBe(2);
      await job.stop();
    } finally {
      await own.dropDatabase().catch(() => undefined);
      await own.close();
    }
  }, 60_000);
});
