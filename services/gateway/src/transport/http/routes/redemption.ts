import { ok } from '@aigw/common';
import type { Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from '../deps.ts';
import { body, flag, id, int32, optional, optText, pageOf, pageShape, pathId, quota, timestamp } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { actorOf, caller, pageAnswer, snake } from './wire.ts';

const List = validate({ query: z.object(pageShape) });
const Search = validate({ query: z.object({ keyword: optText, ...pageShape }) });
const ById = validate({ params: pathId });
const Create = validate({
  body: body({
    name: optText,
    quota: optional(quota()),
    count: optional(int32('数量必须是整数')),
    expired_time: optional(timestamp),
  }),
});
const Update = validate({
  query: z.object({ status_only: optional(flag) }),
  body: body({
    id: id(),
    status: optional(int32('无效的状态')),
    name: optText,
    quota: optional(quota()),
    expired_time: optional(timestamp),
  }),
});
const Redeem = validate({ body: body({ key: optText }) });

/** /api/redemption (admin) and POST /api/user/topup (redeem a code). */
export function redemptionRoutes(api: Router, { clients, guard }: RouteDeps): void {
  const { redemptions } = clients;

  api.get('/redemption/', guard.admin, List, async (req, res) => {
    const r = await redemptions.listRedemptions({ page: pageOf(input(req, List).query) });
    ok(res, pageAnswer(r.items, r.page));
  });

  api.get('/redemption/search', guard.admin, Search, async (req, res) => {
    const q = input(req, Search).query;
    const r = await redemptions.searchRedemptions({ keyword: q.keyword ?? '', page: pageOf(q) });
    ok(res, pageAnswer(r.items, r.page));
  });

  // Before /redemption/:id, which would take "invalid" for an id.
  api.delete('/redemption/invalid', guard.admin, async (_req, res) => {
    const r = await redemptions.deleteInvalidRedemptions({});
    ok(res, r.count);
  });

  api.get('/redemption/:id', guard.admin, ById, async (req, res) => {
    const r = await redemptions.getRedemption({ id: input(req, ById).params.id });
    ok(res, r.redemption ? snake(r.redemption) : null);
  });

  api.post('/redemption/', guard.admin, Create, async (req, res) => {
    const b = input(req, Create).body;
    const r = await redemptions.createRedemptions({
      actor: actorOf(req),
      name: b.name ?? '',
      quota: b.quota ?? 0,
      count: b.count ?? 1,
      expiredTime: b.expired_time ?? 0,
    });
    ok(res, r.keys);
  });

  api.put('/redemption/', guard.admin, Update, async (req, res) => {
    const { query, body: b } = input(req, Update);
    if (query.status_only) {
      const r = await redemptions.updateRedemptionStatus({ id: b.id, status: b.status ?? 0 });
      ok(res, r.redemption ? snake(r.redemption) : null);
      return;
    }
    const r = await redemptions.updateRedemption({
      id: b.id,
      ...(b.name === undefined ? {} : { name: b.name }),
      ...(b.quota === undefined ? {} : { quota: b.quota }),
      ...(b.expired_time === undefined ? {} : { expiredTime: b.expired_time }),
    });
    ok(res, r.redemption ? snake(r.redemption) : null);
  });

  api.delete('/redemption/:id', guard.admin, ById, async (req, res) => {
    await redemptions.deleteRedemption({ id: input(req, ById).params.id });
    ok(res);
  });

  api.post('/user/topup', guard.user, Redeem, async (req, res) => {
    const u = caller(req);
    const r = await redemptions.redeem({ key: input(req, Redeem).body.key ?? '', userId: u.id, username: u.username });
    ok(res, r.quota);
  });
}
