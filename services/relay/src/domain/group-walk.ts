/**
 * new-api's cross-group retry: an `auto` token with `cross_group_retry` goes on in the next of
 * its auto groups when the group in use cannot serve the request (no channel for the model left,
 * or its channels failed before answering). Shared by the HTTP pipeline (relay-request.ts) and
 * the Realtime WebSocket (transport/http/realtime-ws.ts), so both walk the groups alike.
 */
import type { RelayCaller } from './relay-request.ts';

/**
 * Moves `caller.group` to the next auto group after it for which `serves` holds (a channel for
 * the model not tried yet); false, leaving the caller as it was, when the token does not retry
 * across groups or no later group serves.
 */
export function moveToNextGroup(
  caller: Pick<RelayCaller, 'group' | 'autoGroups' | 'crossGroupRetry'>,
  serves: (group: string) => boolean,
): boolean {
  if (!caller.crossGroupRetry || !caller.autoGroups) return false;
  const groups = caller.autoGroups;
  for (let i = groups.indexOf(caller.group) + 1; i < groups.length; i++) {
    const g = groups[i] as string;
    if (!serves(g)) continue;
    caller.group = g;
    return true;
  }
  return false;
}

/**
 * new-api's `other.billing_source` on a log row: the subscription billing's pre-consume chose to
 * pay the request (settled against it); nothing for the wallet.
 */
export function billingSourceDetails(other: Record<string, unknown>, subscriptionId: string): void {
  if (subscriptionId) Object.assign(other, { billing_source: 'subscription', subscription_id: subscriptionId });
}
