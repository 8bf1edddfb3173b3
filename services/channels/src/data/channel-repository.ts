import { insertWithNextId, wideSum } from '@aigw/common';
import type { Collection, Connection } from 'mongoose';

/** A stored channel. The key is kept encrypted (key_enc); see common/src/key-cipher.ts. */
export interface ChannelDoc {
  _id: number;
  name: string;
  type: number;
  key_enc: string;
  openai_organization: string;
  max_input_tokens: number;
  base_url: string;
  other: string;
  model_mapping: string;
  status_code_mapping: string;
  models: string;
  group: string;
  auto_ban: number;
  test_model: string;
  status: number;
  response_time: number;
  used_quota: number;
  balance: number;
  priority: number;
  weight: number;
  other_info: string;
  created_time: number;
  test_time: number;
  balance_updated_time: number;
  tag: string;
  /** '' one key; 'random' or 'polling': the key holds one key per line (absent on older rows). */
  multi_key_mode?: string;
  /** Multi-key channels: how many keys the key holds. */
  key_count?: number;
  /** Multi-key channels: the keys disabled on their own (the channel stays enabled while one is left). */
  disabled_keys?: DisabledKey[];
  /** The overrides (channel-overrides.ts), JSON text or "" (absent on older rows). */
  param_override?: string;
  header_override?: string;
  setting?: string;
  settings?: string;
}

/** One disabled key of a multi-key channel: its fingerprint, its 1-based line, why and when. */
export interface DisabledKey {
  hash: string;
  index: number;
  reason: string;
  time: number;
  /** 2 disabled by an admin (multi_key/manage), 3 (or absent) disabled automatically. */
  status?: number;
}

export type ChannelFields = Omit<ChannelDoc, '_id'>;

export interface ChannelRepository {
  ensureIndexes(): Promise<void>;
  insert(doc: ChannelFields): Promise<ChannelDoc>;
  get(id: number): Promise<ChannelDoc | null>;
  all(): Promise<ChannelDoc[]>;
  page(opts: {
    skip: number;
    limit: number;
    idSort: boolean;
    status?: number;
    type?: number;
  }): Promise<{ items: ChannelDoc[]; total: number }>;
  update(id: number, set: Partial<ChannelFields>): Promise<ChannelDoc | null>;
  remove(ids: number[]): Promise<number>;
  idsWithStatus(statuses: number[]): Promise<number[]>;
  /** Adds to a channel's used quota (usage events). */
  addUsedQuota(id: number, quota: number): Promise<void>;
  /** Replaces the sealed key only if it is still `from` (an edit in between wins); true if replaced. */
  replaceKeyEnc(id: number, from: string, to: string): Promise<boolean>;
}

export function channelRepository(conn: Connection): ChannelRepository {
  const channels = conn.collection<ChannelDoc>('channels') as unknown as Collection<ChannelDoc>;
  return {
    async ensureIndexes() {
      await channels.createIndex({ status: 1 });
    },
    async replaceKeyEnc(id, from, to) {
      const res = await channels.updateOne({ _id: id, key_enc: from }, { $set: { key_enc: to } });
      return res.modifiedCount === 1;
    },
    async insert(doc) {
      let stored: ChannelDoc | undefined;
      await insertWithNextId(conn, 'channels', async (id) => {
        stored = { _id: id, ...doc };
        await channels.insertOne(stored);
      });
      return stored as ChannelDoc;
    },
    get: (id) => channels.findOne({ _id: id }),
    all: () => channels.find({}).sort({ _id: -1 }).toArray(),
    async page({ skip, limit, idSort, status, type }) {
      const filter: Record<string, number> = {};
      if (status) filter.status = status;
      if (type) filter.type = type;
      const sort: Record<string, 1 | -1> = idSort ? { _id: -1 } : { priority: -1, _id: -1 };
      const [items, total] = await Promise.all([
        channels
          .find(filter, { projection: { key_enc: 0 } })
          .sort(sort)
          .skip(skip)
          .limit(limit)
          .toArray(),
        channels.countDocuments(filter),
      ]);
      return { items: items.map((c) => ({ ...c, key_enc: '' })), total };
    },
    async update(id, set) {
      if (Object.keys(set).length > 0) await channels.updateOne({ _id: id }, { $set: set });
      return channels.findOne({ _id: id });
    },
    async remove(ids) {
      if (ids.length === 0) return 0;
      return (await channels.deleteMany({ _id: { $in: ids } })).deletedCount;
    },
    async addUsedQuota(id, quota) {
      // As a double: a busy channel's used quota passes 2^31 (wideSum).
      await channels.updateOne({ _id: id }, { $inc: { used_quota: wideSum(quota) } });
    },
    async idsWithStatus(statuses) {
      const docs = await channels.find({ status: { $in: statuses } }, { projection: { _id: 1 } }).toArray();
      return docs.map((d) => d._id);
    },
  };
}
