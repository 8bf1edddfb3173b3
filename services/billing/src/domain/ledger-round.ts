import { AppError, precondition } from '@aigw/common/errors';
import type { LedgerEntry, OpRecord, RecordedOp } from '../data/ledger-repository.ts';
import { draftOf, emptyState, expireHolds, type Hold, type LedgerState, sealDraft } from './ledger-state.ts';
import { pruneEnded } from './subscription-state.ts';
import type { Applied, LedgerOp } from './wallet-ledger.ts';

/** An operation waiting for its round, with the caller's promise. */
export interface Pending {
  userId: number;
  op: LedgerOp;
  resolve(a: Applied): void;
  reject(err: unknown): void;
}

/** A user's newest entry as this replica knows it. */
export interface Head {
  entry: LedgerEntry | null;
  /** Whether the markers of the entry's operations are known to be written. */
  marked: boolean;
  /** When the entry was last known to be the newest (written or probed); clock() ms. */
  checkedAt: number;
}

/** What a round decided for one user: the entry to append and the answers to give once it is. */
export interface Plan {
  userId: number;
  entry: LedgerEntry | null;
  answers: { p: Pending; outcome: Applied | AppError }[];
  /** Refusals decided on a cached state, with nothing written to prove it current. */
  unproven: boolean;
}

const isApplied = (o: Applied | AppError | undefined): boolean => o !== undefined && !(o instanceof AppError);

/**
 * Decides a user's queued operations in arrival order on the running state: a recorded one
 * answers as a replay, one refused by a recorded operation as 该请求已结束, a repeated id as its
 * first answer. `ops` are the operations to record; `refused`: some decide threw.
 */
export function decideQueue(start: LedgerState, queue: Pending[], recorded: Map<string, RecordedOp>) {
  let state = start;
  const ops: OpRecord[] = [];
  const answers: Plan['answers'] = [];
  const seen = new Map<string, Applied | AppError>();
  let refused = false;
  for (const p of queue) {
    const { op } = p;
    let outcome = seen.get(op.id);
    if (outcome) {
      answers.push({ p, outcome: outcome instanceof AppError ? outcome : { ...outcome, replayed: true } });
      continue;
    }
    const rec = recorded.get(op.id);
    if (rec) outcome = { op: rec, state, replayed: true };
    else if (op.refusedBy?.some((id) => recorded.has(id) || isApplied(seen.get(id)))) {
      outcome = precondition('该请求已结束');
    } else {
      try {
        const change = op.decide(state);
        state = change.state;
        const record: OpRecord = { id: op.id, kind: change.kind, amount: change.amount, result: change.result };
        ops.push(record);
        outcome = { op: record, state, replayed: false };
      } catch (err) {
        outcome = err instanceof AppError ? err : new AppError('INTERNAL', '记账失败', { cause: err });
        refused = true;
      }
    }
    seen.set(op.id, outcome);
    answers.push({ p, outcome });
  }
  return { state, ops, answers, refused };
}

/**
 * A user's part of a round at `now`: expired holds given back and ended subscriptions taken out,
 * then the queue decided (decideQueue), and the entry seq+1 that records it (null: nothing to record).
 */
export function planRound(
  userId: number,
  head: Head,
  queue: Pending[],
  recorded: Map<string, RecordedOp>,
  fresh: boolean,
  now: number,
  lapsedHold?: (rid: string, h: Hold) => boolean,
): Plan {
  const given = expireHolds(head.entry?.state ?? emptyState(), now, lapsedHold);
  const expired = given.expired;
  // Ended subscriptions leave the state with the user's next change (their record is archived).
  const { state: start, ended } = pruneEnded(given.state, Object.values(given.state.holds), now);
  // One copy of the holds for the round (not one per operation); `start` stays as it was.
  const draft = draftOf(start);
  const { state, ops, answers, refused } = decideQueue(draft, queue, recorded);
  sealDraft(draft);
  if (ops.length === 0) return { userId, entry: null, answers, unproven: refused && !fresh };
  const first = ops[0] as OpRecord;
  const seq = (head.entry?.seq ?? 0) + 1;
  const entry: LedgerEntry = {
    _id: `${userId}:${seq}`,
    user_id: userId,
    seq,
    op_id: first.id,
    kind: ops.length === 1 ? first.kind : 'batch',
    amount: ops.length === 1 ? first.amount : 0,
    result: ops.length === 1 ? first.result : {},
    ops,
    state,
    ...(expired.length > 0 ? { expired } : {}),
    ...(Object.keys(ended).length > 0 ? { ended_subs: ended } : {}),
    at: now,
  };
  return { userId, entry, answers, unproven: false };
}

/** Gives a plan's answers to their callers. */
export function answer(plan: Plan): void {
  for (const { p, outcome } of plan.answers) {
    if (outcome instanceof AppError) p.reject(outcome);
    else p.resolve(outcome);
  }
}

/** A round's operations by user, in arrival order. */
export function groupByUser(batch: Pending[]): Map<number, Pending[]> {
  const byUser = new Map<number, Pending[]>();
  for (const p of batch) {
    const q = byUser.get(p.userId);
    if (q) q.push(p);
    else byUser.set(p.userId, [p]);
  }
  return byUser;
}

/** The operation ids a round looks up: the users' operations and those that would refuse them. */
export function lookupIds(users: number[], byUser: Map<number, Pending[]>): string[] {
  const ids = new Set<string>();
  for (const u of users) {
    for (const { op } of byUser.get(u) ?? []) {
      ids.add(op.id);
      for (const id of op.refusedBy ?? []) ids.add(id);
    }
  }
  return [...ids];
}
