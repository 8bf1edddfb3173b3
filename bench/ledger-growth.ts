/**
 * How the wallet ledger grows per request (issue 27 point 5): billing's real wallet use cases and
 * ledger repository, in-process, against the MongoDB-compatible server (MONGO_URL), a database of
 * its own. Each scenario pre-consumes and settles requests as the relay and the settle consumer do
 * (holds from concurrent requests share a round; the consumer closes a Kafka batch at once), then
 * counts the documents and BSON bytes added to `ledger_entries`, `ledger_ops` and `wallets`.
 *
 *   npx tsx bench/ledger-growth.ts
 *
 * SCALE=n multiplies the requests of the one-user scenarios and the users of the last one.
 * With FOLD=1 it then folds what it grew (the fold of docs/adr/0003-wallet-ledger.md, as the billing
 * job runs it, at a clock past the horizon) and prints the fold rate and the bytes freed.
 */
import { loadavg } from 'node:os';
import type { Mongoose } from 'mongoose';
import { ledgerFoldStore } from '../services/billing/src/data/ledger-fold-store.ts';
import { ledgerRepository } from '../services/billing/src/data/ledger-repository.ts';
import { foldPass } from '../services/billing/src/domain/ledger-fold.ts';
import { walletLedger } from '../services/billing/src/domain/wallet-ledger.ts';
import { walletService } from '../services/billing/src/domain/wallet-service.ts';
import { connectMongo } from '../services/common/src/index.ts';

const conn = await connectMongo(process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27027/', `bench_ledger_${process.pid}`);
const { BSON } = (conn.base as Mongoose).mongo;
const size = (d: unknown) => BSON.calculateObjectSize(d as Parameters<typeof BSON.calculateObjectSize>[0]);

const noEvents = { audit: async () => {}, tokenChanged: async () => {}, walletChanged: async () => {} };
const options = {
  get: () => undefined,
  text: () => '',
  bool: () => false,
  number: (_k: string, d?: number) => d ?? 0,
  json: <T>() => ({}) as T,
  version: () => 0,
};

async function totals() {
  const out: Record<string, { docs: number; bytes: number }> = {};
  for (const name of ['ledger_entries', 'ledger_ops', 'wallets']) {
    const docs = await conn.collection(name).find({}).toArray();
    out[name] = { docs: docs.length, bytes: docs.reduce((s, d) => s + size(d), 0) };
  }
  return out;
}

interface Scenario {
  name: string;
  users: number;
  perUser: number;
  /** Requests in flight at once per user (their holds share entries), and closed in one batch. */
  concurrent: number;
}

const scale = Number(process.env.SCALE ?? 1);
const scenarios: Scenario[] = [
  { name: 'one user, one request at a time', users: 1, perUser: 200 * scale, concurrent: 1 },
  { name: 'one user, 20 in flight, closed 20 per batch', users: 1, perUser: 200 * scale, concurrent: 20 },
  {
    name: `${100 * scale} users, 2 in flight each, closed per batch of ${200 * scale}`,
    users: 100 * scale,
    perUser: 10,
    concurrent: 2,
  },
];

let rid = 0;
for (const [i, sc] of scenarios.entries()) {
  const repo = ledgerRepository(conn);
  await repo.ensureIndexes();
  const ledger = walletLedger(repo);
  const wallet = walletService({
    ledger,
    tokenLimit: async (id) => ({ userId: Math.floor(id / 10), unlimited: true }),
    events: noEvents,
    options: options as never,
  });
  const users = Array.from({ length: sc.users }, (_, u) => 1_000 * (i + 1) + u);
  await Promise.all(
    users.map((u) =>
      wallet.credit({ requestId: `seed-${u}`, userId: u, username: `u${u}`, amount: 1e9, reason: 1, content: '' }),
    ),
  );
  const before = await totals();
  const t0 = performance.now();
  for (let done = 0; done < sc.perUser; done += sc.concurrent) {
    const round = users.flatMap((u) =>
      Array.from({ length: sc.concurrent }, () => ({ requestId: `r${++rid}`, userId: u, tokenId: u * 10 + (rid % 2) })),
    );
    await Promise.all(round.map((r) => wallet.preConsume({ ...r, amount: 500 })));
    await wallet.closeMany(round.map((r) => ({ ...r, actual: 420 })));
  }
  const ms = performance.now() - t0;
  const after = await totals();
  const requests = sc.users * sc.perUser;
  const per = (name: string) => {
    const a = after[name] as { docs: number; bytes: number };
    const b = before[name] as { docs: number; bytes: number };
    return `${((a.docs - b.docs) / requests).toFixed(2)} docs, ${((a.bytes - b.bytes) / requests).toFixed(0)} B`;
  };
  console.log(
    `${sc.name}: ${requests} requests in ${(ms / 1000).toFixed(1)} s; per request: entries ${per('ledger_entries')}; markers ${per('ledger_ops')}; heads ${per('wallets')} (load ${loadavg()[0]?.toFixed(1)})`,
  );
}
const sample = await conn.collection('ledger_entries').findOne({}, { sort: { _id: -1 } });
console.log('a newest entry:', JSON.stringify(sample).slice(0, 600));

if (process.env.FOLD === '1') {
  const horizonMs = 48 * 3_600_000;
  const grown = await totals();
  const t0 = performance.now();
  const stats = await foldPass(ledgerFoldStore(conn), { horizonMs, now: Date.now() + horizonMs + 86_400_000 });
  const s = (performance.now() - t0) / 1000;
  const left = await totals();
  const bytes = (t: typeof grown, name: string) => (t[name] as { bytes: number }).bytes;
  const docs = (t: typeof grown, name: string) => (t[name] as { docs: number }).docs;
  const freed = (name: string) => bytes(grown, name) - bytes(left, name);
  const checkpoints = await conn.collection('ledger_checkpoints').find({}).toArray();
  console.log(
    `fold: ${stats.users} users, ${stats.entries} entries and ${stats.markers} markers in ${s.toFixed(1)} s (${(stats.entries / s).toFixed(0)} entries/s; load ${loadavg()[0]?.toFixed(1)}); ` +
      `entries ${docs(grown, 'ledger_entries')} -> ${docs(left, 'ledger_entries')} (${freed('ledger_entries')} B freed), ` +
      `markers ${docs(grown, 'ledger_ops')} -> ${docs(left, 'ledger_ops')} (${freed('ledger_ops')} B freed), ` +
      `${checkpoints.length} checkpoints (${checkpoints.reduce((n, d) => n + size(d), 0)} B)`,
  );
  // The steady state: a pass that finds nothing more to fold (every user written since, or folded).
  const t1 = performance.now();
  const idle = await foldPass(ledgerFoldStore(conn), { horizonMs, now: Date.now() + horizonMs + 86_400_000 });
  console.log(`a pass with nothing to fold: ${idle.users} users in ${((performance.now() - t1) / 1000).toFixed(2)} s`);
}
await conn.dropDatabase();
await conn.close();
