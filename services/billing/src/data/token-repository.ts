import type { Collection, Connection, mongo } from 'mongoose';

type Filter<T> = mongo.Filter<T>;

import { escapeRegex, isDuplicateKey, type KeyCipher, nextSequence } from '@aigw/common';

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

/**
 * A token as stored: never the key in plain, but the key encrypted (key_enc, AES-256-GCM, for the
 * owner's screens) and its HMAC-SHA256 (key_hash). `key` is only found on rows written before
 * keys were encrypted; they are migrated at start and by the periodic sweep (sweepLegacy).
 */
type StoredToken = Omit<TokenDoc, 'key'> & { key?: string; key_enc?: string; key_hash?: string };

/** The lookup index: one row per key, `_id` the key's HMAC (FerretDB indexes only `_id`). */
interface TokenKeyDoc {
  _id: string;
  token_id: number;
}

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

/**
 * Tokens in `tokens`, and `token_keys` mapping each key's HMAC (`_id`) to its token: the relay's
 * lookup by key is two `_id` reads, and neither collection holds a key in plain.
 */
export function tokenRepository(conn: Connection, cipher: KeyCipher): TokenRepository {
  const tokens = conn.collection<StoredToken>('tokens') as unknown as Collection<StoredToken>;
  const keys = conn.collection<TokenKeyDoc>('token_keys') as unknown as Collection<TokenKeyDoc>;
  const open = (doc: StoredToken | null): TokenDoc | null => {
    if (!doc) return null;
    const { key_enc, key_hash: _h, key, ...rest } = doc;
    return { ...rest, key: key_enc ? cipher.decrypt(key_enc) : (key ?? '') };
  };
  const openAll = (docs: StoredToken[]) => docs.map((d) => open(d) as TokenDoc);
  const filterOf = (q: TokenQuery): Filter<StoredToken> => {
    const f: Filter<StoredToken> = { user_id: q.userId };
    if (q.keyword) f.name = { $regex: escapeRegex(q.keyword), $options: 'i' };
    if (q.onlyEnabled) f.status = 1;
    return f;
  };
  /** Encrypts a plain row in place and indexes its key (idempotent). */
  async function migrate(doc: StoredToken): Promise<void> {
    if (!doc.key) return;
    const hash = cipher.digest(doc.key);
    await keys.updateOne({ _id: hash }, { $set: { token_id: doc._id } }, { upsert: true });
    await tokens.updateOne(
      { _id: doc._id, key: doc.key },
      { $set: { key_enc: cipher.encrypt(doc.key), key_hash: hash }, $unset: { key: '' } },
    );
  }
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
        await migrate(doc);
        n++;
      }
      return n;
    },
    async insert(token, makeKey) {
      const { key: first, ...rest } = token;
      let key = first;
      for (let attempt = 0; attempt < 50; attempt++) {
        const id = await nextSequence(conn, 'tokens');
        const hash = cipher.digest(key);
        try {
          await keys.insertOne({ _id: hash, token_id: id });
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
          key = makeKey(); // the key collided (rarely)
          continue;
        }
        try {
          await tokens.insertOne({ _id: id, ...rest, key_enc: cipher.encrypt(key), key_hash: hash });
          return { _id: id, ...rest, key };
        } catch (err) {
          await keys.deleteOne({ _id: hash, token_id: id });
          // The id collided (concurrent counters, see insertWithNextId): draw again.
          if (!isDuplicateKey(err)) throw err;
        }
      }
      throw new Error('could not store the token');
    },
    get: async (userId, id) => open(await tokens.findOne({ _id: id, user_id: userId })),
    async byKey(key) {
      const hashes = cipher.digests(key);
      // One _id read (several _ids while a rotation is under way). An unknown key ends here: no
      // scan of `tokens` (rows in plain are found by sweepLegacy).
      const entry =
        hashes.length === 1
          ? await keys.findOne({ _id: hashes[0] as string })
          : await keys.findOne({ _id: { $in: hashes } });
      if (!entry) return null;
      const doc = await tokens.findOne({ _id: entry.token_id });
      // A token removed between the two reads, or an entry left by a failed insert. (During a
      // reseal the entry and the row may name different secrets' digests of the same key.)
      return doc?.key_hash && hashes.includes(doc.key_hash) ? open(doc) : null;
    },
    async reseal() {
      let n = 0;
      const stale = tokens.find({ key_enc: { $exists: true } }, { projection: { _id: 1, key_enc: 1, key_hash: 1 } });
      for await (const doc of stale) {
        if (!doc.key_enc || !cipher.stale(doc.key_enc)) continue;
        const key = cipher.decrypt(doc.key_enc);
        const hash = cipher.digest(key);
        // New entry first, then the row, then the old entry: a lookup finds the token at every step.
        await keys.updateOne({ _id: hash }, { $set: { token_id: doc._id } }, { upsert: true });
        await tokens.updateOne(
          { _id: doc._id, key_enc: doc.key_enc },
          { $set: { key_enc: cipher.encrypt(key), key_hash: hash } },
        );
        if (doc.key_hash && doc.key_hash !== hash) await keys.deleteOne({ _id: doc.key_hash, token_id: doc._id });
        n++;
      }
      return n;
    },
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
