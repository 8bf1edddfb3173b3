import { isDuplicateKey, type KeyCipher, nextSequence } from '@aigw/common';
import type { Collection, Connection } from 'mongoose';
import type { NewToken, TokenDoc } from './token-repository.ts';

/**
 * A token as stored: never the key in plain, but the key encrypted (key_enc, AES-256-GCM, for the
 * owner's screens) and its HMAC-SHA256 (key_hash). `key` is only found on rows written before
 * keys were encrypted; they are migrated at start and by the periodic sweep (sweepLegacy).
 */
export type StoredToken = Omit<TokenDoc, 'key'> & { key?: string; key_enc?: string; key_hash?: string };

/** The lookup index: one row per key, `_id` the key's HMAC (FerretDB indexes only `_id`). */
export interface TokenKeyDoc {
  _id: string;
  token_id: number;
}

/** The two collections of tokens and the cipher that seals their keys. */
export interface SealedTokens {
  conn: Connection;
  tokens: Collection<StoredToken>;
  keys: Collection<TokenKeyDoc>;
  cipher: KeyCipher;
}

/** A stored row as the domain sees it: the key opened (or read in plain from a row not yet migrated). */
export function openToken(cipher: KeyCipher, doc: StoredToken | null): TokenDoc | null {
  if (!doc) return null;
  const { key_enc, key_hash: _h, key, ...rest } = doc;
  return { ...rest, key: key_enc ? cipher.decrypt(key_enc) : (key ?? '') };
}

/** Encrypts a plain row in place and indexes its key (idempotent). */
export async function migratePlain({ tokens, keys, cipher }: SealedTokens, doc: StoredToken): Promise<void> {
  if (!doc.key) return;
  const hash = cipher.digest(doc.key);
  await keys.updateOne({ _id: hash }, { $set: { token_id: doc._id } }, { upsert: true });
  await tokens.updateOne(
    { _id: doc._id, key: doc.key },
    { $set: { key_enc: cipher.encrypt(doc.key), key_hash: hash }, $unset: { key: '' } },
  );
}

/** Stores a token sealed, its key indexed first; `makeKey` is called again when a key collides. */
export async function insertSealed(
  { conn, tokens, keys, cipher }: SealedTokens,
  token: NewToken,
  makeKey: () => string,
): Promise<TokenDoc> {
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
}

/** The token of a key: one `_id` read in the index (several while a rotation is under way), then its row. */
export async function findByKey({ tokens, keys, cipher }: SealedTokens, key: string): Promise<TokenDoc | null> {
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
  return doc?.key_hash && hashes.includes(doc.key_hash) ? openToken(cipher, doc) : null;
}

/** Seals every token sealed with an earlier secret again with the current one; returns how many. */
export async function resealAll({ tokens, keys, cipher }: SealedTokens): Promise<number> {
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
}
