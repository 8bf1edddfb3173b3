import { invalid, precondition } from '@aigw/common/errors';

/**
 * Per-token period budgets (beyond new-api): quota a token may spend per day, per week (from
 * Monday) and per month, each period starting at midnight in the operator's TimeZone option.
 * What a token spent in its current periods lives in the owner's ledger state beside its
 * balance (`TokenBalance.p`), so it changes atomically with the charge, whichever billing replica
 * applies it, and a hold sees every settle before it.
 */
export const PERIODS = ['d', 'w', 'm'] as const;
export type Period = (typeof PERIODS)[number];

/** Budgets per period; 0: none. */
export type TokenBudgets = Record<Period, number>;
/** Unix seconds at which each current period started. */
export type PeriodStarts = Record<Period, number>;
/** Spend per period: [start of the period it counts, quota spent in it]. */
export type PeriodSpend = Partial<Record<Period, [number, number]>>;

export const NO_BUDGETS: TokenBudgets = { d: 0, w: 0, m: 0 };
export const hasBudget = (b: TokenBudgets | undefined): b is TokenBudgets => Boolean(b && (b.d || b.w || b.m));

/** The largest budget accepted (as the token quota: a safe integer). */
const MAX_BUDGET = Number.MAX_SAFE_INTEGER;
const LABELS: Record<Period, string> = { d: '每日', w: '每周', m: '每月' };

/** Validates a budget: a whole number of quota from 0 (no budget). */
export function checkBudget(value: number, period: Period): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_BUDGET)
    throw invalid(`${LABELS[period]}预算必须为非负整数（0 表示不限制）`);
  return value;
}

/** The refusal of a hold that a budget cannot cover (billing's message, passed on by the relay). */
export const budgetMessage = (period: Period) => `令牌${LABELS[period]}预算不足`;

function zoned(timeZone: string): Intl.DateTimeFormat {
  const opts: Intl.DateTimeFormatOptions = {
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
    weekday: 'short',
  };
  try {
    return new Intl.DateTimeFormat('en-US', { ...opts, timeZone: timeZone.trim() || undefined });
  } catch {
    return new Intl.DateTimeFormat('en-US', opts); // a zone the runtime does not know: the server's
  }
}

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/** The wall clock of `ms` in the zone, as if it were UTC (its offset is `asUtc - ms`). */
function wallClock(fmt: Intl.DateTimeFormat, ms: number) {
  const parts = Object.fromEntries(fmt.formatToParts(ms).map((p) => [p.type, p.value]));
  const y = Number(parts.year);
  const mo = Number(parts.month) - 1;
  const d = Number(parts.day);
  const asUtc = Date.UTC(y, mo, d, Number(parts.hour), Number(parts.minute), Number(parts.second));
  return { y, mo, d, weekday: WEEKDAYS.indexOf(String(parts.weekday)), offset: asUtc - Math.floor(ms / 1000) * 1000 };
}

/** The instant of a local midnight (y, mo, d may overflow, as with Date.UTC). */
function localMidnight(fmt: Intl.DateTimeFormat, y: number, mo: number, d: number, offsetHint: number): number {
  const wall = Date.UTC(y, mo, d);
  let at = wall - offsetHint;
  // Around a daylight-saving change the offset at midnight differs from the hint: correct once.
  const offset = wallClock(fmt, at).offset;
  if (offset !== offsetHint) at = wall - offset;
  return at;
}

/**
 * The starts (unix seconds) of the day, week (Monday) and month containing `nowMs` in the zone,
 * and when the next day starts (ms): until then the starts stay the same.
 */
export function periodStarts(nowMs: number, timeZone: string): { starts: PeriodStarts; nextDayMs: number } {
  const fmt = zoned(timeZone);
  const w = wallClock(fmt, nowMs);
  const day = localMidnight(fmt, w.y, w.mo, w.d, w.offset);
  const week = localMidnight(fmt, w.y, w.mo, w.d - w.weekday, w.offset);
  const month = localMidnight(fmt, w.y, w.mo, 1, w.offset);
  const nextDayMs = localMidnight(fmt, w.y, w.mo, w.d + 1, w.offset);
  return { starts: { d: day / 1000, w: week / 1000, m: month / 1000 }, nextDayMs };
}

/** periodStarts, computed once per day and zone (a settle path helper). */
export function periodClock(timeZone: () => string, now: () => number = Date.now): () => PeriodStarts {
  let memo: { tz: string; until: number; starts: PeriodStarts } | undefined;
  return () => {
    const t = now();
    const tz = timeZone();
    if (!memo || memo.tz !== tz || t >= memo.until || t < memo.until - 90_000_000) {
      const { starts, nextDayMs } = periodStarts(t, tz);
      memo = { tz, until: nextDayMs, starts };
    }
    return memo.starts;
  };
}

/** What a token spent in each current period. */
export function spentIn(spend: PeriodSpend | undefined, starts: PeriodStarts): TokenBudgets {
  const of = (k: Period) => {
    const e = spend?.[k];
    return e && e[0] === starts[k] ? e[1] : 0;
  };
  return { d: of('d'), w: of('w'), m: of('m') };
}

/** The spend after charging `amount` now (a new object: ledger states share nothing). */
export function addSpend(spend: PeriodSpend | undefined, amount: number, starts: PeriodStarts): PeriodSpend {
  const now = spentIn(spend, starts);
  return { d: [starts.d, now.d + amount], w: [starts.w, now.w + amount], m: [starts.m, now.m + amount] };
}

/**
 * The period whose budget refuses a reservation of `amount`, given what the token spent and what
 * its requests in flight hold: a budget already used up refuses any request (even a free one),
 * and one that cannot cover the reservation refuses it, as the token quota does.
 */
export function refusingPeriod(
  budgets: TokenBudgets,
  spent: TokenBudgets,
  held: number,
  amount: number,
): Period | undefined {
  for (const k of PERIODS) {
    const b = budgets[k];
    if (b > 0 && (spent[k] >= b || spent[k] + held + amount > b)) return k;
  }
  return undefined;
}

/** The ledger state fields the budget helpers read (ledger-state.ts's LedgerState). */
interface BudgetState {
  tokens: Record<string, { r: number; u: number; p?: PeriodSpend }>;
  holds: Record<string, { a: number; t: number; sa?: number }>;
}

/**
 * Refuses (throws) a hold of `amount` for `tokenId` that one of its budgets cannot cover; what
 * its requests in flight reserved counts as spent (from the wallet or a subscription).
 */
export function checkHoldBudget(
  state: BudgetState,
  hold: { tokenId: number; amount: number; budgets: TokenBudgets | undefined; starts: PeriodStarts },
): void {
  if (!hold.tokenId || !hasBudget(hold.budgets)) return;
  let held = 0;
  for (const h of Object.values(state.holds)) if (h.t === hold.tokenId) held += h.a + (h.sa ?? 0);
  const spent = spentIn(state.tokens[String(hold.tokenId)]?.p, hold.starts);
  const period = refusingPeriod(hold.budgets, spent, held, hold.amount);
  if (period) throw precondition(budgetMessage(period));
}

/** Counts a settled request's `actual` in its token's current periods (a new state; `state` unchanged). */
export function countTokenSpend<S extends BudgetState>(
  state: S,
  tokenId: number,
  actual: number,
  starts: PeriodStarts,
): S {
  const t = state.tokens[String(tokenId)];
  if (!tokenId || !t || actual <= 0) return state;
  return { ...state, tokens: { ...state.tokens, [String(tokenId)]: { ...t, p: addSpend(t.p, actual, starts) } } };
}
