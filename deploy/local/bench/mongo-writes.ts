/**
 * Write contention on a MongoDB-compatible server (a script, not a test; ADR 0001): how the
 * platform's services' writes get in each other's way on the server the local stack runs.
 *
 * 1. Three databases (billing, logs, channels), 16 writers each, single-document inserts for
 *    8 s: inserts per second in all.
 * 2. Two writers of 500-row bulk inserts into a logs database while four writers insert single
 *    documents into a billing database: the billing inserts' p50/p99 latency, and log rows per
 *    second.
 *
 *   npx tsx deploy/local/bench/mongo-writes.ts mongodb://127.0.0.1:27027/
 */
import mongoose from 'mongoose';

const url = process.argv[2] ?? process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27027/';
const SECONDS = 8;
const run = Date.now().toString(36);
const client = new mongoose.mongo.MongoClient(url, { maxPoolSize: 64 });
await client.connect();
let seq = 0;

const dbs = ['billing', 'logs', 'channels'].map((d) => `bench_${d}_${run}`);
const counts = new Map<string, number>();
let end = Date.now() + SECONDS * 1000;
await Promise.all(
  dbs.flatMap((d) =>
    Array.from({ length: 16 }, async () => {
      const col = client.db(d).collection('x');
      while (Date.now() < end) {
        await col.insertOne({ _id: `${seq++}` as never, v: 'x'.repeat(200), n: seq });
        counts.set(d, (counts.get(d) ?? 0) + 1);
      }
    }),
  ),
);
const total = [...counts.values()].reduce((a, b) => a + b, 0);
console.log(`1. single inserts into 3 databases, 48 writers: ${(total / SECONDS).toFixed(0)} inserts/s`);

const lat: number[] = [];
let rows = 0;
end = Date.now() + SECONDS * 1000;
const logs = client.db(dbs[1] as string).collection('bulk');
const billing = client.db(dbs[0] as string).collection('single');
await Promise.all([
  ...Array.from({ length: 2 }, async () => {
    while (Date.now() < end) {
      const docs = Array.from({ length: 500 }, () => ({ _id: `l${seq++}` as never, v: 'x'.repeat(400) }));
      await logs.insertMany(docs, { ordered: false });
      rows += docs.length;
    }
  }),
  ...Array.from({ length: 4 }, async () => {
    while (Date.now() < end) {
      const t = performance.now();
      await billing.insertOne({ _id: `b${seq++}` as never, v: 'x'.repeat(200) });
      lat.push(performance.now() - t);
    }
  }),
]);
lat.sort((a, b) => a - b);
const p = (q: number) => (lat[Math.floor(q * (lat.length - 1))] ?? Number.NaN).toFixed(1);
console.log(
  `2. billing single inserts beside logs bulk inserts: ${lat.length} inserts, p50 ${p(0.5)} ms, p99 ${p(0.99)} ms; log rows ${(rows / SECONDS).toFixed(0)}/s`,
);
for (const d of dbs) await client.db(d).dropDatabase();
await client.close();
