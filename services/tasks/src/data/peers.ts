/**
 * What the tasks service reads from its peers, cached briefly: tokens (billing), users, channels
 * (the channels service's selection and relay snapshot, for a task's own channel), ratios and
 * the wallet calls. Tasks are few next to chat requests, so short TTLs and plain calls suffice.
 */
import { AppError, type ServiceClient } from '@aigw/common';
import type { PricingService, TokensService, WalletService } from '@aigw/proto/billing/v1/billing';
import type { ChannelsService, RelayChannel } from '@aigw/proto/channels/v1/channels';
import type { UsersService } from '@aigw/proto/users/v1/users';
import type { Caller, ChannelRef, Peers, Ratios } from '../domain/ports.ts';

function memo<K, V>(ttlMs: number, load: (k: K) => Promise<V>) {
  const m = new Map<K, { v: Promise<V>; at: number }>();
  return {
    get(k: K): Promise<V> {
      const hit = m.get(k);
      if (hit && Date.now() - hit.at < ttlMs) return hit.v;
      const v = load(k);
      m.set(k, { v, at: Date.now() });
      v.catch(() => m.delete(k));
      if (m.size > 10_000) m.delete(m.keys().next().value as K);
      return v;
    },
    clear: () => m.clear(),
  };
}

const notFoundToUndefined = (err: unknown) => {
  if (err instanceof AppError && err.code === 'NOT_FOUND') return undefined;
  throw err;
};

function toRef(c: RelayChannel): ChannelRef {
  return { id: c.id, type: c.type, key: c.key, baseUrl: c.baseUrl, status: c.status, name: c.name };
}

export function peers(deps: {
  tokens: ServiceClient<typeof TokensService>;
  users: ServiceClient<typeof UsersService>;
  channels: ServiceClient<typeof ChannelsService>;
  pricing: ServiceClient<typeof PricingService>;
  wallet: ServiceClient<typeof WalletService>;
  ttlMs: number;
}): Peers & { dropRatios(): void } {
  const tokens = memo(deps.ttlMs, (key: string) =>
    deps.tokens.lookupToken({ key }).then((r) => r.token, notFoundToUndefined),
  );
  const users = memo(deps.ttlMs, (id: number) => deps.users.getUser({ id }).then((r) => r.user, notFoundToUndefined));
  const ratios = memo(deps.ttlMs, async (_: 0): Promise<Ratios> => {
    const r = await deps.pricing.getRatios({});
    return { modelPrice: r.modelPrice, groupRatio: r.groupRatio };
  });
  const snapshot = memo(deps.ttlMs, async (_: 0) => {
    const snap = await deps.channels.getRelaySnapshot({}, { deadlineMs: 15_000 });
    return new Map(snap.channels.map((c) => [c.id, toRef(c)]));
  });

  return {
    async caller(key): Promise<Caller | undefined> {
      const t = await tokens.get(key);
      if (!t) return undefined;
      const u = await users.get(t.userId);
      return {
        token: t,
        user: u
          ? {
              id: u.id,
              username: u.username,
              group: u.group || 'default',
              role: u.role,
              status: u.status,
              deleted: u.deletedAt > 0,
            }
          : undefined,
      };
    },
    ratios: () => ratios.get(0),
    dropRatios: () => ratios.clear(),
    async selectChannel(group, model) {
      try {
        const r = await deps.channels.selectChannel({ group, model, retry: 0, excludeChannelIds: [] });
        return r.channel ? toRef(r.channel) : undefined;
      } catch (err) {
        return notFoundToUndefined(err);
      }
    },
    async channel(id) {
      const hit = (await snapshot.get(0)).get(id);
      if (hit) return hit;
      snapshot.clear();
      return (await snapshot.get(0)).get(id);
    },
    preConsume: (req) => deps.wallet.preConsume(req).then((r) => ({ subscriptionId: r.subscriptionId })),
    settle: (req) => deps.wallet.settle(req).then(() => undefined),
    refund: (requestId) => deps.wallet.refund({ requestId }).then((r) => r.refunded),
  };
}
