import { ok } from '@aigw/common';
import type { Request, Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from '../deps.ts';
import { optional, optText, timestamp } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { caller, snake } from './wire.ts';

const Query = validate({
  query: z.object({ start_timestamp: optional(timestamp), end_timestamp: optional(timestamp), username: optText }),
});

function range(req: Request): { startTimestamp: number; endTimestamp: number } {
  const q = input(req, Query).query;
  return { startTimestamp: q.start_timestamp ?? 0, endTimestamp: q.end_timestamp ?? 0 };
}

/**
 * /api/data: the data dashboard's hourly buckets per model (token_used, count, quota). Admins
 * query everyone or one username; users their own, at most 30 days at a time.
 */
export function dataRoutes(api: Router, { clients, guard }: RouteDeps): void {
  const { logs } = clients;

  api.get('/data/', guard.admin, Query, async (req, res) => {
    const username = input(req, Query).query.username?.trim() ?? '';
    const r = await logs.getDashboardData({ username, ...range(req) });
    ok(res, r.items.map(snake));
  });

  api.get('/data/self', guard.user, Query, async (req, res) => {
    const r = await logs.getDashboardData({ userId: caller(req).id, ...range(req) });
    ok(res, r.items.map(snake));
  });
}
