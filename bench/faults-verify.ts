/**
 * The fault suite's verdict on what billing and logs recorded: reads each scenario user's wallet,
 * ledger entries and log rows, and checks them (faults-checks.ts) against what the client saw; the
 * relay's under-charge bound; after a MongoDB restart, the ledger's operation markers.
 */

import type { RelayStack } from '@aigw/testkit/harness';
import type { connectMongo } from '../services/common/src/index.ts';
import {
  checkUser,
  type EntryOps,
  type LedgerEntry,
  readLedger,
  relayBound,
  type UserCheck,
  unmarkedEntries,
} from './faults-checks.ts';
import {
  CHECK_READ_MS,
  type HoldAt,
  LINGER_MS,
  type Req,
  type Scenario,
  SEND_ALLOWANCE_MS,
  type UserRec,
} from './faults-config.ts';
import { checkRead } from './faults-probes.ts';
import { logRows } from './log-rows.ts';
import { PRICE } from './platform.ts';

type Db = Awaited<ReturnType<typeof connectMongo>>;

export interface VerifyCtx {
  s: RelayStack;
  billingDb: Db;
  logsDb: Db;
}

/** What the checks found over all of a scenario's users. */
export interface Verdict {
  pass: boolean;
  /** One line per user whose records disagree (also the report's lines). */
  why: string[];
  underQuota: number;
  /** Answered requests billing did not settle (a scenario that is not exact). */
  unbilledAnswers: Req[];
  holdsOpen: number;
  holdsOpenQuota: number;
  holdsOfAnswered: number;
  settledTotal: number;
  refunds: number;
  refundedQuota: number;
  emptyRefunds: number;
  settleAt: Map<string, number>;
  holdsAt: HoldAt[];
  expiredHolds: number;
  entryOps: EntryOps[];
  /** The checks' own wallet reads: how long the slowest took, and failed tries. */
  reads: { slowestMs: number; failed: number };
}

/** The consume log rows and ledger entries of the scenario's users. */
async function readRecords(ctx: VerifyCtx, users: UserRec[]) {
  const ids = users.map((u) => u.userId);
  const logs: { request_id: string; quota: number; user_id: number }[] = [];
  for await (const row of logRows(ctx.logsDb, [2], { user_id: { $in: ids } }, ['request_id', 'quota', 'user_id']))
    logs.push(row as { request_id: string; quota: number; user_id: number });
  const entries = (await ctx.billingDb
    .collection('ledger_entries')
    .find(
      { user_id: { $in: ids } },
      { projection: { user_id: 1, seq: 1, ops: 1, op_id: 1, kind: 1, amount: 1, at: 1, expired: 1 } },
    )
    .toArray()) as unknown as LedgerEntry[];
  return { logs, entries };
}

/** The holds still open in a user's newest ledger entry. */
async function openHolds(ctx: VerifyCtx, userId: number, maxSeq: number): Promise<[string, { a: number }][]> {
  const head = maxSeq
    ? await ctx.billingDb
        .collection('ledger_entries')
        .findOne({ _id: `${userId}:${maxSeq}` as never }, { projection: { 'state.holds': 1 } })
    : null;
  return Object.entries((head?.state as { holds?: Record<string, { a: number }> } | undefined)?.holds ?? {});
}

/** Reads one user's wallet and open holds, and checks the user's records. */
async function checkOne(
  ctx: VerifyCtx,
  sc: Scenario,
  u: UserRec,
  answered: Set<string>,
  records: Awaited<ReturnType<typeof readRecords>>,
  reads: Verdict['reads'],
) {
  const w = await checkRead(() => ctx.s.wallet.getWallet({ userId: u.userId }, { deadlineMs: CHECK_READ_MS }), reads);
  const ledger = readLedger(records.entries, u.userId, u.rich);
  const holds = await openHolds(ctx, u.userId, ledger.maxSeq);
  const check: UserCheck = checkUser({
    exact: sc.exact,
    price: PRICE,
    answered,
    before: u.before,
    after: { quota: w?.quota ?? 0, used: w?.usedQuota ?? 0, count: w?.requestCount ?? 0 },
    rows: records.logs.filter((l) => l.user_id === u.userId),
    ledger,
    holds,
  });
  return { ledger, holds, check };
}

/** Checks every user of the scenario; `say` gets the line of each user whose records disagree. */
export async function verifyUsers(
  ctx: VerifyCtx,
  sc: Scenario,
  users: UserRec[],
  reqs: Req[],
  say: (line: string) => void,
): Promise<Verdict> {
  const records = await readRecords(ctx, users);
  const v: Verdict = {
    pass: true,
    why: [],
    underQuota: 0,
    unbilledAnswers: [],
    holdsOpen: 0,
    holdsOpenQuota: 0,
    holdsOfAnswered: 0,
    settledTotal: 0,
    refunds: 0,
    refundedQuota: 0,
    emptyRefunds: 0,
    settleAt: new Map(),
    holdsAt: [],
    expiredHolds: 0,
    entryOps: [],
    reads: { slowestMs: 0, failed: 0 },
  };
  for (const u of users) {
    const mine = reqs.filter((r) => r.user === u);
    const A = new Set(mine.filter((r) => r.ok).map((r) => r.rid));
    const { ledger, holds, check } = await checkOne(ctx, sc, u, A, records, v.reads);
    v.refunds += ledger.refunds;
    v.refundedQuota += ledger.refundedQuota;
    v.emptyRefunds += ledger.emptyRefunds;
    for (const [rid, at] of ledger.settleAt) v.settleAt.set(rid, at);
    v.holdsAt.push(...ledger.holdsAt);
    v.expiredHolds += ledger.expiredHolds;
    v.entryOps.push(...ledger.entryOps);
    v.settledTotal += ledger.settled.size;
    v.holdsOpen += holds.length;
    v.holdsOpenQuota += check.heldQuota;
    v.holdsOfAnswered += check.holdsOfAnswered;
    if (!sc.exact) {
      v.underQuota += A.size * PRICE - check.settledSum;
      const unsettled = new Set(check.notSettled);
      v.unbilledAnswers = v.unbilledAnswers.concat(mine.filter((r) => r.ok && unsettled.has(r.rid)));
    }
    if (check.problems.length) {
      v.pass = false;
      const line = `- user ${u.userId} (${u.rich ? 'large' : 'modest'} balance, ${A.size} answered): ${check.problems.join('; ')}`;
      v.why.push(line);
      say(line);
    }
  }
  return v;
}

/** How long the checks wait at most for the wallet slices to go back (RELAY_WALLET_SLICE_IDLE_MS, 5 s, after the last request). */
const SLICE_RELEASE_LIMIT_MS = 30_000;

/**
 * With wallet slices on (RELAY_WALLET_SLICES=1), waits (bounded) until billing holds no slice of
 * the scenario's users: a slice held is balance taken from the wallet that no charge accounts for
 * yet, so wallet change = charges is checked only after every release. How long it took, and the
 * slices still held at the limit (a failure: a slice never released).
 */
export async function slicesReleased(s: RelayStack, users: UserRec[]) {
  const t0 = Date.now();
  const reads = { slowestMs: 0, failed: 0 };
  let held = 0;
  let quota = 0;
  for (;;) {
    held = 0;
    quota = 0;
    for (const u of users) {
      const w = await checkRead(() => s.wallet.getWallet({ userId: u.userId }, { deadlineMs: CHECK_READ_MS }), reads);
      held += w?.walletSlices ?? 0;
      quota += w?.walletSliceQuota ?? 0;
    }
    if (held === 0 || Date.now() - t0 > SLICE_RELEASE_LIMIT_MS) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return { ms: Date.now() - t0, held, quota };
}

/** The relay's under-charge bound (a scenario that is not exact) for this scenario's answers. */
export function boundOf(v: Verdict, ok: Req[], kill: number) {
  return relayBound({
    ok,
    unbilled: v.unbilledAnswers,
    underQuota: v.underQuota,
    kill,
    price: PRICE,
    lingerMs: LINGER_MS,
    allowanceMs: SEND_ALLOWANCE_MS,
  });
}

/**
 * After a MongoDB restart, no half-written record: every ledger entry's operations have their
 * markers, except at most the newest entry of a user. Returns the report's line and the failure.
 */
export async function markerCheck(billingDb: Db, entryOps: EntryOps[]) {
  const ids = entryOps.flatMap((e) => e.ids);
  const marked = new Set<string>();
  for (let i = 0; i < ids.length; i += 5_000) {
    const docs = await billingDb
      .collection('ledger_ops')
      .find({ _id: { $in: ids.slice(i, i + 5_000) as never[] } }, { projection: { _id: 1 } })
      .toArray();
    for (const d of docs) marked.add(String(d._id));
  }
  const unmarked = unmarkedEntries(entryOps, marked);
  return {
    why: unmarked.length ? `- ${unmarked.length} ledger entries below a user's newest miss an operation marker` : '',
    line: `- Ledger after the restart: ${entryOps.length} entries, ${ids.length} operations; entries below a user's newest with a missing operation marker: ${unmarked.length}.`,
  };
}
