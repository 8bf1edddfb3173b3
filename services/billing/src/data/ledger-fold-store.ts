import type { Collection, Connection, Mongoose } from 'mongoose';
import { type FoldStore, isRequestOp, type LedgerCheckpoint } from '../domain/ledger-fold.ts';
import { type LedgerEntry, opsOf, type WalletHead } from './ledger-repository.ts';

/** A marker of a kept operation, with its answer (the shape of `ledger_ops`, ledger-repository.ts). */
interface KeptMarker {
  _id: string;
  user_id: number;
  seq: number;
  kind: string;
  amount: number;
  result: Record<string, unknown>;
}

/**
 * The fold's steps over `ledger_entries`, `ledger_ops`, `wallets` and `ledger_checkpoints`. Every
 * read and delete goes by `_id` (a value, a list or a range: the only index the local server uses).
 */
export function ledgerFoldStore(conn: Connection): FoldStore {
  const entries = conn.collection('ledger_entries') as unknown as Collection<LedgerEntry>;
  const heads = conn.collection('wallets') as unknown as Collection<WalletHead>;
  const markers = conn.collection('ledger_ops') as unknown as Collection<KeptMarker>;
  const checkpoints = conn.collection('ledger_checkpoints') as unknown as Collection<LedgerCheckpoint>;
  const { BSON } = (conn.base as Mongoose).mongo;
  const size = (d: LedgerEntry) => BSON.calculateObjectSize(d as never);
  return {
    async users(after, limit) {
      const docs = await heads
        .find({ _id: { $gt: after } }, { projection: { _id: 1 } })
        .sort({ _id: 1 })
        .limit(limit)
        .toArray();
      return docs.map((d) => d._id);
    },
    async head(userId) {
      const h = await heads.findOne({ _id: userId });
      return { seq: h?.seq ?? 0, folded: h?.folded ?? 0 };
    },
    checkpoint: (userId, seq) => checkpoints.findOne({ _id: `${userId}:ck${seq}` }),
    async entries(userId, seqs) {
      if (seqs.length === 0) return [];
      const found = await entries.find({ _id: { $in: seqs.map((s) => `${userId}:${s}`) } }).toArray();
      return found.sort((a, b) => a.seq - b.seq);
    },
    async writeCheckpoint(ck) {
      await checkpoints.replaceOne({ _id: ck._id }, ck, { upsert: true });
    },
    async moveHead(userId, folded) {
      await heads.updateOne({ _id: userId }, { $max: { folded } }, { upsert: true });
    },
    async keepMarkers(list) {
      const writes = list.flatMap((e) =>
        opsOf(e)
          .filter((o) => !isRequestOp(o.id))
          .map((o) => ({
            replaceOne: {
              filter: { _id: o.id },
              replacement: { user_id: e.user_id, seq: e.seq, kind: o.kind, amount: o.amount, result: o.result },
              upsert: true,
            },
          })),
      );
      if (writes.length > 0) await markers.bulkWrite(writes as never, { ordered: false });
    },
    async dropEntries(list) {
      if (list.length === 0) return { markers: 0, bytes: 0 };
      const requestIds = list.flatMap((e) =>
        opsOf(e)
          .filter((o) => isRequestOp(o.id))
          .map((o) => o.id),
      );
      const gone = requestIds.length > 0 ? await markers.deleteMany({ _id: { $in: requestIds } }) : null;
      await entries.deleteMany({ _id: { $in: list.map((e) => e._id) } });
      return { markers: gone?.deletedCount ?? 0, bytes: list.reduce((s, e) => s + size(e), 0) };
    },
    async finishCheckpoint(ck) {
      await checkpoints.updateOne({ _id: ck._id }, { $set: { done: true } });
      // The user's checkpoints below this one (`<user>:ck...`: an _id range): the earlier one, and
      // any a crashed pass wrote before it could move the head. Never one above: another replica's
      // pass may have gone further, and the head names that one.
      await checkpoints.deleteMany({
        _id: { $gte: `${ck.user_id}:ck`, $lt: `${ck.user_id}:cl` },
        seq: { $lt: ck.seq },
      });
    },
  };
}
