import type { ServiceClient } from '@aigw/common';
import type { RelayAdminService } from '@aigw/proto/relay/v1/relay';
import type { RelayTester } from '../../domain/channel-health.ts';

/** Channel tests through the relay's RelayAdminService.TestChannel (the same adaptors as traffic). */
export function relayTester(relay: ServiceClient<typeof RelayAdminService>): RelayTester {
  return async ({ channel, model }) => {
    const res = await relay.testChannel({ channelId: channel.id, model, channel }, { deadlineMs: 60_000 });
    return { success: res.success, timeMs: res.timeMs, message: res.message, statusCode: res.statusCode };
  };
}
