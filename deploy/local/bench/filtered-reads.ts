/**
 * Filtered reads on a MongoDB-compatible server (a script, not a test; ADR 0001, issue 14): how
 * long the log page's queries take on a collection of log-shaped rows.
 *
 * Loads 100,000 documents shaped like log rows ({_id: number, created_at, user_id, model_name,
 * channel, token_name, quota}) into a fresh database, with an index on model_name, then times
 * (median and max of 5 runs each):
 *   find({model_name}).sort({_id: -1}).limit(10) and countDocuments({model_name}),
 * for a common model (about 11 % of the rows) and a rare one (0.1 %), and for comparison the same
 * on channel (no index), and the unfiltered first page. The database is dropped at the end.
 *
 * Run it only against a PRIVATE server (it writes 100,000 documents), for example:
 *   npx tsx deploy/local/bench/filtered-reads.ts mongodb://127.0.0.1:27141/
 */
import mongoose from 'mongoose';

const url = process.argv[2] ?? process.env.MONGO_URL;
if (!url) throw new Error('usage: filtered-reads.ts <mongodb url of a private server>');
const ROWS = Number(process.env.ROWS ?? 100_000);
const RUNS = 5;
const client = new mongoose.mongo.MongoClient(url, { maxPoolSize: 8 });
await client.connect();
const db = client.db(`bench_reads_${Date.now().toString(36)}`);
const col = db.collection<{ _id: number } & Record<string, unknown>>('logs');

// m-0 .. m-8 share the rows; m-9 is on every 1,000th row only.
const model = (i: number) => (i % 1000 === 999 ? 'm-9' : `m-${i % 9}`);
const start = Math.floor(Date.now() / 1000) - ROWS;
let t = performance.now();
for (let from = 0; from < ROWS; from += 1000) {
  const docs = Array.from({ length: Math.min(1000, ROWS - from) }, (_, k) => {
    const i = from + k;
    const user = (i * 7919) % 100;
    return {
      _id: i + 1,
      created_at: start + i,
      user_id: user + 1,
      model_name: model(i),
      channel: (i % 5) + 1,
      token_name: `token-${user}`,
      quota: (i * 31) % 5000,
    };
  });
  await col.insertMany(docs, { ordered: false });
}
const loadS = (performance.now() - t) / 1000;
t = performance.now();
await col.createIndex({ model_name: 1 });
const indexS = (performance.now() - t) / 1000;
console.log(
  `${url}: loaded ${ROWS} rows in ${loadS.toFixed(1)} s (${(ROWS / loadS).toFixed(0)} rows/s), index on model_name ${indexS.toFixed(1)} s`,
);

async function time(label: string, check: (v: unknown) => boolean, fn: () => Promise<unknown>) {
  const ms: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const s = performance.now();
    const v = await fn();
    ms.push(performance.now() - s);
    if (!check(v)) throw new Error(`${label}: unexpected result ${JSON.stringify(v)}`);
  }
  ms.sort((a, b) => a - b);
  console.log(`  ${label.padEnd(58)} median ${ms[RUNS >> 1]?.toFixed(1)} ms, max ${ms[RUNS - 1]?.toFixed(1)} ms`);
}

const expected = (pred: (i: number) => boolean) => {
  let n = 0;
  for (let i = 0; i < ROWS; i++) if (pred(i)) n++;
  return n;
};
const page = (filter: Record<string, unknown>) => () => col.find(filter).sort({ _id: -1 }).limit(10).toArray();
const newestFirst = (pred: (i: number) => boolean) => (v: unknown) => {
  const rows = v as { _id: number }[];
  const want: number[] = [];
  for (let i = ROWS - 1; i >= 0 && want.length < 10; i--) if (pred(i)) want.push(i + 1);
  return rows.map((r) => r._id).join() === want.join();
};
for (const [name, pred] of [
  ['m-0', (i: number) => model(i) === 'm-0'],
  ['m-9', (i: number) => model(i) === 'm-9'],
] as const) {
  const n = expected(pred);
  await time(`find({model_name: '${name}'}).sort({_id: -1}).limit(10)`, newestFirst(pred), page({ model_name: name }));
  await time(
    `countDocuments({model_name: '${name}'}) = ${n}`,
    (v) => v === n,
    () => col.countDocuments({ model_name: name }),
  );
}
const ch = (i: number) => i % 5 === 2;
await time('find({channel: 3}).sort({_id: -1}).limit(10) (no index)', newestFirst(ch), page({ channel: 3 }));
await time(
  `countDocuments({channel: 3}) = ${expected(ch)} (no index)`,
  (v) => v === expected(ch),
  () => col.countDocuments({ channel: 3 }),
);
await time(
  'find({}).sort({_id: -1}).limit(10)',
  newestFirst(() => true),
  page({}),
);
await db.dropDatabase();
await client.close();
