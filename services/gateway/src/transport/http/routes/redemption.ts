import { ok } from '@aigw/common';
import type { Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { actorOf, body, bool, caller, idParam, num, pageAnswer, pageQuery, snake, str } from './wire.ts';

/** /api/redemption (admin) and POST /api/user/topup (redeem a code). */
export function redemptionRoutes(api: Router, { clients, guard }: RouteDeps): void {
  const { redemptions } = clients;

  api.get('/redemption/', guard.admin, async (req, res) => {
    const r = await redemptions.listRedemptions({ page: pageQuery(req) });
    ok(res, pageAnswer(r.items, r.page));
  });

  api.get('/redemption/search', guard.admin, async (req, res) => {
    const r = await redemptions.searchRedemptions({ keyword: str(req.query.keyword) ?? '', page: pageQuery(req) });
    ok(res, pageAnswer(r.items, r.page));
  });

  api.get('/redemption/:id', guard.admin, async (req, res) => {
    const r = await redemptions.getRedemption({ id: idParam(req) });
    ok(res, r.redemption ? snake(r.redemption) : null);
  });

  api.post('/redemption/', guard.admin, async (req, res) => {
    const b = body(req);
    const r = await redemptions.createRedemptions({
      actor: actorOf(req),
      name: str(b.name) ?? '',
      quota: num(b.quota) ?? 0,
      count: num(b.count) ?? 1,
    });
    ok(res, r.keys);
  });

  api.put('/redemption/', guard.admin, async (req, res) => {
    const b = body(req);
    const id = num(b.id) ?? 0;
    if (bool(req.query.status_only)) {
      const r = await redemptions.updateRedemptionStatus({ id, status: num(b.status) ?? 0 });
      ok(res, r.redemption ? snake(r.redemption) : null);
      return;
    }
    const name = str(b.name);
    const quota = num(b.quota);
    const r = await redemptions.updateRedemption({
      id,
      ...(name === undefined ? {} : { name }),
      ...(quota === undefined ? {} : { quota }),
    });
    ok(res, r.redemption ? snake(r.redemption) : null);
  });

  api.delete('/redemption/:id', guard.admin, async (req, res) => {
    await redemptions.deleteRedemption({ id: idParam(req) });
    ok(res);
  });

  api.post('/user/topup', guard.user, async (req, res) => {
    const u = caller(req);
    const r = await redemptions.redeem({ key: str(body(req).key) ?? '', userId: u.id, username: u.username });
    ok(res, r.quota);
  });
}
