import { timingSafeEqual } from 'node:crypto';
import { isDuplicateKey } from '@aigw/common';
import type { Connection, Model } from 'mongoose';
import { Schema } from 'mongoose';
import type { CodeStore } from '../domain/ports.ts';

interface CodeDoc {
  /** `<purpose>:<key>` */
  _id: string;
  code: string;
  sent_at: number;
  expires_at: number;
  /** Wrong guesses so far; the code dies after MAX_ATTEMPTS (a 6-digit code must not be guessable). */
  attempts: number;
}

const MAX_ATTEMPTS = 5;

const codeSchema = new Schema<CodeDoc>(
  { _id: String, code: String, sent_at: Number, expires_at: Number, attempts: { type: Number, default: 0 } },
  { collection: 'verification_codes', versionKey: false },
);

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * One-time codes in MongoDB. The server has no TTL indexes (docs/adr/0001), so expiry is checked
 * on read and a code is replaced or removed when it is used or re-issued.
 */
export function codeRepository(conn: Connection): CodeStore {
  const model: Model<CodeDoc> =
    (conn.models.VerificationCode as Model<CodeDoc> | undefined) ?? conn.model<CodeDoc>('VerificationCode', codeSchema);
  const id = (purpose: string, key: string) => `${purpose}:${key.toLowerCase()}`;
  return {
    async issue(purpose, key, code, ttlMs, resendGuardMs) {
      const now = Date.now();
      const _id = id(purpose, key);
      const fresh = { code, sent_at: now, expires_at: now + ttlMs, attempts: 0 };
      // Replace a code older than the guard in one conditional write; a racing second send loses.
      const replaced = await model.updateOne({ _id, sent_at: { $lte: now - resendGuardMs } }, { $set: fresh });
      if (replaced.matchedCount === 1) return true;
      if (await model.exists({ _id })) return false;
      try {
        await model.create({ _id, ...fresh });
        return true;
      } catch (err) {
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    },
    async consume(purpose, key, code) {
      const _id = id(purpose, key);
      const doc = await model.findOne({ _id }).lean<CodeDoc>();
      if (!doc || doc.expires_at < Date.now()) return false;
      if (!sameText(doc.code, code)) {
        if ((doc.attempts ?? 0) + 1 >= MAX_ATTEMPTS) await model.deleteOne({ _id, code: doc.code });
        else await model.updateOne({ _id, code: doc.code }, { $inc: { attempts: 1 } });
        return false;
      }
      // Delete only this exact code so that two concurrent uses cannot both succeed.
      const removed = await model.deleteOne({ _id, code: doc.code, sent_at: doc.sent_at });
      return removed.deletedCount === 1;
    },
    async discard(purpose, key) {
      await model.deleteOne({ _id: id(purpose, key) });
    },
  };
}
