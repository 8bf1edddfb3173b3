/**
 * Tokens by key and users by id, cached in memory: the relay authenticates without a call per
 * request. Entries live `ttlMs` and are dropped at once on EntityChangedEvent (see
 * transport/kafka/entity-events.ts).
 */
import { AppError, type ServiceClient } from '@aigw/common';
import type { TokensService } from '@aigw/proto/billing/v1/billing';
import type { UsersService } from '@aigw/proto/users/v1/users';
import { parseAllowIps, type TokenInfo, type UserInfo } from '../domain/authorize.ts';
import { ttlCache } from './ttl-cache.ts';

export interface IdentityCaches {
  token(key: string): Promise<TokenInfo | undefined>;
  user(id: number): Promise<UserInfo | undefined>;
  /** The cached token or user when fresh, without a promise (the hot path's common case). */
  cachedToken(key: string): TokenInfo | undefined;
  cachedUser(id: number): UserInfo | undefined;
  dropToken(key: string, id: number): void;
  dropUser(id: number): void;
  /** Local spend since the token was loaded (its cached remain_quota shrinks with it). */
  spend(tokenId: number, quota: number): void;
}

export function identityCaches(deps: {
  tokens: ServiceClient<typeof TokensService>;
  users: ServiceClient<typeof UsersService>;
  ttlMs: number;
}): IdentityCaches {
  const keyById = new Map<number, string>();
  const byKey = new Map<number, TokenInfo>();
  const tokens = ttlCache<string, TokenInfo>({
    ttlMs: deps.ttlMs,
    load: async (key) => {
      try {
        const { token: t } = await deps.tokens.lookupToken({ key });
        if (!t) return undefined;
        const limits = t.modelLimitsEnabled
          ? new Set(
              t.modelLimits
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean),
            )
          : null;
        const info: TokenInfo = {
          id: t.id,
          userId: t.userId,
          name: t.name,
          status: t.status,
          remainQuota: t.remainQuota,
          usedQuota: t.usedQuota,
          unlimitedQuota: t.unlimitedQuota,
          expiredTime: t.expiredTime,
          allowIps: parseAllowIps(t.allowIps),
          modelLimits: limits,
          group: t.group,
          rpmLimit: t.rpmLimit,
          tpmLimit: t.tpmLimit,
          concurrencyLimit: t.concurrencyLimit,
          budgets: { daily: t.budgetDaily, weekly: t.budgetWeekly, monthly: t.budgetMonthly },
          crossGroupRetry: t.crossGroupRetry,
        };
        keyById.set(t.id, key);
        byKey.set(t.id, info);
        return info;
      } catch (err) {
        if (err instanceof AppError && err.code === 'NOT_FOUND') return undefined;
        throw err;
      }
    },
  });
  const users = ttlCache<number, UserInfo>({
    ttlMs: deps.ttlMs,
    load: async (id) => {
      try {
        const { user: u } = await deps.users.getUser({ id });
        if (!u) return undefined;
        return {
          id: u.id,
          username: u.username,
          group: u.group || 'default',
          role: u.role,
          status: u.status,
          deleted: u.deletedAt > 0,
        };
      } catch (err) {
        if (err instanceof AppError && err.code === 'NOT_FOUND') return undefined;
        throw err;
      }
    },
  });
  return {
    token: (key) => tokens.get(key),
    user: (id) => users.get(id),
    cachedToken: (key) => tokens.peek(key),
    cachedUser: (id) => users.peek(id),
    dropToken(key, id) {
      const k = key || keyById.get(id);
      if (k) tokens.delete(k);
      keyById.delete(id);
      byKey.delete(id);
    },
    dropUser: (id) => users.delete(id),
    spend(tokenId, quota) {
      const t = byKey.get(tokenId);
      if (!t) return;
      t.usedQuota += quota;
      if (!t.unlimitedQuota) t.remainQuota -= quota;
    },
  };
}
