import type { Collection, Connection, mongo } from 'mongoose';

type Filter<T> = mongo.Filter<T>;

import { escapeRegex, type KeyCipher } from '@aigw/common';
import {
  findByKey,
  insertSealed,
  migratePlain,
  openToken,
  resealAll,
  type SealedTokens,
  type StoredToken,
  type TokenKeyDoc,
} from './token-keys.ts';

/**
 * An API token as the domain sees it (the key in plain). Its remain and used quota live in the
 * owner's ledger state.
 */
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
  /** Requests per minute, tokens per minute and requests at once; absent or 0: no limit. */
  rpm_limit?: number;
  tpm_limit?: number;
  concurrency_limit?: number;
  /** Quota per day, week and month in the operator's time zone (token-budgets.ts); absent or 0: none. */
  budget_daily?: number;
  budget_weekly?: number;
  budget_monthly?: number;
  /** new-api's cross_group_retry: only for group auto (the next auto group after its channels failed). */
  cross_group_retry?: boolean;
}

export type NewToken = Omit<TokenDoc, '_id'>;

export interface TokenQuery {
  userId: number;
  keyword?: string;
  key?: string;
  onlyEnabled?: boolean;
}

export interface TokenRepository {
  /** Creates indexes and migrates rows stored in plain by an earlier version (see sweepLegacy). */
  ensureIndexes(): Promise<void>;
  /**
   * Encrypts and indexes rows stored in plain (an earlier version, e.g. a replica still running it
   * during a rolling upgrade); returns how many. Run at start and then periodically, so a lookup
   * never scans: an unknown key costs one `_id` read.
   */
  sweepLegacy(): Promise<number>;
  /**
   * After a rotation of TOKEN_KEY_SECRET: seals every token again with the current secret and
   * moves its lookup entry to the current digest; returns how many. Idempotent; lookups work
   * throughout (byKey tries the earlier secrets' digests too).
   */
  reseal(): Promise<number>;
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

/** The owner's tokens, by part of the name and enabled only when asked. */
function filterOf(q: TokenQuery): Filter<StoredToken> {
  const f: Filter<StoredToken> = { user_id: q.userId };
  if (q.keyword) f.name = { $regex: escapeRegex(q.keyword), $options: 'i' };
  if (q.onlyEnabled) f.status = 1;
  return f;
}

/**
 * Tokens in `tokens`, and `token_keys` mapping each key's HMAC (`_id`) to its token: the relay's
 * lookup by key is two `_id` reads, and neither collection holds a key in plain.
 */
export function tokenRepository(conn: Connection, cipher: KeyCipher): TokenRepository {
  const tokens = conn.collection<StoredToken>('tokens') as unknown as Collection<StoredToken>;
  const keys = conn.collection<TokenKeyDoc>('token_keys') as unknown as Collection<TokenKeyDoc>;
  const sealed: SealedTokens = { conn, tokens, keys, cipher };
  const open = (doc: StoredToken | null) => openToken(cipher, doc);
  const openAll = (docs: StoredToken[]) => docs.map((d) => open(d) as TokenDoc);
  return {
    async ensureIndexes() {
      // Keys are no longer stored in plain: the unique index on `key` would see every new row as null.
      await tokens.dropIndex('key_1').catch(() => undefined);
      await tokens.createIndex({ user_id: 1 });
      await this.sweepLegacy();
    },
    async sweepLegacy() {
      let n = 0;
      for (const doc of await tokens.find({ key: { $exists: true } }).toArray()) {
        await migratePlain(sealed, doc);
        n++;
      }
      return n;
    },
    insert: (token, makeKey) => insertSealed(sealed, token, makeKey),
    get: async (userId, id) => open(await tokens.findOne({ _id: id, user_id: userId })),
    byKey: (key) => findByKey(sealed, key),
    reseal: () => resealAll(sealed),
    byId: async (id) => open(await tokens.findOne({ _id: id })),
    async page(q, skip, limit) {
      const filter = filterOf(q);
      if (q.key) {
        // Searching by part of a key: only the owner's tokens, decrypted and matched here.
        const mine = openAll(await tokens.find(filter).sort({ _id: -1 }).toArray());
        const hits = mine.filter((t) => t.key.includes(q.key as string));
        return { items: hits.slice(skip, skip + limit), total: hits.length };
      }
      const [items, total] = await Promise.all([
        tokens.find(filter).sort({ _id: -1 }).skip(skip).limit(limit).toArray(),
        tokens.countDocuments(filter),
      ]);
      return { items: openAll(items), total };
    },
    async update(userId, id, set) {
      const { key: _k, ...fields } = set;
      if (Object.keys(fields).length > 0) await tokens.updateOne({ _id: id, user_id: userId }, { $set: fields });
      return open(await tokens.findOne({ _id: id, user_id: userId }));
    },
    async remove(userId, id) {
      const doc = await tokens.findOne({ _id: id, user_id: userId });
      if (!doc) return false;
      const res = await tokens.deleteOne({ _id: id, user_id: userId });
      const hash = doc.key_hash ?? (doc.key ? cipher.digest(doc.key) : '');
      if (hash) await keys.deleteOne({ _id: hash, token_id: id });
      return res.deletedCount === 1;
    },
    async touch(id, at) {
      await tokens.updateOne({ _id: id }, { $set: { accessed_time: at } });
    },
  };
}
