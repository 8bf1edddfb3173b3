import type { RelayLeaseRenewal, ServiceImpl } from '@aigw/common';
import { validRelayLeaseRenewal } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import type { RelayLeaseService } from '@aigw/proto/billing/v1/billing';

/** The longest billing waits for Redis on a relay's behalf (less when the caller's deadline is nearer). */
const WRITE_MAX_MS = 1_000;

/**
 * gRPC handlers of RelayLeaseService: a relay process cut off from Redis renews its lease here
 * (docs/security.md, "Lease lapse"); `write` puts the renewal in Redis as the relay would and
 * resolves false when Redis failed or did not answer in time. Half of the time left before the
 * caller's deadline goes to the write, so the relay hears "not renewed" rather than a timeout.
 */
export function relayLeaseHandlers(
  write: (renewal: RelayLeaseRenewal, timeoutMs: number) => Promise<boolean>,
): ServiceImpl<typeof RelayLeaseService> {
  return {
    async renewRelayLease(req, ctx) {
      const renewal = { instance: req.instance, score: req.score };
      if (!validRelayLeaseRenewal(renewal)) throw invalid('instance 或 score 格式错误');
      const left = Number(ctx.deadline) - Date.now();
      return { renewed: await write(renewal, Math.max(10, Math.min(WRITE_MAX_MS, left / 2))) };
    },
  };
}
