import type { PeerRenewal, RelayLeaseRenewal, ServiceImpl } from '@aigw/common';
import { validRelayLeaseRenewal } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import type { RelayLeaseService } from '@aigw/proto/billing/v1/billing';

/** The longest billing waits for Redis on a relay's behalf (less when the caller's deadline is nearer). */
const REDIS_MAX_MS = 1_000;

/**
 * gRPC handlers of RelayLeaseService: a relay process cut off from Redis renews its lease here
 * (docs/security.md, "Lease lapse"); `renew` puts the renewal in Redis as the relay would
 * (renewRelayLeaseFor in @aigw/common). Three quarters of the time left before the caller's
 * deadline go to Redis, so the relay hears what happened rather than a timeout.
 */
export function relayLeaseHandlers(
  renew: (renewal: RelayLeaseRenewal, timeoutMs: number) => Promise<PeerRenewal>,
): ServiceImpl<typeof RelayLeaseService> {
  return {
    async renewRelayLease(req, ctx) {
      const renewal = { instance: req.instance, score: req.score };
      if (!validRelayLeaseRenewal(renewal)) throw invalid('instance 或 score 格式错误');
      const left = Number(ctx.deadline) - Date.now();
      const outcome = await renew(renewal, Math.max(20, Math.min(REDIS_MAX_MS, (left * 3) / 4)));
      return { renewed: outcome === 'renewed', leasesReadable: outcome === 'readable' };
    },
  };
}
