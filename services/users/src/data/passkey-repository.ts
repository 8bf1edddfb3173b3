import type { Connection } from 'mongoose';
import type { PasskeyRecord, PasskeyStore } from '../domain/passkeys.ts';

/** A user's passkey; `_id` is the user id (one passkey per user, as new-api). */
interface PasskeyDoc {
  _id: number;
  /** base64url credential id. */
  credential_id: string;
  /** base64url COSE public key. */
  public_key: string;
  sign_count: number;
  transports: string[];
  aaguid: string;
  backup_eligible: boolean;
  backup_state: boolean;
  /** Unix seconds. */
  created_at: number;
  last_used_at: number;
}

/** Credential id -> user: logins name the credential, not the user (FerretDB indexes only `_id`). */
interface PasskeyIdDoc {
  _id: string;
  user_id: number;
}

const toRecord = (d: PasskeyDoc): PasskeyRecord => ({
  userId: d._id,
  credentialId: d.credential_id,
  publicKey: d.public_key,
  signCount: d.sign_count ?? 0,
  transports: d.transports ?? [],
  aaguid: d.aaguid ?? '',
  backupEligible: d.backup_eligible ?? false,
  backupState: d.backup_state ?? false,
  createdAt: d.created_at ?? 0,
  lastUsedAt: d.last_used_at ?? 0,
});

/**
 * The `passkeys` and `passkey_ids` collections. No transactions: the user's document is the
 * truth, the id map only finds it (a stale map entry leads to a document whose credential id
 * differs, which the use cases treat as unknown).
 */
export function passkeyRepository(conn: Connection): PasskeyStore {
  const keys = conn.collection<PasskeyDoc>('passkeys');
  const ids = conn.collection<PasskeyIdDoc>('passkey_ids');
  return {
    async get(userId) {
      const d = await keys.findOne({ _id: userId });
      return d ? toRecord(d) : undefined;
    },
    async findByCredentialId(credentialId) {
      const map = await ids.findOne({ _id: credentialId });
      if (!map) return undefined;
      const d = await keys.findOne({ _id: map.user_id });
      return d && d.credential_id === credentialId ? toRecord(d) : undefined;
    },
    async save(r) {
      const old = await keys.findOne({ _id: r.userId });
      await ids.updateOne({ _id: r.credentialId }, { $set: { user_id: r.userId } }, { upsert: true });
      await keys.replaceOne(
        { _id: r.userId },
        {
          credential_id: r.credentialId,
          public_key: r.publicKey,
          sign_count: r.signCount,
          transports: r.transports,
          aaguid: r.aaguid,
          backup_eligible: r.backupEligible,
          backup_state: r.backupState,
          created_at: r.createdAt,
          last_used_at: r.lastUsedAt,
        },
        { upsert: true },
      );
      if (old && old.credential_id !== r.credentialId) await ids.deleteOne({ _id: old.credential_id });
    },
    async advance(userId, credentialId, fromCount, toCount, usedAt) {
      // Conditional on the count read before the check: of two assertions racing with the same
      // count, one advances it and the other is refused.
      const r = await keys.updateOne(
        { _id: userId, credential_id: credentialId, sign_count: fromCount },
        { $set: { sign_count: toCount, last_used_at: usedAt } },
      );
      return r.modifiedCount === 1 || (r.matchedCount === 1 && fromCount === toCount);
    },
    async remove(userId) {
      const d = await keys.findOne({ _id: userId });
      if (!d) return false;
      const r = await keys.deleteOne({ _id: userId, credential_id: d.credential_id });
      await ids.deleteOne({ _id: d.credential_id });
      return r.deletedCount === 1;
    },
  };
}
