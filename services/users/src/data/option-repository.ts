import { nextSequence } from '@aigw/common';
import type { Connection, Model } from 'mongoose';
import { Schema } from 'mongoose';
import { defaultOptions } from '../domain/option-catalogue.ts';

interface OptionDoc {
  _id: string;
  value: string;
  version: number;
}

const optionSchema = new Schema<OptionDoc>(
  {
    _id: { type: String, required: true },
    value: { type: String, default: '' },
    version: { type: Number, index: true },
  },
  { collection: 'options', versionKey: false },
);

/** Stored options merged over the catalogue's defaults; every write bumps a global version. */
export interface OptionRepository {
  all(): Promise<{ values: Record<string, string>; version: number }>;
  changedSince(version: number): Promise<{ values: Record<string, string>; version: number }>;
  set(key: string, value: string): Promise<number>;
}

export function optionRepository(conn: Connection): OptionRepository {
  const model: Model<OptionDoc> = conn.model('Option', optionSchema);
  const currentVersion = async () => {
    const top = await model.findOne({}, { version: 1 }).sort({ version: -1 }).lean();
    return top?.version ?? 0;
  };
  return {
    async all() {
      const docs = await model.find().lean();
      const values: Record<string, string> = defaultOptions();
      let version = 0;
      for (const d of docs) {
        values[d._id] = d.value;
        version = Math.max(version, d.version);
      }
      return { values, version };
    },
    async changedSince(since) {
      const docs = await model.find({ version: { $gt: since } }).lean();
      const values = Object.fromEntries(docs.map((d) => [d._id, d.value]));
      return { values, version: Math.max(since, await currentVersion()) };
    },
    async set(key, value) {
      const version = await nextSequence(conn, 'options');
      await model.updateOne({ _id: key }, { $set: { value, version } }, { upsert: true });
      return version;
    },
  };
}
