import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../data/ledger-repository.ts';
import { addTotals, foldable, isRequestOp, nextCheckpoint } from './ledger-fold.ts';

const entry = (seq: number, at: number, ops: [string, string, number][] = []): LedgerEntry => ({
  _id: `7:${seq}`,
  user_id: 7,
  seq,
  op_id: ops[0]?.[0] ?? `x:${seq}`,
  kind: 'batch',
  amount: 0,
  result: {},
  ops: ops.map(([id, kind, amount]) => ({ id, kind, amount, result: {} })),
  state: { quota: 0, used_quota: 0, request_count: 0, tokens: {}, holds: {} },
  at,
});

describe('foldable', () => {
  it('when entries are older than the cutoff, then the run from `from` folds, never the last one read', () => {
    const read = [entry(3, 10), entry(4, 20), entry(5, 30)];
    expect(foldable(read, 3, 100).map((e) => e.seq)).toEqual([3, 4]);
  });
  it('when an entry is not older than the cutoff or one is missing, then the run stops there', () => {
    expect(foldable([entry(3, 10), entry(4, 100), entry(5, 10), entry(6, 10)], 3, 100).map((e) => e.seq)).toEqual([3]);
    expect(foldable([entry(3, 10), entry(5, 10), entry(6, 10)], 3, 100).map((e) => e.seq)).toEqual([]);
    expect(foldable([entry(4, 10), entry(5, 10)], 3, 100)).toEqual([]);
  });
});

describe('checkpoint totals', () => {
  it('when a run folds into a checkpoint, then each kind counts and sums its operations on top of the previous one', () => {
    const first = nextCheckpoint(
      7,
      null,
      [entry(1, 0, [['credit:a', 'credit', 1000]]), entry(2, 0, [['hold:r', 'hold', 20]])],
      5,
    );
    expect(first).toMatchObject({ _id: '7:ck2', seq: 2, from: 1, entries: 2, done: false });
    const second = nextCheckpoint(
      7,
      first,
      [
        entry(3, 0, [
          ['close:r', 'settle', 15],
          ['hold:s', 'hold', 30],
        ]),
      ],
      6,
    );
    expect(second).toMatchObject({ _id: '7:ck3', seq: 3, from: 3, entries: 3 });
    expect(second.kinds).toEqual({
      credit: { count: 1, sum: 1000 },
      hold: { count: 2, sum: 50 },
      settle: { count: 1, sum: 15 },
    });
    // The previous checkpoint's totals are not changed.
    expect(first.kinds.hold).toEqual({ count: 1, sum: 20 });
    expect(addTotals({}, [])).toEqual({});
  });
  it('when an operation is a relay request, then its marker may go with its entry; other kinds are kept', () => {
    expect(['hold:r1', 'close:r1', 'credit:topup:9', 'adjust:x', 'token-init:3'].map(isRequestOp)).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
  });
});
