import { invalid, precondition } from '@aigw/common/errors';

/**
 * Subscriptions inside a user's money state (ledger-state.ts): a subscription's usage windows
 * change in the same ledger entry as the wallet, so a request is charged to exactly one of them,
 * once (the entry's operation id is the request's `close:<rid>`, as for the wallet).
 */

/** Window kinds: daily, weekly (from Monday), monthly (from the 1st), and the whole term. */
export const WINDOWS = ['daily', 'weekly', 'monthly', 'total'] as const;
export type WindowKind = (typeof WINDOWS)[number];

/** new-api's billing preferences (user setting `billing_preference`). */
export const PREFERENCES = ['subscription_first', 'wallet_first', 'subscription_only', 'wallet_only'] as const;
export type BillingPreference = (typeof PREFERENCES)[number];

export const normalizePreference = (p: string | undefined): BillingPreference =>
  (PREFERENCES as readonly string[]).includes(p ?? '') ? (p as BillingPreference) : 'subscription_first';

/** One subscription of a user (compact: it is copied into every ledger entry of the user). */
export interface Sub {
  /** Plan id and title when bought. */
  p: number;
  t: string;
  /** Unix ms: start and end of the term. */
  st: number;
  end: number;
  /** order (bought) or admin (bound by an admin). */
  src: string;
  /** Set when an admin invalidated it (unix ms). */
  x?: number;
  /** Quota per window (0: no limit in that window). */
  lim: Partial<Record<WindowKind, number>>;
  /** Window kind -> [window start (unix ms), quota used in it, holds included]. */
  w: Partial<Record<WindowKind, [number, number]>>;
  /** Models the subscription pays for (empty: all). */
  mo?: string[];
  /** The group it pays for ('' or missing: any). */
  g?: string;
}

/** The start of the window of `kind` that `now` falls in, in the operator's time zone. */
export function windowStart(kind: WindowKind, now: number, sub: Pick<Sub, 'st'>, timeZone: string): number {
  if (kind === 'total') return sub.st;
  const offset = zoneOffset(now, timeZone);
  const local = new Date(now + offset);
  let start = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate());
  if (kind === 'weekly') start -= ((local.getUTCDay() + 6) % 7) * 86_400_000;
  if (kind === 'monthly') start = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), 1);
  return start - offset;
}

/** When the window of `kind` that starts at `start` ends (the next one starts). */
export function windowEnd(kind: WindowKind, start: number, sub: Pick<Sub, 'end'>, timeZone: string): number {
  if (kind === 'total') return sub.end;
  if (kind === 'daily') return start + 86_400_000;
  if (kind === 'weekly') return start + 7 * 86_400_000;
  // Monthly windows start on the 1st: 32 days on is in the next month.
  return windowStart('monthly', start + 32 * 86_400_000, { st: 0 }, timeZone);
}

const offsets = new Map<string, Intl.DateTimeFormat | null>();
/** ms to add to UTC for local time in `timeZone` (0 for UTC or an unknown zone). */
function zoneOffset(at: number, timeZone: string): number {
  if (!timeZone || timeZone === 'UTC') return 0;
  let f = offsets.get(timeZone);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      f = null;
    }
    offsets.set(timeZone, f);
  }
  if (!f) return 0;
  const parts = Object.fromEntries(f.formatToParts(new Date(at)).map((p) => [p.type, Number(p.value)]));
  const asUtc = Date.UTC(parts.year ?? 0, (parts.month ?? 1) - 1, parts.day, parts.hour, parts.minute, parts.second);
  return asUtc - (at - (at % 1000));
}

export const isActive = (s: Sub, now: number) => !s.x && s.st <= now && now < s.end;

/** The used quota of each limited window at `now` (a window that started since reads 0). */
export function usage(
  s: Sub,
  now: number,
  timeZone: string,
): { kind: WindowKind; limit: number; used: number; start: number }[] {
  const out = [];
  for (const kind of WINDOWS) {
    const limit = s.lim[kind] ?? 0;
    if (limit <= 0) continue;
    const start = windowStart(kind, now, s, timeZone);
    const w = s.w[kind];
    out.push({ kind, limit, used: w && w[0] === start ? w[1] : 0, start });
  }
  return out;
}

const serves = (s: Sub, model: string, group: string) =>
  (!s.mo || s.mo.length === 0 || s.mo.includes(model)) && (!s.g || s.g === group);

/**
 * The subscription that can pay `amount` for a request of `model` in `group` at `now`: active, bound
 * to the model and group (or to none), with room for `amount` in every window; the one ending first
 * when several can. Undefined when none can.
 */
export function payingSubscription(
  subs: Record<string, Sub> | undefined,
  req: { model: string; group: string; amount: number; now: number; timeZone: string },
): string | undefined {
  let best: [string, Sub] | undefined;
  for (const [id, s] of Object.entries(subs ?? {})) {
    if (!isActive(s, req.now) || !serves(s, req.model, req.group)) continue;
    if (!usage(s, req.now, req.timeZone).every((w) => w.used + req.amount <= w.limit)) continue;
    if (!best || s.end < best[1].end) best = [id, s];
  }
  return best?.[0];
}

/**
 * Adds `amount` (negative to give back) to every window of subscription `id` at `now`; a window
 * that started since its last use begins at 0. Returns the new subscriptions map (the one given is
 * not changed). Used quota never goes below 0 (a give-back after the window reset).
 */
export function chargeSubscription(
  subs: Record<string, Sub>,
  id: string,
  amount: number,
  now: number,
  timeZone: string,
): Record<string, Sub> {
  const s = subs[id];
  if (!s) return subs;
  const w: Sub['w'] = {};
  for (const kind of WINDOWS) {
    if ((s.lim[kind] ?? 0) <= 0) continue;
    const start = windowStart(kind, now, s, timeZone);
    const prev = s.w[kind];
    w[kind] = [start, Math.max(0, (prev && prev[0] === start ? prev[1] : 0) + amount)];
  }
  return { ...subs, [id]: { ...s, w } };
}

/**
 * Gives back `amount` that subscription `id` reserved (a refund, an expired hold, the reservation
 * of a settled request): from the windows it was reserved in, whatever the time now (a window
 * that started since begins at 0 anyway). Returns the new subscriptions map.
 */
export function releaseSubscription(subs: Record<string, Sub>, id: string, amount: number): Record<string, Sub> {
  const s = subs[id];
  if (!s || amount <= 0) return subs;
  const w: Sub['w'] = {};
  for (const [kind, win] of Object.entries(s.w) as [WindowKind, [number, number]][]) {
    w[kind] = [win[0], Math.max(0, win[1] - amount)];
  }
  return { ...subs, [id]: { ...s, w } };
}

/** A plan as the ledger needs it to start a subscription. */
export interface PlanTerms {
  id: number;
  title: string;
  duration_unit: string;
  duration_value: number;
  custom_seconds: number;
  daily_quota: number;
  weekly_quota: number;
  monthly_quota: number;
  total_amount: number;
  models: string[];
  group: string;
}

/** When a term of `plan` that starts at `start` ends (new-api's duration units). */
export function termEnd(plan: Pick<PlanTerms, 'duration_unit' | 'duration_value' | 'custom_seconds'>, start: number) {
  const v = plan.duration_value;
  const d = new Date(start);
  switch (plan.duration_unit) {
    case 'year':
      return Date.UTC(
        d.getUTCFullYear() + v,
        d.getUTCMonth(),
        d.getUTCDate(),
        d.getUTCHours(),
        d.getUTCMinutes(),
        d.getUTCSeconds(),
      );
    case 'month':
      return Date.UTC(
        d.getUTCFullYear(),
        d.getUTCMonth() + v,
        d.getUTCDate(),
        d.getUTCHours(),
        d.getUTCMinutes(),
        d.getUTCSeconds(),
      );
    case 'day':
      return start + v * 86_400_000;
    case 'hour':
      return start + v * 3_600_000;
    case 'custom':
      return start + plan.custom_seconds * 1000;
    default:
      throw invalid('无效的时长单位');
  }
}

/** A new subscription of `plan` starting at `now`. */
export function newSubscription(plan: PlanTerms, now: number, source: string): Sub {
  const lim: Sub['lim'] = {};
  if (plan.daily_quota > 0) lim.daily = plan.daily_quota;
  if (plan.weekly_quota > 0) lim.weekly = plan.weekly_quota;
  if (plan.monthly_quota > 0) lim.monthly = plan.monthly_quota;
  if (plan.total_amount > 0) lim.total = plan.total_amount;
  return {
    p: plan.id,
    t: plan.title,
    st: now,
    end: termEnd(plan, now),
    src: source,
    lim,
    w: {},
    ...(plan.models.length > 0 ? { mo: plan.models } : {}),
    ...(plan.group ? { g: plan.group } : {}),
  };
}

/** Whether a subscription is over for good: its term ended or an admin invalidated it. */
export const hasEnded = (s: Sub, now: number) => s.x !== undefined || now >= s.end;

/**
 * Takes the ended subscriptions out of a user's state (they are copied into every ledger entry of
 * the user otherwise), except those a request still holds from: its settle or refund moves that
 * subscription's windows, so it stays until the hold closes or expires (HOLD_TTL_MS). What is taken
 * out is returned (`ended`) for the user's subscription history, and counted per plan in
 * `subs_ended` so that max_purchase_per_user still counts every purchase. The state given is not
 * changed; it is returned as it was when nothing ended.
 */
export function pruneEnded<S extends { subs?: Record<string, Sub>; subs_ended?: Record<string, number> }>(
  state: S,
  holds: Iterable<{ s?: string | undefined }>,
  now: number,
): { state: S; ended: Record<string, Sub> } {
  const ended: Record<string, Sub> = {};
  const subs = state.subs;
  if (!subs) return { state, ended };
  const over = Object.keys(subs).filter((id) => hasEnded(subs[id] as Sub, now));
  if (over.length === 0) return { state, ended };
  const held = new Set<string>();
  for (const h of holds) if (h.s) held.add(h.s);
  const kept: Record<string, Sub> = { ...subs };
  const counts: Record<string, number> = { ...state.subs_ended };
  for (const id of over) {
    if (held.has(id)) continue;
    const s = subs[id] as Sub;
    ended[id] = s;
    delete kept[id];
    counts[String(s.p)] = (counts[String(s.p)] ?? 0) + 1;
  }
  if (Object.keys(ended).length === 0) return { state, ended };
  return { state: { ...state, subs: kept, subs_ended: counts }, ended };
}

/** How many subscriptions of plan `planId` the user ever had: in the state and pruned from it. */
export const purchasesOf = (
  state: { subs?: Record<string, Sub>; subs_ended?: Record<string, number> },
  planId: number,
) => Object.values(state.subs ?? {}).filter((x) => x.p === planId).length + (state.subs_ended?.[String(planId)] ?? 0);

/** Ends a subscription now (admin invalidation). */
export function invalidateSubscription(subs: Record<string, Sub> | undefined, id: string, now: number) {
  const s = subs?.[id];
  if (!s) throw precondition('订阅不存在');
  return { ...subs, [id]: { ...s, x: now } };
}

/**
 * Whether a subscription may pay some request of the user now (an active one, and a preference
 * other than wallet_only): the relay then pre-consumes every request, since only billing's
 * pre-consume chooses the subscription.
 */
export const subscriptionActive = (state: { subs?: Record<string, Sub>; pref?: string }, now: number) =>
  normalizePreference(state.pref) !== 'wallet_only' && Object.values(state.subs ?? {}).some((s) => isActive(s, now));
