import type { Collection, Connection } from 'mongoose';
import type { LedgerState } from '../domain/ledger-state.ts';
import { isDuplicateKey } from './mongo-util.ts';

/**
 * One change of a user's money state. `_id` is `<user>:<seq>`: appending seq+1 is the
 * compare-and-swap (a unique insert is atomic on every MongoDB-compatible server, unlike
 * read-modify-write updates). `op_id` is unique too: an operation can be recorded only once.
 */
export interface LedgerEntry {
  _id: string;
  user_id: number;
  seq: number;
  op_id: string;
  kind: string;
  amount: number;
  /** What the operation answered (replays answer the same). */
  result: Record<string, number | string | boolean>;
  state: LedgerState;
  /** Holds given back by this change because they expired. */
  expired?: string[];
  at: number;
}

/** A cached pointer to the newest entry (best effort: may lag, never leads). */
interface WalletHead {
  _id: number;
  seq: number;
  quota: number;
  used_quota: number;
  request_count: number;
}

/** Where an operation's entry is: `_id`-keyed, because the local server only indexes `_id` lookups. */
interface OpMarker {
  _id: string;
  user_id: number;
  seq: number;
}

/** The head pointer is rewritten every HEAD_EVERY entries. */
const HEAD_EVERY = 8;

export type AppendOutcome = 'ok' | 'conflict' | 'duplicate';

export interface LedgerRepository {
  ensureIndexes(): Promise<void>;
  /** The newest entry of a user, probing forward from `from` when given (null: no entry yet). */
  latest(userId: number, from?: LedgerEntry | null): Promise<LedgerEntry | null>;
  append(entry: LedgerEntry): Promise<AppendOutcome>;
  /**
   * The entry of an operation. `thorough` also searches by op_id when the marker is missing (a
   * crash between the entry and its marker); without it only the fast `_id` lookup runs.
   */
  findOp(opId: string, thorough?: boolean): Promise<LedgerEntry | null>;
}

export function ledgerRepository(conn: Connection): LedgerRepository {
  const entries = conn.collection<LedgerEntry>('ledger_entries') as unknown as Collection<LedgerEntry>;
  const heads = conn.collection<WalletHead>('wallets') as unknown as Collection<WalletHead>;
  const markers = conn.collection<OpMarker>('ledger_ops') as unknown as Collection<OpMarker>;
  const byId = (userId: number, seq: number) => entries.findOne({ _id: `${userId}:${seq}` });
  const mark = async (e: LedgerEntry) => {
    try {
      await markers.insertOne({ _id: e.op_id, user_id: e.user_id, seq: e.seq });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  };

  return {
    async ensureIndexes() {
      await entries.createIndex({ op_id: 1 }, { unique: true });
    },
    async latest(userId, from) {
      let found: LedgerEntry | null = from ?? null;
      if (!found) {
        const headSeq = (await heads.findOne({ _id: userId }))?.seq ?? 0;
        found = headSeq > 0 ? await byId(userId, headSeq) : null;
      }
      let seq = found?.seq ?? 0;
      // Probe forward: the head may lag behind concurrent appends.
      for (;;) {
        const next = await byId(userId, seq + 1);
        if (!next) return found;
        found = next;
        seq += 1;
      }
    },
    async append(entry) {
      try {
        await entries.insertOne(entry);
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        // Either seq was taken (another writer won the race) or op_id was recorded before.
        const occupant = await byId(entry.user_id, entry.seq);
        return occupant && occupant.op_id !== entry.op_id ? 'conflict' : 'duplicate';
      }
      await mark(entry);
      const { quota, used_quota, request_count } = entry.state;
      // Best effort, not awaited, and only every few entries: readers probe forward from a
      // lagging head, so this only bounds how far a cold read has to probe.
      if (entry.seq % HEAD_EVERY !== 1) return 'ok';
      heads
        .updateOne(
          { _id: entry.user_id },
          { $set: { seq: entry.seq, quota, used_quota, request_count } },
          { upsert: true },
        )
        .catch(() => undefined);
      return 'ok';
    },
    async findOp(opId, thorough = false) {
      const marker = await markers.findOne({ _id: opId });
      if (marker) return byId(marker.user_id, marker.seq);
      if (!thorough) return null;
      const found = await entries.findOne({ op_id: opId });
      if (found) await mark(found);
      return found;
    },
  };
}
