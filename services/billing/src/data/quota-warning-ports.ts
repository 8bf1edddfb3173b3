import type { Logger, Redis, ServiceClient } from '@aigw/common';
import type { UsersService } from '@aigw/proto/users/v1/users';
import { describeQuota, type OptionReader } from '../domain/ports.ts';
import type { QuotaWarningPorts } from '../domain/quota-warning.ts';

/** How long a user's threshold is reused (a settings change applies within this time). */
const THRESHOLD_TTL_MS = 5_000;
/** The warned flag outlives any sensible gap between a crossing and a top-up. */
const FLAG_TTL_S = 90 * 24 * 3600;

/**
 * The quota warning's ports: thresholds from the user's setting (users' GetUser) or the
 * QuotaRemindThreshold option, the warned flags in Redis (`quota-warned:<user>`), and the message
 * sent through users' NotifyUser (which knows the user's way to be told).
 */
export function quotaWarningPorts(deps: {
  redis: Redis;
  users: ServiceClient<typeof UsersService>;
  options: OptionReader;
  logger: Logger;
}): QuotaWarningPorts {
  const { redis, users, options, logger } = deps;
  const cached = new Map<number, { at: number; value: Promise<number> }>();
  const flag = (userId: number) => `quota-warned:${userId}`;
  async function load(userId: number): Promise<number> {
    const { user } = await users.getUser({ id: userId });
    let own = 0;
    try {
      own = Number(
        (JSON.parse(user?.setting || '{}') as { quota_warning_threshold?: unknown }).quota_warning_threshold,
      );
    } catch {
      own = 0;
    }
    return Number.isFinite(own) && own > 0 ? own : options.number('QuotaRemindThreshold');
  }
  return {
    threshold(userId) {
      const hit = cached.get(userId);
      if (hit && Date.now() - hit.at < THRESHOLD_TTL_MS) return hit.value;
      const value = load(userId);
      cached.set(userId, { at: Date.now(), value });
      value.catch(() => cached.delete(userId));
      if (cached.size > 50_000) cached.delete(cached.keys().next().value as number);
      return value;
    },
    claim: async (userId) => (await redis.set(flag(userId), '1', 'EX', FLAG_TTL_S, 'NX')) === 'OK',
    rearm: async (userId) => {
      await redis.del(flag(userId));
    },
    async send(userId, quota) {
      const prompt = '您的额度即将用尽';
      const { sent } = await users.notifyUser({
        userId,
        type: 'quota_exceed',
        title: prompt,
        content: '{{value}}，当前剩余额度为 {{value}}，为了不影响您的使用，请及时充值。',
        values: [prompt, describeQuota(quota, options)],
      });
      logger.info({ userId, quota, sent }, 'quota warning');
    },
    onError: (err, userId) => logger.warn({ err, userId }, 'quota warning not sent'),
  };
}
