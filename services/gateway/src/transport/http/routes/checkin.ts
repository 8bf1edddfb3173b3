import { ok } from '@aigw/common';
import type { Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from '../deps.ts';
import { turnstileCheck } from '../middleware/turnstile.ts';
import { body, optText } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { caller } from './wire.ts';

const Status = validate({ query: z.object({ month: optText }) });
/** The Turnstile token travels in the query (read by the Turnstile check), as on the login. */
const Checkin = validate({ query: z.object({ turnstile: optText }), body: body({}) });

/**
 * Daily check-in (new-api's /api/user/checkin): the month's records, and the check-in itself
 * (Turnstile-checked when that is on). The users service claims the day and credits the reward
 * through billing's ledger, once per user and day.
 */
export function checkinRoutes(api: Router, { clients, guard, options, config }: RouteDeps): void {
  const human = turnstileCheck(options, config.TURNSTILE_VERIFY_URL);

  api.get('/user/checkin', guard.user, Status, async (req, res) => {
    const s = await clients.users.getCheckinStatus({
      userId: caller(req).id,
      month: input(req, Status).query.month ?? '',
    });
    ok(res, {
      enabled: true,
      min_quota: s.minQuota,
      max_quota: s.maxQuota,
      stats: {
        total_quota: s.totalQuota,
        total_checkins: s.totalCheckins,
        checkin_count: s.checkinCount,
        checked_in_today: s.checkedInToday,
        records: s.records.map((r) => ({ checkin_date: r.checkinDate, quota_awarded: r.quotaAwarded })),
      },
    });
  });

  api.post('/user/checkin', guard.user, Checkin, human, async (req, res) => {
    const r = await clients.users.checkin({ userId: caller(req).id });
    ok(res, { quota_awarded: r.quotaAwarded, checkin_date: r.checkinDate }, '签到成功');
  });
}
