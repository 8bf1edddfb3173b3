/**
 * A ledger round whose reply is lost: the database restarts while billing's insert of a round's
 * entries is on the wire, the entries are written but billing sees an error and answers every
 * operation of the round with it. The callers retry (the settle consumer redelivers its batch, in
 * the same order; relays send new pre-consumes): each operation must be applied once, and finding
 * out what was written must not scan the ledger by `op_id` (the local server has no secondary
 * index: one scan per user took seconds on a grown ledger and stalled every write behind it for
 * minutes in a CI run of the fault suite's `mongo` scenario).
 */
import { connectMongo } from '@aigw/common';
import { precondition } from '@aigw/common/errors';
import { uniqueName } from '@aigw/local-stack';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LedgerRepository, ledgerRepository } from '../src/data/ledger-repository.ts';
import type { LedgerState } from '../src/domain/ledger-state.ts';
import { walletLedger } from '../src/domain/wallet-ledger.ts';

let conn: Connection;

beforeAll(async () => {
  conn = await connectMongo(process.env.MONGO_URL as string, uniqueName('billing_lost_reply'));
});
afterAll(async () => {
  await conn?.db?.dropDatabase().catch(() => undefined);
  await conn?.close();
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
