/**
 * The fault suite's checks as plain functions of plain records (no servers): a user's ledger
 * summary, the per-user identity (wallet = ledger = logs = what the client saw answered), the
 * relay's under-charge bound, and the grouping of client-visible errors. bench/faults.ts reads the
 * records (wallet, ledger entries, log rows) and feeds them here; faults-checks.test.ts feeds small
 * hand-made ones.
 */

import { f, type HoldAt } from './faults-config.ts';

/** One entry of billing's ledger (`ledger_entries`), the fields the checks read. */
export interface LedgerEntry {
  user_id: number;
  seq: number;
  at: number;
  /** The entry's operations (a batched entry); older single-operation entries carry op_id, kind and amount. */
  ops?: { id: string; kind: string; amount: number }[];
  op_id?: string;
  kind?: string;
  amount?: number;
  /** Holds given back by expiry (a dead relay's lease lapsed). */
  expired?: string[];
}

/** A ledger entry's operation ids (for the operation-marker check after a MongoDB restart). */
export interface EntryOps {
  userId: number;
  seq: number;
  ids: string[];
}

/** What one user's ledger entries say. */
export interface UserLedger {
  maxSeq: number;
  /** Close operations (`close:<rid>`) by how many times they were recorded. */
  closes: Map<string, number>;
  /** Settled requests: request id -> amount, and when the settle was written. */
  settled: Map<string, number>;
  settleAt: Map<string, number>;
  refunds: number;
  refundedQuota: number;
  /** Refunds with nothing held (recorded so that a late pre-consume is refused). */
  emptyRefunds: number;
  holdsAt: HoldAt[];
  expiredHolds: number;
  entryOps: EntryOps[];
}

/** Sums up a user's ledger entries (those of other users in `entries` are ignored). */
export function readLedger(entries: LedgerEntry[], userId: number, rich: boolean): UserLedger {
  const out: UserLedger = {
    maxSeq: 0,
    closes: new Map(),
    settled: new Map(),
    settleAt: new Map(),
    refunds: 0,
    refundedQuota: 0,
    emptyRefunds: 0,
    holdsAt: [],
    expiredHolds: 0,
    entryOps: [],
  };
  for (const e of entries.filter((x) => x.user_id === userId)) {
    out.maxSeq = Math.max(out.maxSeq, e.seq);
    const ops = e.ops ?? [{ id: e.op_id as string, kind: e.kind as string, amount: e.amount as number }];
    out.expiredHolds += (e.expired ?? []).length;
    out.entryOps.push({ userId, seq: e.seq, ids: ops.map((o) => o.id) });
    for (const o of ops) {
      if (o.id.startsWith('hold:')) out.holdsAt.push({ at: e.at, rich, rid: o.id.slice(5) });
      if (!o.id.startsWith('close:')) continue;
      out.closes.set(o.id, (out.closes.get(o.id) ?? 0) + 1);
      if (o.kind === 'refund') {
        if (o.amount > 0) {
          out.refunds++;
          out.refundedQuota += o.amount;
        } else out.emptyRefunds++;
      }
      if (o.kind === 'settle') {
        const rid = o.id.slice('close:'.length);
        out.settled.set(rid, o.amount);
        out.settleAt.set(rid, e.at);
      }
    }
  }
  return out;
}

/** A wallet read: balance, used quota and request count. */
export interface WalletFigures {
  quota: number;
  used: number;
  count: number;
}

/** What one user's records must agree on. */
export interface UserCheckInput {
  /** Exact identity (every scenario but a relay without its spool) or under-charge within the bound. */
  exact: boolean;
  price: number;
  /** Request ids the client saw answered. */
  answered: Set<string>;
  before: WalletFigures;
  after: WalletFigures;
  /** The user's consume log rows. */
  rows: { request_id: string; quota: number }[];
  ledger: UserLedger;
  /** The holds still open in the user's newest ledger entry: request id -> held amount. */
  holds: [string, { a: number }][];
}

export interface UserCheck {
  /** What disagrees (empty when the user's records hold). */
  problems: string[];
  settledSum: number;
  heldQuota: number;
  holdsOfAnswered: number;
  /** Answered requests without a settle. */
  notSettled: string[];
}

/** The per-user identity: wallet change = settled + held = logged = answered x price, each request once. */
export function checkUser(x: UserCheckInput): UserCheck {
  const { answered: A, rows, ledger, holds, price } = x;
  const walletChange = x.before.quota - x.after.quota;
  const usedChange = x.after.used - x.before.used;
  const countChange = x.after.count - x.before.count;
  const loggedSum = rows.reduce((a, l) => a + l.quota, 0);
  const loggedIds = new Map<string, number>();
  for (const l of rows) loggedIds.set(l.request_id, (loggedIds.get(l.request_id) ?? 0) + 1);
  const loggedTwice = [...loggedIds.values()].filter((n) => n > 1).length;
  // Billing's ledger: every close recorded once (a replayed close is answered, not appended).
  const closedTwice = [...ledger.closes.values()].filter((n) => n > 1).length;
  const settledSum = [...ledger.settled.values()].reduce((a, b) => a + b, 0);
  const heldQuota = holds.reduce((a, [, h]) => a + h.a, 0);
  const holdsOfAnswered = holds.filter(([rid]) => A.has(rid)).length;
  const notSettled = [...A].filter((rid) => !ledger.settled.has(rid));
  const notLogged = [...A].filter((rid) => !loggedIds.has(rid));
  const chargedButFailed = [...ledger.settled.keys()].filter((rid) => !A.has(rid));
  const loggedButFailed = [...loggedIds.keys()].filter((rid) => !A.has(rid));
  const problems: string[] = [];
  if (loggedTwice) problems.push(`${loggedTwice} request ids logged twice`);
  if (closedTwice) problems.push(`${closedTwice} requests closed twice in the ledger`);
  if (chargedButFailed.length) problems.push(`${chargedButFailed.length} charged though the client saw them fail`);
  if (loggedButFailed.length) problems.push(`${loggedButFailed.length} logged though the client saw them fail`);
  if (settledSum !== loggedSum) problems.push(`settled ${settledSum} != logged ${loggedSum}`);
  if (usedChange !== loggedSum) problems.push(`used-quota change ${usedChange} != logged ${loggedSum}`);
  if (countChange !== rows.length) problems.push(`request count change ${countChange} != ${rows.length} rows`);
  if (walletChange - heldQuota !== settledSum)
    problems.push(`wallet change ${walletChange} - held ${heldQuota} != settled ${settledSum}`);
  if (x.exact) {
    if (walletChange !== A.size * price) problems.push(`wallet change ${walletChange} != ${A.size} x ${price}`);
    if (notSettled.length) problems.push(`${notSettled.length} answered requests not settled`);
    if (notLogged.length) problems.push(`${notLogged.length} answered requests not logged`);
    if (holds.length) problems.push(`${holds.length} holds left open (${heldQuota})`);
  } else {
    if (notLogged.length !== notSettled.length)
      problems.push(`${notLogged.length} answered requests not logged but ${notSettled.length} not settled`);
    // The killed process's lease lapsed: the user's next request gave its holds back.
    if (holds.length) problems.push(`${holds.length} holds left open (${heldQuota}) after the user's next request`);
  }
  return { problems, settledSum, heldQuota, holdsOfAnswered, notSettled };
}

/** A request as the bound and the error grouping see it. */
export interface SeenReq {
  sentAt: number;
  doneAt: number;
  ok: boolean;
  err: string;
}

export interface Bound {
  /** The summary's bound cell. */
  text: string;
  holds: boolean;
  /** Answers in the batching window (plus the send in flight) before the fault. */
  inWindow: number;
  boundQuota: number;
  /** How long before the fault the oldest unbilled answer came (ms; -Infinity when none). */
  oldest: number;
}

/**
 * The relay's under-charge bound: what was unbilled must have been answered within the batching
 * window (plus the send in flight) before the fault, so the under-charge is at most the answers of
 * that window x the price.
 */
export function relayBound(x: {
  /** The requests the client saw answered. */
  ok: SeenReq[];
  /** The answered requests billing did not settle. */
  unbilled: SeenReq[];
  underQuota: number;
  kill: number;
  price: number;
  lingerMs: number;
  allowanceMs: number;
}): Bound {
  const windowStart = x.kill - x.lingerMs - x.allowanceMs;
  // Answers the killed process gave: requests sent before the fault, answered after windowStart.
  const inWindow = x.ok.filter((r) => r.sentAt < x.kill && r.doneAt > windowStart).length;
  const oldest = x.unbilled.reduce((m, r) => Math.max(m, x.kill - r.doneAt), Number.NEGATIVE_INFINITY);
  const within = x.unbilled.every((r) => r.doneAt > windowStart);
  const boundQuota = inWindow * x.price;
  const holds = within && x.underQuota <= boundQuota;
  const text = `under-charge ${x.underQuota} (${x.unbilled.length} answers) ≤ ${boundQuota} (${inWindow} answers in the last ${x.lingerMs} + ${x.allowanceMs} ms): ${holds ? 'yes' : 'NO'}`;
  return { text, holds, inWindow, boundQuota, oldest };
}

/** Client errors grouped by what the client saw, most frequent first: `3 × 503 ...; 1 × ECONNRESET`. */
export function kindsOf(xs: Pick<SeenReq, 'err'>[]): string {
  const kinds = new Map<string, number>();
  for (const r of xs) kinds.set(r.err, (kinds.get(r.err) ?? 0) + 1);
  return (
    [...kinds.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${n} × ${k}`)
      .join('; ') || 'none'
  );
}

/** The failed requests by when they ended: before the fault, until everything was ready again, after. */
export function errorsByPhase(failed: SeenReq[], times: { kill: number; ready: number }): string {
  const phases = [
    ['before the fault', failed.filter((r) => r.doneAt < times.kill)],
    ['from the fault until ready again', failed.filter((r) => r.doneAt >= times.kill && r.doneAt < times.ready)],
    ['after ready again', failed.filter((r) => r.doneAt >= times.ready)],
  ] as const;
  return phases
    .filter(([, xs]) => xs.length)
    .map(([name, xs]) => `${name}: ${xs.length} (${kindsOf(xs)})`)
    .join('; ');
}

/** The client-visible outage: from the first to the last failed answer, relative to the fault. */
export function outageOf(failed: SeenReq[], kill: number): string {
  if (!failed.length) return 'none';
  const firstErr = failed.reduce((m, r) => Math.min(m, r.doneAt), Number.POSITIVE_INFINITY);
  const lastErr = failed.reduce((m, r) => Math.max(m, r.doneAt), 0);
  return `errors from +${f((firstErr - kill) / 1000)} s to +${f((lastErr - kill) / 1000)} s after the fault`;
}

/**
 * Ledger entries with an operation whose marker is missing, except each user's newest entry (its
 * marker write is the one a crash can cut; the next write redoes it).
 */
export function unmarkedEntries(entryOps: EntryOps[], marked: Set<string>): EntryOps[] {
  const newest = new Map<number, number>();
  for (const e of entryOps) newest.set(e.userId, Math.max(newest.get(e.userId) ?? 0, e.seq));
  return entryOps.filter((e) => e.seq !== newest.get(e.userId) && e.ids.some((id) => !marked.has(id)));
}
