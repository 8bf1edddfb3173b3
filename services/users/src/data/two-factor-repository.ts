import { isDuplicateKey } from '@aigw/common';
import type { Connection } from 'mongoose';
import type { TwoFactorRecord, TwoFactorStore } from '../domain/two-factor.ts';

/** One user's TOTP factor; `_id` is the user id (FerretDB indexes only `_id`, docs/adr/0001). */
interface TwoFactorDoc {
  _id: number;
  /** The base32 secret, AES-256-GCM encrypted (key-cipher `v2:<kid>:` form; `v1:` still read). */
  secret: string;
  is_enabled: boolean;
  failed_attempts: number;
  /** Unix ms; 0 when not locked. */
  locked_until: number;
  /** The newest TOTP time step accepted (a code is good once). */
  last_step: number;
  last_used_at: number;
  created_at: number;
}

/** A backup code: `_id` is the keyed digest of user id and code, so only its holder can name it. */
interface BackupCodeDoc {
  _id: string;
  user_id: number;
  /** Unix ms when spent; 0 while unused. */
  used_at: number;
}

const toRecord = (d: TwoFactorDoc): TwoFactorRecord => ({
  userId: d._id,
  secret: d.secret,
  enabled: d.is_enabled,
  failedAttempts: d.failed_attempts ?? 0,
  lockedUntil: d.locked_until ?? 0,
  lastStep: d.last_step ?? 0,
});

/** The `two_fa` and `two_fa_backup_codes` collections (no transactions: each write is one document). */
export function twoFactorRepository(conn: Connection): TwoFactorStore {
  const factors = conn.collection<TwoFactorDoc>('two_fa');
  const codes = conn.collection<BackupCodeDoc>('two_fa_backup_codes');
  const replaceCodes = async (userId: number, digests: string[]) => {
    await codes.deleteMany({ user_id: userId });
    if (digests.length > 0) await codes.insertMany(digests.map((_id) => ({ _id, user_id: userId, used_at: 0 })));
  };
  return {
    async get(userId) {
      const d = await factors.findOne({ _id: userId });
      return d ? toRecord(d) : undefined;
    },
    async createPending(userId, secret, digests) {
      // An enabled factor is never replaced: the upsert of its _id then fails as a duplicate.
      try {
        await factors.updateOne(
          { _id: userId, is_enabled: false },
          {
            $set: {
              secret,
              is_enabled: false,
              failed_attempts: 0,
              locked_until: 0,
              last_step: 0,
              last_used_at: 0,
              created_at: Date.now(),
            },
          },
          { upsert: true },
        );
      } catch (err) {
        if (isDuplicateKey(err)) return false;
        throw err;
      }
      await replaceCodes(userId, digests);
      return true;
    },
    async enable(userId, step) {
      const r = await factors.updateOne(
        { _id: userId, is_enabled: false },
        { $set: { is_enabled: true, failed_attempts: 0, locked_until: 0, last_step: step, last_used_at: Date.now() } },
      );
      return r.modifiedCount === 1;
    },
    async remove(userId) {
      const r = await factors.deleteOne({ _id: userId });
      await codes.deleteMany({ user_id: userId });
      return r.deletedCount === 1;
    },
    async acceptStep(userId, step) {
      const r = await factors.updateOne(
        { _id: userId, is_enabled: true, last_step: { $lt: step } },
        { $set: { last_step: step, failed_attempts: 0, locked_until: 0, last_used_at: Date.now() } },
      );
      return r.modifiedCount === 1;
    },
    async spendBackupCode(userId, digest) {
      const r = await codes.updateOne({ _id: digest, user_id: userId, used_at: 0 }, { $set: { used_at: Date.now() } });
      if (r.modifiedCount !== 1) return false;
      await factors.updateOne(
        { _id: userId },
        { $set: { failed_attempts: 0, locked_until: 0, last_used_at: Date.now() } },
      );
      return true;
    },
    async recordFailure(userId, maxFailures, lockMs) {
      const d = await factors.findOneAndUpdate(
        { _id: userId },
        { $inc: { failed_attempts: 1 } },
        { returnDocument: 'after' },
      );
      if (!d || (d.failed_attempts ?? 0) < maxFailures) return 0;
      const until = Date.now() + lockMs;
      // The lock starts a fresh count: after it ends, the next failures count from zero.
      await factors.updateOne({ _id: userId }, { $set: { locked_until: until, failed_attempts: 0 } });
      return until;
    },
    replaceBackupCodes: replaceCodes,
    unusedBackupCodes: (userId) => codes.countDocuments({ user_id: userId, used_at: 0 }),
    countEnabled: () => factors.countDocuments({ is_enabled: true }),
    countUsers: () => conn.collection('users').countDocuments({ deleted_at: 0 }),
    async sealedSecrets() {
      const docs = await factors.find({}, { projection: { secret: 1 } }).toArray();
      return docs.map((d) => ({ userId: d._id, secret: d.secret }));
    },
    async replaceSecret(userId, from, to) {
      const r = await factors.updateOne({ _id: userId, secret: from }, { $set: { secret: to } });
      return r.modifiedCount === 1;
    },
  };
}
