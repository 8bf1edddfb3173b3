import { randomInt } from 'node:crypto';
import { invalid, notFound, precondition } from '@aigw/common/errors';
import { CREDIT_REASON, type Credits } from './credits.ts';
import type { OptionsReader, PendingCredit, UserStore } from './ports.ts';
import { formatQuota, MSG } from './user-rules.ts';

/** One day's check-in as stored. */
export interface CheckinRow {
  date: string;
  quota: number;
}

/** The check-in history (data/checkin-repository.ts). */
export interface CheckinStore {
  /** Writes a day's row (idempotent: the same user and day keep one row). */
  record(userId: number, date: string, quota: number): Promise<void>;
  /** Rows with from <= date <= to, newest first. */
  between(userId: number, from: string, to: string): Promise<CheckinRow[]>;
  /** Every row of the user (check-ins are at most one a day). */
  all(userId: number): Promise<CheckinRow[]>;
  has(userId: number, date: string): Promise<boolean>;
}

/** The calendar day (YYYY-MM-DD) of a moment in a time zone; the server's zone when empty. */
export function dayIn(ms: number, timeZone: string): string {
  const fmt = (tz: string | undefined) =>
    new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);
  try {
    return fmt(timeZone.trim() || undefined);
  } catch {
    return fmt(undefined); // a zone the runtime does not know (saved ones are checked on save)
  }
}

/**
 * Daily check-in (new-api's checkin_setting): once per user per calendar day in the operator's
 * TimeZone, a reward drawn from [min_quota, max_quota]. The day is claimed on the user's document
 * in the same write that queues the reward as a pending credit, so a double click claims once and
 * the reward reaches billing exactly once (request id checkin:<user>:<day>, retried until taken).
 */
export function checkins(deps: {
  users: UserStore;
  store: CheckinStore;
  options: OptionsReader;
  credits: Credits;
  now?: () => number;
}) {
  const { users, store, options, credits } = deps;
  const now = deps.now ?? Date.now;
  const today = () => dayIn(now(), options.text('TimeZone'));
  const enabled = () => {
    if (!options.bool('checkin_setting.enabled')) throw precondition('签到功能未启用');
  };
  const range = () => {
    const min = Math.max(0, options.number('checkin_setting.min_quota'));
    const max = Math.max(min, options.number('checkin_setting.max_quota'));
    return { min, max };
  };

  return {
    async status(userId: number, month: string) {
      enabled();
      const day = today();
      const m = month.trim() || day.slice(0, 7);
      if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(m)) throw invalid('月份格式错误，应为 YYYY-MM');
      const [records, all, checkedToday] = await Promise.all([
        store.between(userId, `${m}-01`, `${m}-31`),
        store.all(userId),
        store.has(userId, day),
      ]);
      const { min, max } = range();
      return {
        minQuota: min,
        maxQuota: max,
        totalQuota: all.reduce((sum, r) => sum + r.quota, 0),
        totalCheckins: all.length,
        checkinCount: records.length,
        checkedInToday: checkedToday,
        records: records.map((r) => ({ checkinDate: r.date, quotaAwarded: r.quota })),
      };
    },

    async checkin(userId: number): Promise<{ quotaAwarded: number; checkinDate: string }> {
      enabled();
      const user = await users.findById(userId);
      if (!user) throw notFound(MSG.userNotFound);
      const date = today();
      const { min, max } = range();
      const amount = max > min ? min + randomInt(max - min + 1) : min;
      const credit: PendingCredit | undefined =
        amount > 0
          ? {
              request_id: `checkin:${userId}:${date}`,
              amount,
              reason: CREDIT_REASON.other,
              content: `用户签到，获得额度 ${formatQuota(amount, options)}`,
            }
          : undefined;
      const claimed = await users.claimCheckin(userId, date, credit);
      if (!claimed) throw invalid('今日已签到');
      await store.record(userId, date, amount);
      await credits.deliverQuietly(claimed);
      return { quotaAwarded: amount, checkinDate: date };
    },
  };
}

export type Checkins = ReturnType<typeof checkins>;
