import { escapeRegex, insertWithNextId, isDuplicateKey } from '@aigw/common';
import type { Collection, Connection, mongo } from 'mongoose';

type Filter<T> = mongo.Filter<T>;

/** A redemption code (spec 02 section 3). */
export interface RedemptionDoc {
  _id: number;
  user_id: number;
  name: string;
  key: string;
  /** 1 unused, 2 disabled, 3 used. */
  status: number;
  quota: number;
  created_time: number;
  redeemed_time: number;
  used_user_id: number;
  /** Unix seconds after which it cannot be redeemed; 0 (or absent, rows from before) never. */
  expired_time?: number;
}

/**
 * The claim on a code: inserting it (unique `_id`) is what makes a code used exactly
 * once, whatever the number of concurrent attempts (keyed by the code's key). `credited` turns true once the quota is in
 * the wallet; a repair pass finishes claims a crash left half done.
 */
export interface RedemptionUse {
  /** The code's key (ids could in theory be drawn again after a delete; keys never are). */
  _id: string;
  code_id: number;
  user_id: number;
  username: string;
  quota: number;
  at: number;
  credited: boolean;
}

export interface RedemptionRepository {
  ensureIndexes(): Promise<void>;
  insert(doc: Omit<RedemptionDoc, '_id'>): Promise<RedemptionDoc>;
  get(id: number): Promise<RedemptionDoc | null>;
  byKey(key: string): Promise<RedemptionDoc | null>;
  page(keyword: string, skip: number, limit: number): Promise<{ items: RedemptionDoc[]; total: number }>;
  update(id: number, set: Partial<Omit<RedemptionDoc, '_id'>>): Promise<RedemptionDoc | null>;
  remove(id: number): Promise<boolean>;
  /** Removes used and disabled codes and unused ones expired before `nowSec`; answers how many. */
  removeInvalid(nowSec: number): Promise<number>;
  /** Claims a code; false when it was claimed before. */
  claim(use: RedemptionUse): Promise<boolean>;
  markCredited(key: string): Promise<void>;
  unfinishedClaims(olderThanSec: number): Promise<RedemptionUse[]>;
}

export function redemptionRepository(conn: Connection): RedemptionRepository {
  const codes = conn.collection<RedemptionDoc>('redemptions') as unknown as Collection<RedemptionDoc>;
  const uses = conn.collection<RedemptionUse>('redemption_uses') as unknown as Collection<RedemptionUse>;
  return {
    async ensureIndexes() {
      await codes.createIndex({ key: 1 }, { unique: true });
      await uses.createIndex({ credited: 1 });
    },
    async insert(doc) {
      let stored: RedemptionDoc | undefined;
      await insertWithNextId(conn, 'redemptions', async (id) => {
        stored = { _id: id, ...doc };
        await codes.insertOne(stored);
      });
      return stored as RedemptionDoc;
    },
    get: (id) => codes.findOne({ _id: id }),
    byKey: (key) => codes.findOne({ key }),
    async page(keyword, skip, limit) {
      const filter: Filter<RedemptionDoc> = {};
      const k = keyword.trim();
      if (k) {
        const or: Filter<RedemptionDoc>[] = [{ name: { $regex: escapeRegex(k), $options: 'i' } }];
        if (/^\d+$/.test(k)) or.push({ _id: Number(k) });
        filter.$or = or;
      }
      const [items, total] = await Promise.all([
        codes.find(filter).sort({ _id: -1 }).skip(skip).limit(limit).toArray(),
        codes.countDocuments(filter),
      ]);
      return { items, total };
    },
    async update(id, set) {
      if (Object.keys(set).length > 0) await codes.updateOne({ _id: id }, { $set: set });
      return codes.findOne({ _id: id });
    },
    async remove(id) {
      return (await codes.deleteOne({ _id: id })).deletedCount === 1;
    },
    async removeInvalid(nowSec) {
      const r = await codes.deleteMany({
        $or: [{ status: { $in: [2, 3] } }, { status: 1, expired_time: { $gt: 0, $lt: nowSec } }],
      });
      return r.deletedCount;
    },
    async claim(use) {
      try {
        await uses.insertOne(use);
        return true;
      } catch (err) {
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    },
    async markCredited(key) {
      await uses.updateOne({ _id: key }, { $set: { credited: true } });
    },
    unfinishedClaims: (olderThanSec) =>
      uses
        .find({ credited: false, at: { $lt: Math.floor(Date.now() / 1000) - olderThanSec } })
        .limit(100)
        .toArray(),
  };
}
