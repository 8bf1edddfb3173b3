import { AppError } from '@aigw/common/errors';
import { describe, expect, it } from 'vitest';
import type { RecordedOp } from '../data/ledger-repository.ts';
import { decideQueue, groupByUser, lookupIds, type Pending, planRound } from './ledger-round.ts';
import { credit, emptyState } from './ledger-state.ts';
import type { LedgerOp } from './wallet-ledger.ts';

const pending = (userId: number, op: LedgerOp): Pending => ({ userId, op, resolve: () => {}, reject: () => {} });
const creditOp = (id: string, amount: number, refusedBy?: string[]): LedgerOp => ({
  id,
  ...(refusedBy ? { refusedBy } : {}),
  decide: (s) => ({ kind: 'credit', amount, state: credit(s, amount), result: { quota: s.quota + amount } }),
});

describe('a ledger round', () => {
  it('when a queue repeats an id, names a recorded one and one refused by a recorded close, then only the new ones are decided', () => {
    const recorded = new Map<string, RecordedOp>([
      ['old', { id: 'old', userId: 1, seq: 3, kind: 'credit', amount: 5, result: {} }],
      ['close:r', { id: 'close:r', userId: 1, seq: 3, kind: 'refund', amount: 0, result: {} }],
    ]);
    const queue = [
      pending(1, creditOp('a', 10)),
      pending(1, creditOp('a', 10)),
      pending(1, creditOp('old', 5)),
      pending(1, creditOp('hold:r', 1, ['close:r'])),
      pending(1, creditOp('b', 7)),
    ];
    const { state, ops, answers, refused } = decideQueue(emptyState(), queue, recorded);
    expect(ops.map((o) => o.id)).toEqual(['a', 'b']);
    expect(state.quota).toBe(17);
    expect(refused).toBe(false);
    const outcomes = answers.map((a) => (a.outcome instanceof AppError ? a.outcome.message : a.outcome.replayed));
    expect(outcomes).toEqual([false, true, true, '该请求已结束', false]);
  });

  it('when an operation refuses, then nothing is recorded and a refusal on a cached head is unproven', () => {
    const refusing: LedgerOp = {
      id: 'x',
      decide: () => {
        throw new AppError('FAILED_PRECONDITION', '余额不足');
      },
    };
    const head = { entry: null, marked: true, checkedAt: 0 };
    const cached = planRound(1, head, [pending(1, refusing)], new Map(), false, 1_000);
    expect(cached.entry).toBeNull();
    expect(cached.unproven).toBe(true);
    expect(planRound(1, head, [pending(1, refusing)], new Map(), true, 1_000).unproven).toBe(false);
  });

  it('when a user has new operations, then the entry is seq+1 named by the first and batched when several', () => {
    const head = { entry: null, marked: true, checkedAt: 0 };
    const one = planRound(4, head, [pending(4, creditOp('c1', 3))], new Map(), true, 42);
    expect(one.entry).toMatchObject({ _id: '4:1', seq: 1, op_id: 'c1', kind: 'credit', amount: 3, at: 42 });
    const two = planRound(4, head, [pending(4, creditOp('c1', 3)), pending(4, creditOp('c2', 4))], new Map(), true, 42);
    expect(two.entry).toMatchObject({ op_id: 'c1', kind: 'batch', amount: 0 });
    expect(two.entry?.state.quota).toBe(7);
  });

  it('when a batch mixes users, then each user is looked up with the closes that would refuse its holds', () => {
    const batch = [
      pending(1, creditOp('a', 1)),
      pending(2, creditOp('hold:r', 1, ['close:r'])),
      pending(1, creditOp('b', 1)),
    ];
    const byUser = groupByUser(batch);
    expect([...byUser.keys()]).toEqual([1, 2]);
    expect(byUser.get(1)?.map((p) => p.op.id)).toEqual(['a', 'b']);
    expect(lookupIds([2], byUser)).toEqual(['hold:r', 'close:r']);
  });
});
