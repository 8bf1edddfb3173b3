/**
 * The ledger against the real MongoDB-compatible server, where it can lose money or apply twice.
 *
 * A ledger round whose reply is lost: the database restarts while billing's insert of a round's
 * entries is on the wire, the entries are written but billing sees an error and answers every
 * operation of the round with it. The callers retry (the settle consumer redelivers its batch, in
 * the same order; relays send new pre-consumes): each operation must be applied once, and finding
 * out what was written must not scan the ledger by `op_id` (the local server has no secondary
 * index: one scan per user took seconds on a grown ledger and stalled every write behind it for
 * minutes in a CI run of the fault suite's `mongo` scenario).
 *
 * The fold (compaction, docs/adr/0003-wallet-ledger.md): entries older than the horizon go into a
 * checkpoint while two replicas write, one holding a head cached from before; and a pass that dies
 * after each of its steps, finished by the next.
 */
import { connectMongo, connectRedis, createLogger, type Lease, type Redis, redisLease } from '@aigw/common';
import { precondition } from '@aigw/common/errors';
import { uniqueName } from '@aigw/local-stack';
import { eventually } from '@aigw/testkit';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerFoldStore } from '../src/data/ledger-fold-store.ts';
import { type LedgerEntry, type LedgerRepository, ledgerRepository } from '../src/data/ledger-repository.ts';
import {
  addTotals,
  emptyStats,
  type FoldStore,
  foldPass,
  foldUser,
  type KindTotals,
  type LedgerCheckpoint,
  seqRange,
} from '../src/domain/ledger-fold.ts';
import type { LedgerState } from '../src/domain/ledger-state.ts';
import { walletLedger } from '../src/domain/wallet-ledger.ts';
import { startLedgerFold } from '../src/jobs/ledger-fold-job.ts';

let conn: Connection;
let redis: Redis;

beforeAll(async () => {
  conn = await connectMongo(process.env.MONGO_URL as string, uniqueName('billing_lost_reply'));
  redis = await connectRedis(process.env.REDIS_URL as string, `${uniqueName('fold_lease')}:`);
});
afterAll(async () => {
  await conn?.db?.dropDatabase().catch(() => undefined);
  await conn?.close();
  await redis?.quit();
});

/** The real repository, with its next append's reply lost after the write, and its scans counted. */
function flakyRepository(real: LedgerRepository) {
  const seen = { loseNext: false, lost: 0, scans: 0 };
  const repo: LedgerRepository = {
    ...real,
    async appendMany(entries) {
      const outcomes = await real.appendMany(entries);
      if (seen.loseNext) {
        seen.loseNext = false;
        seen.lost += entries.length;
        throw new Error('connection 3 to 127.0.0.1:27027 closed');
      }
      return outcomes;
    },
    async findOp(opId, thorough) {
      if (thorough) seen.scans += 1;
      return real.findOp(opId, thorough);
    },
  };
  return { repo, seen };
}

const charge = (amount: number) => (s: LedgerState) => ({
  kind: 'charge',
  amount,
  state: { ...s, quota: s.quota - amount, used_quota: s.used_quota + amount, request_count: s.request_count + 1 },
  result: { quota: s.quota - amount },
});
const credit = (amount: number) => (s: LedgerState) => ({
  kind: 'credit',
  amount,
  state: { ...s, quota: s.quota + amount },
  result: { quota: s.quota + amount },
});

describe('a ledger round whose reply is lost', () => {
  it('when the same operations come again, then they answer as replays, are applied once, and nothing scans the ledger', async () => {
    const real = ledgerRepository(conn);
    await real.ensureIndexes();
    const { repo, seen } = flakyRepository(real);
    const ledger = walletLedger(repo);
    const users = [101, 102, 103, 104];
    await Promise.all(users.map((u) => ledger.apply(u, `seed-${u}`, credit(1_000))));

    // One round for all four users; written, but the reply is lost.
    seen.loseNext = true;
    const lost = await Promise.allSettled(users.map((u) => ledger.apply(u, `settle-a-${u}`, charge(30))));
    expect(lost.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
    expect(seen.lost).toBe(4);

    // Redelivered in the same order (the settle consumer); user 104 also gets a new operation first
    // (a relay's pre-consume), so its next entry starts with a different operation.
    const fresh = ledger.apply(104, 'hold-b-104', charge(5));
    const again = await Promise.all(users.map((u) => ledger.apply(u, `settle-a-${u}`, charge(30))));
    expect((await fresh).replayed).toBe(false);
    expect(again.map((a) => a.replayed)).toEqual([true, true, true, true]);
    expect(again.map((a) => a.op.result.quota)).toEqual([970, 970, 970, 970]);
    expect(seen.scans).toBe(0);

    // What the database holds, read by another replica: charged once each, every marker written.
    const other = walletLedger(real);
    expect(await Promise.all(users.map(async (u) => (await other.state(u)).quota))).toEqual([970, 970, 970, 965]);
    const recorded = await real.recorded([...users.map((u) => `settle-a-${u}`), 'hold-b-104']);
    expect(recorded.size).toBe(5);

    // A third delivery (after the markers) is a replay too, and a new charge lands on top.
    const third = await ledger.apply(101, 'settle-a-101', charge(30));
    expect(third.replayed).toBe(true);
    expect((await ledger.apply(101, 'settle-c-101', charge(30))).state.quota).toBe(940);
  });

  it('when a refusal follows a lost reply, then it is decided on the written state', async () => {
    const real = ledgerRepository(conn);
    const { repo, seen } = flakyRepository(real);
    const ledger = walletLedger(repo);
    await ledger.apply(201, 'seed-201', credit(50));
    seen.loseNext = true;
    await expect(ledger.apply(201, 'settle-a-201', charge(40))).rejects.toThrow(/closed/);
    // The written charge left 10: a 20 charge is refused on that state, not on the stale 50.
    const refuse = (s: LedgerState) => {
      if (s.quota < 20) throw precondition('用户额度不足');
      return charge(20)(s);
    };
    await expect(ledger.apply(201, 'hold-b-201', refuse)).rejects.toThrow('用户额度不足');
    expect((await ledger.state(201)).quota).toBe(10);
    expect(seen.scans).toBe(0);
  });
});

const HOUR = 3_600_000;
const HORIZON = 48 * HOUR;

/** A ledger grown as two replicas write it, at a clock the test moves. */
async function grownLedger(user: number) {
  let now = Date.now();
  const clock = () => now;
  const repo = () => ledgerRepository(conn, { clock });
  // A pre-group-commit entry (one operation, a marker without its answer), as older deployments wrote.
  const legacy = { quota: 1_000, used_quota: 0, request_count: 0, tokens: {}, holds: {} };
  await conn.collection('ledger_entries').insertOne({
    _id: `${user}:1`,
    user_id: user,
    seq: 1,
    op_id: `credit:legacy-${user}`,
    kind: 'credit',
    amount: 1_000,
    result: { quota: 1_000 },
    state: legacy,
    at: now,
  } as never);
  await conn.collection('ledger_ops').insertOne({ _id: `credit:legacy-${user}`, user_id: user, seq: 1 } as never);
  await conn.collection('wallets').insertOne({ _id: user, seq: 1 } as never);
  const a = walletLedger(repo(), clock);
  const b = walletLedger(repo(), clock);
  // Replica b caches its head at seq 2; replica a writes seq 3..12 (five requests, each a hold and a close).
  await b.apply(user, `adjust:b-${user}`, credit(10));
  for (let r = 1; r <= 5; r++) {
    await a.apply(user, `hold:${user}-r${r}`, charge(20));
    await a.apply(user, `close:${user}-r${r}`, credit(5));
  }
  // The head pointer is rewritten at seq 9 (not awaited by the append).
  await eventually(
    () => conn.collection('wallets').findOne({ _id: user as never }),
    (h) => (h?.seq ?? 0) >= 9,
  );
  const later = () => {
    now += HORIZON + 24 * HOUR;
  };
  return { a, b, repo, clock, later };
}

const entriesOf = (user: number) =>
  conn.collection<LedgerEntry>('ledger_entries').find({ user_id: user }).sort({ seq: 1 }).toArray();
const checkpointsOf = (user: number) =>
  conn
    .collection<LedgerCheckpoint>('ledger_checkpoints')
    .find({ _id: { $gte: `${user}:ck`, $lt: `${user}:cl` } })
    .toArray();

/**
 * Per kind, the count and sum of every operation ever recorded: the checkpoint the head names
 * (its folded seq) plus the entries above it.
 */
async function historyTotals(user: number): Promise<KindTotals> {
  const folded = (await conn.collection('wallets').findOne({ _id: user as never }))?.folded ?? 0;
  const ck = await conn.collection<LedgerCheckpoint>('ledger_checkpoints').findOne({ _id: `${user}:ck${folded}` });
  const above = (await entriesOf(user)).filter((e) => e.seq > folded);
  const sorted = (t: KindTotals) => Object.fromEntries(Object.entries(t).sort(([x], [y]) => x.localeCompare(y)));
  return sorted(addTotals(ck?.kinds ?? {}, above));
}

describe('the ledger fold', () => {
  it('when entries older than the horizon fold, then a replica with an old cached head does not fork, replays answer, and balances and totals are unchanged', async () => {
    const user = 301;
    const { a, b, repo, clock, later } = await grownLedger(user);
    const before = { quota: (await a.state(user)).quota, totals: await historyTotals(user) };
    expect(before.quota).toBe(1_000 + 10 - 5 * 20 + 5 * 5);
    later();

    const stats = await foldPass(ledgerFoldStore(conn), { horizonMs: HORIZON, now: clock() });
    expect(stats.entries).toBe(8);
    expect((await entriesOf(user)).map((e) => e.seq)).toEqual([9, 10, 11, 12]);
    expect(await historyTotals(user)).toEqual(before.totals);
    const [ck] = await checkpointsOf(user);
    expect(ck).toMatchObject({ _id: `${user}:ck8`, seq: 8, entries: 8, done: true });
    expect(await conn.collection('wallets').findOne({ _id: user as never })).toMatchObject({ folded: 8 });

    // Replica b still caches seq 2 (seq 3 is gone): it must append on seq 12, not reuse seq 3.
    const late = await b.apply(user, `adjust:late-${user}`, credit(7));
    expect(late.state.quota).toBe(before.quota + 7);
    expect((await entriesOf(user)).map((e) => e.seq)).toEqual([9, 10, 11, 12, 13]);
    // A replica starting cold reads the same.
    expect((await walletLedger(repo(), clock).state(user)).quota).toBe(before.quota + 7);

    // The legacy credit (its marker carried no answer, its entry is folded) answers as a replay.
    const again = await a.apply(user, `credit:legacy-${user}`, credit(1_000));
    expect(again.replayed).toBe(true);
    // A close recorded within the horizon (seq 12 is kept) answers as a replay.
    expect((await a.apply(user, `close:${user}-r5`, credit(5))).replayed).toBe(true);
    expect((await a.state(user)).quota).toBe(before.quota + 7);
    // The folded entries' request markers are gone; the kept kinds' stay, with their answers.
    const markers = await repo().recorded([
      `hold:${user}-r1`,
      `close:${user}-r3`,
      `adjust:b-${user}`,
      `hold:${user}-r5`,
    ]);
    expect([...markers.keys()].sort()).toEqual([`adjust:b-${user}`, `hold:${user}-r5`]);
  });

  it('when two replicas fold the same user at once, then the checkpoint the head names survives and totals stay exact', async () => {
    const user = 310;
    const { a, clock, later } = await grownLedger(user);
    const before = { quota: (await a.state(user)).quota, totals: await historyTotals(user) };
    later();
    const real = ledgerFoldStore(conn);
    // Replica y read the head (its pointer lagging at seq 5) and the entries before replica x's
    // pass, and folds 1..4 after x folded 1..8.
    const staleHead = { seq: 5, folded: 0 };
    const staleEntries = await real.entries(user, seqRange(1, 12));
    await foldPass(real, { horizonMs: HORIZON, now: clock() });
    const y: FoldStore = {
      ...real,
      head: async () => ({ ...staleHead }),
      checkpoint: async () => null,
      entries: async (_u, seqs) => staleEntries.filter((e) => seqs.includes(e.seq)),
    };
    await foldUser(y, user, { cutoff: clock() - HORIZON, batch: 4, now: clock() }, emptyStats());
    expect(await conn.collection('wallets').findOne({ _id: user as never })).toMatchObject({ folded: 8 });
    expect(await historyTotals(user)).toEqual(before.totals);
    expect((await walletLedger(ledgerRepository(conn, { clock }), clock).state(user)).quota).toBe(before.quota);
  });

  const steps = ['writeCheckpoint', 'moveHead', 'keepMarkers', 'dropEntries', 'finishCheckpoint'] as const;
  it.each(
    steps.map((s, i) => [s, 400 + i] as const),
  )('when a pass dies at %s, then the ledger stays correct and the next pass finishes the fold', async (step, user) => {
    const { a, b, repo, clock, later } = await grownLedger(user);
    const before = { quota: (await a.state(user)).quota, totals: await historyTotals(user) };
    later();
    const real = ledgerFoldStore(conn);
    const crashing: FoldStore = {
      ...real,
      // After the step (half of it for the deletes; before it for the last one), the process dies.
      [step]: async (...args: never[]) => {
        if (step === 'dropEntries') await real.dropEntries((args[0] as unknown as LedgerEntry[]).slice(0, 4));
        else if (step !== 'finishCheckpoint') await (real[step] as (...a: never[]) => Promise<unknown>)(...args);
        throw new Error(`killed at ${step}`);
      },
    };
    await expect(foldPass(crashing, { horizonMs: HORIZON, now: clock() })).rejects.toThrow(`killed at ${step}`);

    // Meanwhile: the balance, the totals and the replays are what they were.
    expect((await walletLedger(repo(), clock).state(user)).quota).toBe(before.quota);
    expect(await historyTotals(user)).toEqual(before.totals);
    expect((await b.apply(user, `credit:legacy-${user}`, credit(1_000))).replayed).toBe(true);

    await foldPass(real, { horizonMs: HORIZON, now: clock() });
    expect((await real.entries(user, seqRange(1, 8))).length).toBe(0);
    expect((await checkpointsOf(user)).map((c) => [c._id, c.done])).toEqual([[`${user}:ck8`, true]]);
    expect(await historyTotals(user)).toEqual(before.totals);
    const late = await b.apply(user, `adjust:late-${user}`, credit(7));
    expect(late.state.quota).toBe(before.quota + 7);
    expect((await b.apply(user, `credit:legacy-${user}`, credit(1_000))).replayed).toBe(true);
  });

  it('when two replicas run the fold job, then one folds while the other waits, and when the folder dies mid-pass the other takes over and finishes its fold', async () => {
    const user = 501;
    const { a, clock, later } = await grownLedger(user);
    const before = { quota: (await a.state(user)).quota, totals: await historyTotals(user) };
    later();
    const real = ledgerFoldStore(conn);
    const logger = createLogger('billing-test', 'silent');
    const TTL = 300;
    // Replica x dies inside its first pass: after writing its checkpoint and moving the head, its
    // process stops (the delete never returns, Redis never hears from it again).
    let dead = false;
    let die: (err: Error) => void = () => undefined;
    const hang = <T>() => new Promise<T>(() => undefined);
    const xLease = redisLease(redis, 'ledger-fold:lease', TTL, 'replica-x');
    const x = startLedgerFold({
      store: {
        ...real,
        dropEntries: () =>
          new Promise((_, reject) => {
            die = reject;
          }),
      },
      horizonMs: HORIZON,
      intervalMs: 60_000,
      firstMs: 0,
      logger,
      clock,
      lease: {
        ttlMs: TTL,
        lease: {
          owner: xLease.owner,
          acquire: () => (dead ? hang<boolean>() : xLease.acquire()),
          renew: () => (dead ? hang<boolean>() : xLease.renew()),
          release: () => (dead ? hang<void>() : xLease.release()),
        } satisfies Lease,
      },
    });
    // Replica y: its passes are counted, its tries to take the lease too.
    const seen = { yPasses: 0, yTries: 0 };
    const yLease = redisLease(redis, 'ledger-fold:lease', TTL, 'replica-y');
    const y = startLedgerFold({
      store: {
        ...real,
        users: (after, limit) => {
          if (after === Number.MIN_SAFE_INTEGER) seen.yPasses++;
          return real.users(after, limit);
        },
      },
      horizonMs: HORIZON,
      intervalMs: 60_000,
      firstMs: 50,
      logger,
      clock,
      lease: {
        ttlMs: TTL,
        lease: {
          ...yLease,
          acquire: () => {
            seen.yTries++;
            return yLease.acquire();
          },
        },
      },
    });
    try {
      // x holds the lease through its pass (renewing it): y tries over more than three lease
      // periods and never folds.
      await eventually(
        () => conn.collection('wallets').findOne({ _id: user as never }),
        (h) => h?.folded === 8,
        { what: 'replica x moving the head' },
      );
      await eventually(
        async () => seen.yTries,
        (n) => n >= 4,
        { what: 'replica y trying the lease' },
      );
      expect(seen.yPasses).toBe(0);
      expect(await redis.get('ledger-fold:lease')).toBe('replica-x');

      // x dies mid-pass: once its lease expires, y takes it and finishes the fold x began.
      dead = true;
      await eventually(
        async () => (await checkpointsOf(user)).map((c) => [c._id, c.done]),
        (c) => JSON.stringify(c) === JSON.stringify([[`${user}:ck8`, true]]),
        { timeoutMs: 10_000, what: 'replica y finishing the fold' },
      );
      expect(seen.yPasses).toBe(1);
      expect(await redis.get('ledger-fold:lease')).toBe('replica-y');
      expect((await real.entries(user, seqRange(1, 8))).length).toBe(0);
      expect(await historyTotals(user)).toEqual(before.totals);
      expect((await walletLedger(ledgerRepository(conn, { clock }), clock).state(user)).quota).toBe(before.quota);
    } finally {
      die(new Error('replica x killed'));
      void x.stop();
      await y.stop();
    }
    // Stopping gives the lease up at once.
    expect(await redis.get('ledger-fold:lease')).toBeNull();
  });
});
