import { ok } from '@aigw/common';
import { AppError, denied, unauthenticated } from '@aigw/common/errors';
import type { Token } from '@aigw/proto/billing/v1/billing';
import { LogType } from '@aigw/proto/common/v1/common';
import type { Request, Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { forSelf } from './log.ts';
import { snake } from './wire.ts';

/** new-api's MaxRecentItems: the logs /api/log/token lists at most. */
const MAX_RECENT = 1_000;
const PAGE = 100;

/** The key of `Authorization: Bearer sk-<key>[-<channel>]`, as new-api reads it. */
export function keyOf(header: string | undefined): string {
  let key = (header ?? '').trim();
  if (/^bearer /i.test(key)) key = key.slice(7).trim();
  if (key.startsWith('sk-')) key = key.slice(3);
  return key.split('-')[0] ?? '';
}

/**
 * The read-only lookups by an API key, without a login (new-api's TokenAuthReadOnly): the key's
 * recent logs (GET /api/log/token) and its usage and quota (GET /api/usage/token). Any token
 * state passes but disabled; a banned owner is refused. The answers are new-api's.
 */
export function logByKeyRoutes(api: Router, { clients, critical }: RouteDeps): void {
  const tokenOf = async (req: Request): Promise<Token> => {
    if (!req.headers.authorization) throw unauthenticated('未提供令牌');
    const key = keyOf(req.headers.authorization);
    if (!/^[\x21-\x7e]{1,128}$/.test(key)) throw unauthenticated('无效的令牌');
    const found = await clients.tokens.lookupToken({ key }).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    });
    const token = found?.token;
    if (!token) throw unauthenticated('无效的令牌');
    if (token.status === 2) throw unauthenticated('该令牌状态不可用');
    const { user } = await clients.users.getUser({ id: token.userId });
    if (!user || user.status !== 1 || user.deletedAt) throw denied('用户已被封禁');
    return token;
  };

  // The key's consumption and error logs, newest first (read through the token name's list).
  api.get('/log/token', async (req, res) => {
    const token = await tokenOf(req);
    const out: Record<string, unknown>[] = [];
    for (let page = 1; out.length < MAX_RECENT && page <= MAX_RECENT / PAGE; page++) {
      const r = await clients.logs.queryLogs({
        filter: { userId: token.userId, tokenName: token.name },
        page: { page, pageSize: PAGE },
      });
      for (const l of r.items) {
        if (l.tokenId !== token.id || (l.type !== LogType.CONSUME && l.type !== LogType.ERROR)) continue;
        if (out.length < MAX_RECENT) out.push(forSelf(snake(l)));
      }
      if (r.items.length < PAGE) break;
    }
    ok(res, out);
  });

  api.get('/usage/token', critical, async (req, res) => {
    const t = await tokenOf(req);
    const limits = t.modelLimits
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean);
    res.json({
      code: true,
      message: 'ok',
      data: {
        object: 'token_usage',
        name: t.name,
        total_granted: t.remainQuota + t.usedQuota,
        total_used: t.usedQuota,
        total_available: t.remainQuota,
        unlimited_quota: t.unlimitedQuota,
        model_limits: Object.fromEntries(limits.map((m) => [m, true])),
        model_limits_enabled: t.modelLimitsEnabled,
        expires_at: t.expiredTime === -1 ? 0 : t.expiredTime,
      },
    });
  });
}
