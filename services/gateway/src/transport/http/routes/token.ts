import { ok } from '@aigw/common';
import type { Request, Router } from 'express';
import { z } from 'zod';
import { checkTokenGroup } from '../../../domain/user-groups.ts';
import type { RouteDeps } from '../deps.ts';
import { body, flag, id, int, int32, list, optional, optText, pageOf, pageShape, pathId, quota } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { caller, defined, pageAnswer, snake } from './wire.ts';

/** Token fields of a create or update body (spec 02 section 3). */
const fields = {
  name: optText,
  remain_quota: optional(quota()),
  expired_time: optional(int(undefined, undefined, '过期时间格式错误！')),
  unlimited_quota: optional(flag),
  model_limits_enabled: optional(flag),
  model_limits: list.nullish().transform((v) => v ?? undefined),
  allow_ips: optText,
  group: optText,
  // Per-token rate limits (0 no limit), enforced by the relay across replicas.
  rpm_limit: optional(int(0, 1_000_000_000, 'RPM 限制必须是 0 到 1000000000 之间的整数（0 表示不限制）')),
  tpm_limit: optional(int(0, 1_000_000_000, 'TPM 限制必须是 0 到 1000000000 之间的整数（0 表示不限制）')),
  concurrency_limit: optional(int(0, 1_000_000_000, '并发请求限制必须是 0 到 1000000000 之间的整数（0 表示不限制）')),
  // Period budgets in quota (0 none), from midnight, Monday and the 1st in the TimeZone option.
  budget_daily: optional(int(0, Number.MAX_SAFE_INTEGER, '每日预算必须为非负整数（0 表示不限制）')),
  budget_weekly: optional(int(0, Number.MAX_SAFE_INTEGER, '每周预算必须为非负整数（0 表示不限制）')),
  budget_monthly: optional(int(0, Number.MAX_SAFE_INTEGER, '每月预算必须为非负整数（0 表示不限制）')),
  // new-api's cross_group_retry: an auto token goes on in the next auto group when its channels fail.
  cross_group_retry: optional(flag),
};

const List = validate({ query: z.object(pageShape) });
const Search = validate({ query: z.object({ keyword: optText, token: optText, ...pageShape }) });
const ById = validate({ params: pathId });
const Create = validate({ body: body({ ...fields, count: optional(int32()) }) });
const Update = validate({
  query: z.object({ status_only: optional(flag) }),
  body: body({ ...fields, id: id(), status: optional(int32()) }),
});

type Fields = z.output<ReturnType<typeof body<typeof fields>>>;
const toGrpc = (f: Fields) => ({
  name: f.name,
  remainQuota: f.remain_quota,
  expiredTime: f.expired_time,
  unlimitedQuota: f.unlimited_quota,
  modelLimitsEnabled: f.model_limits_enabled,
  modelLimits: f.model_limits,
  allowIps: f.allow_ips,
  group: f.group,
  rpmLimit: f.rpm_limit,
  tpmLimit: f.tpm_limit,
  concurrencyLimit: f.concurrency_limit,
  budgetDaily: f.budget_daily,
  budgetWeekly: f.budget_weekly,
  budgetMonthly: f.budget_monthly,
  crossGroupRetry: f.cross_group_retry,
});

/** /api/token: the caller's own API tokens. */
export function tokenRoutes(api: Router, { clients, guard, options }: RouteDeps): void {
  const { tokens } = clients;

  /** A token group other than the owner's own must be one they may pick (special usable groups). */
  async function checkGroup(req: Request, group: string | undefined): Promise<void> {
    if (!group?.trim()) return;
    const { user } = await clients.users.getUser({ id: caller(req).id });
    checkTokenGroup(group, { group: user?.group || 'default', role: user?.role ?? 0 }, options);
  }

  api.get('/token/', guard.user, List, async (req, res) => {
    const r = await tokens.listTokens({ userId: caller(req).id, page: pageOf(input(req, List).query) });
    ok(res, pageAnswer(r.items, r.page));
  });

  api.get('/token/search', guard.user, Search, async (req, res) => {
    const q = input(req, Search).query;
    const r = await tokens.searchTokens({
      userId: caller(req).id,
      keyword: q.keyword ?? '',
      token: q.token ?? '',
      page: pageOf(q),
    });
    ok(res, pageAnswer(r.items, r.page));
  });

  api.get('/token/:id', guard.user, ById, async (req, res) => {
    const r = await tokens.getToken({ userId: caller(req).id, id: input(req, ById).params.id });
    ok(res, r.token ? snake(r.token) : null);
  });

  api.post('/token/', guard.user, Create, async (req, res) => {
    const b = input(req, Create).body;
    const f = toGrpc(b);
    await checkGroup(req, f.group);
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
      rpmLimit: f.rpmLimit ?? 0,
      tpmLimit: f.tpmLimit ?? 0,
      concurrencyLimit: f.concurrencyLimit ?? 0,
      budgetDaily: f.budgetDaily ?? 0,
      budgetWeekly: f.budgetWeekly ?? 0,
      budgetMonthly: f.budgetMonthly ?? 0,
      crossGroupRetry: f.crossGroupRetry ?? false,
      count: b.count ?? 1,
    });
    ok(res, r.tokens.map(snake), `${r.tokens.length} 个令牌创建成功`);
  });

  api.put('/token/', guard.user, Update, async (req, res) => {
    const { query, body: b } = input(req, Update);
    const userId = caller(req).id;
    if (query.status_only) {
      const r = await tokens.updateTokenStatus({ userId, id: b.id, status: b.status ?? 0 });
      ok(res, r.token ? snake(r.token) : null);
      return;
    }
    await checkGroup(req, b.group);
    const r = await tokens.updateToken({ userId, id: b.id, ...defined(toGrpc(b)) });
    ok(res, r.token ? snake(r.token) : null);
  });

  api.delete('/token/:id', guard.user, ById, async (req, res) => {
    await tokens.deleteToken({ userId: caller(req).id, id: input(req, ById).params.id });
    ok(res);
  });
}
