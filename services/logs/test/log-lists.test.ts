/**
 * The log list's read model against the MongoDB-compatible server: every page and stat the lists
 * answer (by `_id` only) equals what the collection scan answers on the same data, for each filter
 * of spec 02 section 7, after a backfill of logs stored before the lists, a redelivered batch and
 * a cleanup in the middle of an hour.
 */
import { connectMongo } from '@aigw/common';
import { uniqueName } from '@aigw/local-stack';
import { type AuditEvent, AuditEventSchema, type UsageEvent, UsageEventSchema } from '@aigw/proto/events/v1/events';
import { create } from '@bufbuild/protobuf';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LogQuery, type LogRepository, logRepository } from '../src/data/log-repository.ts';
import { ingestAudit, ingestUsage, type ReadEvent } from '../src/domain/ingest-events.ts';
import { logFromUsage } from '../src/domain/log-record.ts';

const flags = { logConsume: true, aggregate: true };
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

/** A page as the API lists it, through the scan and through the lists. */
async function both(q: LogQuery, page: number, size: number, lists: LogRepository) {
  const scan = await repo.find(q, page, size);
  const listed = await lists.find(q, page, size);
  const strip = (items: unknown[]) =>
    items.map((l) => {
      const { ix: _ix, ...rest } = l as Record<string, unknown>;
      return rest;
    });
  return {
    scan: { total: scan.total, items: strip(scan.items) },
    listed: { total: listed.total, items: strip(listed.items) },
  };
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
  // Far ends (fuzzed inputs): answered like the scan, without stepping through every hour to them.
  ['an end far in the future', { start: T0, end: 9_999_999_999_999 }],
  ['a user up to the largest safe integer', { user_id: 3, end: Number.MAX_SAFE_INTEGER }],
];

beforeAll(async () => {
  conn = await connectMongo(process.env.MONGO_URL!, uniqueName('logs_lists'));
  repo = logRepository(conn, { lists: false });
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
  beforeAll(async () => {
    lists = logRepository(conn);
    expect(await lists.buildLists()).toBe(300);
    // Before the dimensions are built, filtered queries walk the wider scopes, and still agree.
    for (const q of [{ model_name: 'gpt-4o' }, { token_name: 'ci', channel: 1 }]) {
      const r = await both(q, 1, 20, lists);
      expect(r.listed).toEqual(r.scan);
    }
    // The 300 older logs; the consumer listed its own in the dimensions as it stored them.
    expect(await lists.buildDimensions()).toBe(300);
    expect(await lists.buildDimensions()).toBe(0);
  }, 240_000);

  it.each(QUERIES)(
    'when the page asks for %s, then the lists answer what the scan answers',
    async (_name, q) => {
      for (const [page, size] of [
        [1, 10],
        [3, 50],
        [40, 20],
      ] as const) {
        const r = await both(q, page, size, lists);
        expect(r.listed.total).toBe(r.scan.total);
        expect(r.listed.items).toEqual(r.scan.items);
      }
      // The scan is the slow side (seconds per page on a busy machine).
    },
    240_000,
  );

  it('when stats are asked, then quota, rpm and tpm equal the scan', async () => {
    const now = T0 + 86_400 + 1_250 * 7 + 30;
    for (const [, q] of QUERIES) {
      expect(await lists.stat(q, now)).toEqual(await repo.stat(q, now));
    }
    const s = await lists.stat({ user_id: 2 }, now);
    expect(s.rpm).toBeGreaterThan(0);
  }, 240_000);

  it('when the newest page is asked, then it comes from a few documents read by _id', async () => {
    const t0 = performance.now();
    const r = await lists.find({}, 1, 10);
    expect(r.items).toHaveLength(10);
    expect(r.items[0]?.event_id).toBe('u-1299');
    expect(r.total).toBe(300 + 1_300 + 40);
    console.info(`newest page from the lists: ${(performance.now() - t0).toFixed(0)} ms`);
  });

  it('when logs before a time in the middle of an hour are deleted, then pages and stats match the scan', async () => {
    const cut = T0 + 86_400 + 3_600 + 1_800 + 13;
    const deleted = await lists.deleteBefore(cut);
    expect(deleted).toBeGreaterThan(300);
    for (const [, q] of QUERIES) {
      const r = await both(q, 1, 20, lists);
      expect(r.listed.total).toBe(r.scan.total);
      expect(r.listed.items).toEqual(r.scan.items);
    }
    expect(await lists.stat({ type: 2 }, cut + 30)).toEqual(await repo.stat({ type: 2 }, cut + 30));
  }, 240_000);
});
