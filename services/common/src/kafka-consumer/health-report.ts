import { type ConsumerHealth, isConsuming } from '../consumer-health.ts';
import type { Logger } from '../logger.ts';
import { kafkaConsumerUp } from '../metrics.ts';
import { healthState, type Membership, stallReason } from './membership.ts';

/**
 * health() of a consumer: its state now (membership.ts), every change in and out of stalled
 * logged with why (a consumer must never stop silently), and the `kafka_consumer_up` gauge.
 */
export function healthReporter(o: {
  membership: Membership;
  stallMs: number;
  groupId: string;
  log: Logger;
}): () => ConsumerHealth {
  const m = o.membership;
  let reported: ConsumerHealth = { state: 'starting', sinceMs: Date.now(), lastProgressMs: 0 };
  return () => {
    const now = Date.now();
    const { state, sinceMs } = healthState(m, o.stallMs, now);
    if (state !== reported.state) {
      if (state === 'stalled')
        o.log.error(
          {
            why: stallReason(m),
            lag: m.assignedLag,
            inFlight: m.inFlight,
            sinceProgressMs: m.lastProgressMs ? now - m.lastProgressMs : null,
          },
          'consumer stalled',
        );
      else if (reported.state === 'stalled' && state === 'consuming')
        o.log.warn({ stalledForMs: now - reported.sinceMs }, 'consumer consuming again');
      reported = { state, sinceMs, lastProgressMs: m.lastProgressMs };
    }
    reported.lastProgressMs = m.lastProgressMs;
    kafkaConsumerUp.set({ group: o.groupId }, isConsuming(reported) ? 1 : 0);
    return { ...reported };
  };
}
