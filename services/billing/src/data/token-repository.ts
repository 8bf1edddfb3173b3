import type { Collection, Connection, mongo } from 'mongoose';

type Filter<T> = mongo.Filter<T>;

import { nextSequence } from '@aigw/common';
import { escapeRegex, isDuplicateKey } from './mongo-util.ts';

/** A stored API token. Its remain and used quota live in the owner's ledger state. */
export interface TokenDoc {
  _id: number;
  user_id: number;
  key: string;
  name: string;
  /** 1 enabled, 2 disabled (3 expired and 4 exhausted are derived when read). */
  status: number;
  unlimited_quota: boolean;
  created_time: number;
  accessed_time: number;
  expired_time: number;
  allow_ips: string;
  model_limits_enabled: boolean;
  model_limits: string;
  group: string;
}

export type NewToken = Omit<TokenDoc, '_id'>;

export interface TokenQuery {
  userId: number;
  keyword?: string;
  key?: string;
  onlyEnabled?: boolean;
}

export interface TokenRepository {
  ensureIndexes(): Promise<void>;
  /** Inserts a token; `makeKey` is called again when a key collides. */
  insert(token: NewToken, makeKey: () => string): Promise<TokenDoc>;
  get(userId: number, id: number): Promise<TokenDoc | null>;
  byKey(key: string): Promise<TokenDoc | null>;
  byId(id: number): Promise<TokenDoc | null>;
  page(q: TokenQuery, skip: number, limit: number): Promise<{ items: TokenDoc[]; total: number }>;
  update(userId: number, id: number, set: Partial<NewToken>): Promise<TokenDoc | null>;
  remove(userId: number, id: number): Promise<boolean>;
  touch(id: number, at: number): Promise<void>;
}

export function tokenRepository(conn: Connection): TokenRepository {
  const tokens = conn.collection<TokenDoc>('tokens') as unknown as Collection<TokenDoc>;
  const filterOf = (q: TokenQuery): Filter<TokenDoc> => {
    const f: Filter<TokenDoc> = { user_id: q.userId };
    if (q.keyword) f.name = { $regex: escapeRegex(q.keyword), $options: 'i' };
    if (q.key) f.key = { $regex: escapeRegex(q.key) };
    if (q.onlyEnabled) f.status = 1;
    return f;
  };
  return {
    async ensureIndexes() {
      await tokens.createIndex({ key: 1 }, { unique: true });
      await tokens.createIndex({ user_id: 1 });
    },
    async insert(token, makeKey) {
      let key = token.key;
      for (let attempt = 0; attempt < 50; attempt++) {
        const doc: TokenDoc = { _id: await nextSequence(conn, 'tokens'), ...token, key };
        try {
          await tokens.insertOne(doc);
          return doc;
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
          // Either the id (concurrent counters, see insertWithNextId) or, rarely, the key collided.
          if (await tokens.findOne({ key }, { projection: { _id: 1 } })) key = makeKey();
        }
      }
      throw new Error('could not store the token');
    },
    get: (userId, id) => tokens.findOne({ _id: id, user_id: userId }),
    byKey: (key) => tokens.findOne({ key }),
    byId: (id) => tokens.findOne({ _id: id }),
    async page(q, skip, limit) {
      const filter = filterOf(q);
      const [items, total] = await Promise.all([
        tokens.find(filter).sort({ _id: -1 }).skip(skip).limit(limit).toArray(),
        tokens.countDocuments(filter),
      ]);
      return { items, total };
    },
    async update(userId, id, set) {
      if (Object.keys(set).length > 0) await tokens.updateOne({ _id: id, user_id: userId }, { $set: set });
      return tokens.findOne({ _id: id, user_id: userId });
    },
    async remove(userId, id) {
      const res = await tokens.deleteOne({ _id: id, user_id: userId });
      return res.deletedCount === 1;
    },
    async touch(id, at) {
      await tokens.updateOne({ _id: id }, { $set: { accessed_time: at } });
    },
  };
}
