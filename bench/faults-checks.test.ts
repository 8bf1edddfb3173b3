import { describe, expect, it } from 'vitest';
import {
  checkUser,
  errorsByPhase,
  kindsOf,
  type LedgerEntry,
  outageOf,
  readLedger,
  relayBound,
  type UserCheckInput,
  unmarkedEntries,
} from './faults-checks.ts';

const PRICE = 30;
const USER = 7;

/** A ledger entry of USER with the given operations. */
const entry = (seq: number, at: number, ops: [string, string, number][], expired?: string[]): LedgerEntry => ({
  user_id: USER,
  seq,
  at,
  ops: ops.map(([id, kind, amount]) => ({ id, kind, amount })),
  ...(expired ? { expired } : {}),
});

/**
 * A user who sent three requests: r1 and r2 answered (held, settled and logged at the price), r3
 * failed (held, then refunded); the wallet moved by exactly two prices.
 */
function healthy(): UserCheckInput {
  const entries = [
    entry(1, 100, [
      ['hold:r1', 'hold', PRICE],
      ['hold:r2', 'hold', PRICE],
      ['hold:r3', 'hold', PRICE],
    ]),
    entry(2, 200, [
      ['close:r1', 'settle', PRICE],
      ['close:r2', 'settle', PRICE],
      ['close:r3', 'refund', PRICE],
    ]),
    // Another user's entry: ignored.
    { user_id: 8, seq: 1, at: 150, ops: [{ id: 'close:x', kind: 'settle', amount: 999 }] },
  ];
  return {
    exact: true,
    price: PRICE,
    answered: new Set(['r1', 'r2']),
    before: { quota: 1000, used: 0, count: 0 },
    after: { quota: 1000 - 2 * PRICE, used: 2 * PRICE, count: 2 },
    rows: [
      { request_id: 'r1', quota: PRICE },
      { request_id: 'r2', quota: PRICE },
    ],
    ledger: readLedger(entries, USER, true),
    holds: [],
  };
}

describe('readLedger', () => {
  it("sums up a user's settles, refunds, holds and expired holds, ignoring other users", () => {
    const l = readLedger(
      [
        entry(1, 100, [['hold:r1', 'hold', PRICE]]),
        entry(2, 200, [['close:r1', 'settle', PRICE]]),
        entry(3, 300, [['close:r2', 'refund', 0]], ['r9']),
        // An old single-operation entry.
        { user_id: USER, seq: 4, at: 400, op_id: 'close:r3', kind: 'refund', amount: 12 },
        { user_id: 9, seq: 1, at: 100, op_id: 'close:r1', kind: 'settle', amount: 5 },
      ],
      USER,
      false,
    );
    expect(l.maxSeq).toBe(4);
    expect([...l.settled]).toEqual([['r1', PRICE]]);
    expect(l.settleAt.get('r1')).toBe(200);
    expect({ refunds: l.refunds, refundedQuota: l.refundedQuota, emptyRefunds: l.emptyRefunds }).toEqual({
      refunds: 1,
      refundedQuota: 12,
      emptyRefunds: 1,
    });
    expect(l.holdsAt).toEqual([{ at: 100, rich: false, rid: 'r1' }]);
    expect(l.expiredHolds).toBe(1);
    expect(l.entryOps.map((e) => e.ids)).toEqual([['hold:r1'], ['close:r1'], ['close:r2'], ['close:r3']]);
  });
});

describe('checkUser', () => {
  it('holds when wallet, ledger, logs and answers agree', () => {
    const c = checkUser(healthy());
    expect(c.problems).toEqual([]);
    expect(c.settledSum).toBe(2 * PRICE);
  });

  it('fails on a hold left open', () => {
    const x = healthy();
    // r2's settle never came: its hold is still open and the wallet still holds its amount.
    x.ledger = readLedger(
      [
        entry(1, 100, [
          ['hold:r1', 'hold', PRICE],
          ['hold:r2', 'hold', PRICE],
        ]),
        entry(2, 200, [['close:r1', 'settle', PRICE]]),
      ],
      USER,
      true,
    );
    x.rows = [{ request_id: 'r1', quota: PRICE }];
    x.after = { quota: 1000 - 2 * PRICE, used: PRICE, count: 1 };
    x.holds = [['r2', { a: PRICE }]];
    const c = checkUser(x);
    expect(c.problems).toEqual([
      '1 answered requests not settled',
      '1 answered requests not logged',
      '1 holds left open (30)',
    ]);
    expect(c.holdsOfAnswered).toBe(1);
    expect(c.heldQuota).toBe(PRICE);
  });

  it('fails on a request charged though the client saw it fail', () => {
    const x = healthy();
    x.answered = new Set(['r1']);
    expect(checkUser(x).problems).toEqual([
      '1 charged though the client saw them fail',
      '1 logged though the client saw them fail',
      'wallet change 60 != 1 x 30',
    ]);
  });

  it('fails when the settled sum is not the logged sum', () => {
    const x = healthy();
    x.rows = [
      { request_id: 'r1', quota: PRICE },
      { request_id: 'r2', quota: PRICE - 1 },
    ];
    expect(checkUser(x).problems).toEqual(['settled 60 != logged 59', 'used-quota change 60 != logged 59']);
  });

  it('fails on a request logged twice or closed twice', () => {
    const x = healthy();
    x.rows.push({ request_id: 'r2', quota: 0 });
    x.ledger = readLedger(
      [
        entry(1, 100, [
          ['close:r1', 'settle', PRICE],
          ['close:r2', 'settle', PRICE],
        ]),
        entry(2, 200, [['close:r2', 'settle', PRICE]]),
      ],
      USER,
      true,
    );
    expect(checkUser(x).problems).toEqual([
      '1 request ids logged twice',
      '1 requests closed twice in the ledger',
      'request count change 2 != 3 rows',
    ]);
  });

  it('without exact identity, allows unsettled answers only when unlogged too, never an open hold', () => {
    const x = healthy();
    x.exact = false;
    x.rows = [{ request_id: 'r1', quota: PRICE }];
    x.after = { quota: 1000 - PRICE, used: PRICE, count: 1 };
    x.ledger = readLedger([entry(1, 100, [['close:r1', 'settle', PRICE]])], USER, true);
    const c = checkUser(x);
    expect(c.problems).toEqual([]);
    expect(c.notSettled).toEqual(['r2']);
    x.holds = [['r3', { a: PRICE }]];
    x.after = { quota: 1000 - 2 * PRICE, used: PRICE, count: 1 };
    expect(checkUser(x).problems).toEqual(["1 holds left open (30) after the user's next request"]);
  });
});

describe('relayBound', () => {
  const kill = 10_000;
  // Answers at 9,450 and 9,900 ms are within the last 100 + 500 ms before the fault; 8,000 is not.
  const ok = [
    { sentAt: 7_000, doneAt: 8_000, ok: true, err: '' },
    { sentAt: 9_000, doneAt: 9_450, ok: true, err: '' },
    { sentAt: 9_500, doneAt: 9_900, ok: true, err: '' },
    { sentAt: 10_500, doneAt: 12_000, ok: true, err: '' },
  ];
  const bound = (unbilled: typeof ok, underQuota: number) =>
    relayBound({ ok, unbilled, underQuota, kill, price: PRICE, lingerMs: 100, allowanceMs: 500 });

  it('holds for an under-charge of answers within the window', () => {
    const b = bound([ok[2] as (typeof ok)[0]], PRICE);
    expect(b.holds).toBe(true);
    expect(b.inWindow).toBe(2);
    expect(b.oldest).toBe(100);
    expect(b.text).toBe('under-charge 30 (1 answers) ≤ 60 (2 answers in the last 100 + 500 ms): yes');
  });

  it('is exceeded by an under-charge above the window, or an unbilled answer older than it', () => {
    expect(bound([], 3 * PRICE).text).toBe('under-charge 90 (0 answers) ≤ 60 (2 answers in the last 100 + 500 ms): NO');
    const old = bound([ok[0] as (typeof ok)[0]], PRICE);
    expect(old.holds).toBe(false);
    expect(old.oldest).toBe(2_000);
  });
});

describe('error grouping and outage', () => {
  const times = { kill: 1_000, ready: 5_000 };
  const failed = [
    { sentAt: 0, doneAt: 500, ok: false, err: '503 busy' },
    { sentAt: 900, doneAt: 1_500, ok: false, err: 'ECONNREFUSED' },
    { sentAt: 900, doneAt: 2_500, ok: false, err: 'ECONNREFUSED' },
    { sentAt: 5_000, doneAt: 6_200, ok: false, err: '503 busy' },
  ];

  it('groups errors by kind, most frequent first', () => {
    expect(kindsOf(failed)).toBe('2 × 503 busy; 2 × ECONNREFUSED');
    expect(kindsOf(failed.slice(1))).toBe('2 × ECONNREFUSED; 1 × 503 busy');
    expect(kindsOf([])).toBe('none');
  });

  it('splits errors into before the fault, until ready again and after', () => {
    expect(errorsByPhase(failed, times)).toBe(
      'before the fault: 1 (1 × 503 busy); from the fault until ready again: 2 (2 × ECONNREFUSED); after ready again: 1 (1 × 503 busy)',
    );
    expect(errorsByPhase([], times)).toBe('');
  });

  it('describes the outage from the first to the last error, relative to the fault', () => {
    expect(outageOf(failed, times.kill)).toBe('errors from +-0.5 s to +5.2 s after the fault');
    expect(outageOf([], times.kill)).toBe('none');
  });
});

describe('unmarkedEntries', () => {
  it("finds entries missing an operation marker, except each user's newest", () => {
    const ops = [
      { userId: 1, seq: 1, ids: ['a', 'b'] },
      { userId: 1, seq: 2, ids: ['c'] },
      { userId: 2, seq: 1, ids: ['d'] },
    ];
    expect(unmarkedEntries(ops, new Set(['a', 'b', 'c', 'd']))).toEqual([]);
    // 'c' and 'd' are each user's newest entry: a crash may cut their marker.
    expect(unmarkedEntries(ops, new Set(['a', 'b']))).toEqual([]);
    expect(unmarkedEntries(ops, new Set(['a', 'c', 'd']))).toEqual([{ userId: 1, seq: 1, ids: ['a', 'b'] }]);
  });
});
