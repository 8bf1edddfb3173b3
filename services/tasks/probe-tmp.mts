import mongoose from 'mongoose';

const url = process.argv[2] as string;
const c = await mongoose.mongo.MongoClient.connect(url);
const col = c.db('polls_dl').collection('tasks');
const T = async (name: string, f: () => Promise<unknown>) => {
  const t0 = Date.now();
  const r = await f();
  console.log(name, Date.now() - t0, 'ms', JSON.stringify(r)?.slice(0, 60));
};
let base = 1_005_000;
const up = (filter: Record<string, unknown>) =>
  col.updateOne(filter as never, { $set: { s: 3 }, $inc: { polls: 1 } }).then((x) => x.modifiedCount);
await T('_id + polls', () => up({ _id: base++, polls: 0 }));
await T('_id + final', () => up({ _id: base++, final: false }));
await T('_id $in one + polls', () => up({ _id: { $in: [base++] }, polls: 0 }));
await T('$and', () => up({ $and: [{ _id: base++ }, { polls: 0 }] }));
await T('find _id + polls', () =>
  col
    .find({ _id: base++, polls: 0 } as never)
    .toArray()
    .then((x) => x.length),
);
await T('findOneAndUpdate _id + polls', () =>
  col.findOneAndUpdate({ _id: base++, polls: 0 } as never, { $inc: { polls: 1 } }).then((x) => !!x),
);
await T('updateMany $in 50 + polls', () => {
  const ids = Array.from({ length: 50 }, (_, j) => base + j);
  base += 50;
  return col.updateMany({ _id: { $in: ids }, polls: 0 } as never, { $inc: { polls: 1 } }).then((x) => x.modifiedCount);
});
process.exit(0);
