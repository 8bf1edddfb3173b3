import { ok } from '@aigw/common';
import type { Request, Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { caller, num, snake, str } from './wire.ts';

function range(req: Request): { startTimestamp: number; endTimestamp: number } {
  const n = (v: unknown) => {
    const x = num(v);
    return x !== undefined && Number.isFinite(x) ? x : 0;
  };
  return { startTimestamp: n(req.query.start_timestamp), endTimestamp: n(req.query.end_timestamp) };
}

/**
 * /api/data: the data dashboard's hourly buckets per model (token_used, count, quota). Admins
 * query everyone or one username; users their own, at most 30 days at a time.
 */
export function dataRoutes(api: Router, { clients, guard }: RouteDeps): void {
  const { logs } = clients;

  api.get('/data/', guard.admin, async (req, res) => {
    const r = await logs.getDashboardData({ username: str(req.query.username)?.trim() ?? '', ...range(req) });
    ok(res, r.items.map(snake));
  });

  api.get('/data/self', guard.user, async (req, res) => {
    const r = await logs.getDashboardData({ userId: caller(req).id, ...range(req) });
    ok(res, r.items.map(snake));
  });
}
