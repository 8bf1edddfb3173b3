import { ok } from '@aigw/common';
import type { Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { body, bool, caller, defined, idParam, num, pageAnswer, pageQuery, snake, str } from './wire.ts';

/** Token fields of a create or update body (spec 02 section 3). */
function tokenFields(b: Record<string, unknown>) {
  const limits = b.model_limits;
  return {
    name: str(b.name),
    remainQuota: num(b.remain_quota),
    expiredTime: num(b.expired_time),
    unlimitedQuota: bool(b.unlimited_quota),
    modelLimitsEnabled: bool(b.model_limits_enabled),
    modelLimits: Array.isArray(limits) ? limits.map(String).join(',') : str(limits),
    allowIps: str(b.allow_ips),
    group: str(b.group),
  };
}

/** /api/token: the caller's own API tokens. */
export function tokenRoutes(api: Router, { clients, guard }: RouteDeps): void {
  const { tokens } = clients;

  api.get('/token/', guard.user, async (req, res) => {
    const r = await tokens.listTokens({ userId: caller(req).id, page: pageQuery(req) });
    ok(res, pageAnswer(r.items, r.page));
  });

  api.get('/token/search', guard.user, async (req, res) => {
    const r = await tokens.searchTokens({
      userId: caller(req).id,
      keyword: str(req.query.keyword) ?? '',
      token: str(req.query.token) ?? '',
      page: pageQuery(req),
    });
    ok(res, pageAnswer(r.items, r.page));
  });

  api.get('/token/:id', guard.user, async (req, res) => {
    const r = await tokens.getToken({ userId: caller(req).id, id: idParam(req) });
    ok(res, r.token ? snake(r.token) : null);
  });

  api.post('/token/', guard.user, async (req, res) => {
    const b = body(req);
    const f = tokenFields(b);
    const r = await tokens.createTokens({
      userId: caller(req).id,
      name: f.name ?? '',
      remainQuota: f.remainQuota ?? 0,
      expiredTime: f.expiredTime ?? -1,
      unlimitedQuota: f.unlimitedQuota ?? false,
      modelLimitsEnabled: f.modelLimitsEnabled ?? false,
      modelLimits: f.modelLimits ?? '',
      allowIps: f.allowIps ?? '',
      group: f.group ?? '',
      count: num(b.count) ?? 1,
    });
    ok(res, r.tokens.map(snake), `${r.tokens.length} 个令牌创建成功`);
  });

  api.put('/token/', guard.user, async (req, res) => {
    const b = body(req);
    const userId = caller(req).id;
    const id = num(b.id) ?? 0;
    if (bool(req.query.status_only)) {
      const r = await tokens.updateTokenStatus({ userId, id, status: num(b.status) ?? 0 });
      ok(res, r.token ? snake(r.token) : null);
      return;
    }
    const f = tokenFields(b);
    const r = await tokens.updateToken({ userId, id, ...defined(f) });
    ok(res, r.token ? snake(r.token) : null);
  });

  api.delete('/token/:id', guard.user, async (req, res) => {
    await tokens.deleteToken({ userId: caller(req).id, id: idParam(req) });
    ok(res);
  });
}
