import type { Logger } from 'pino';
import { connectRedis, type Redis } from './redis.ts';

/**
 * Signals between billing and the relay processes about wallet slices (docs/security.md,
 * "Reservations drawn from a wallet slice"), on Redis pub/sub:
 *
 * - `revoke`: billing refused a hold (用户额度不足) while the user's wallet slices hold enough to
 *   cover it; every relay holding one stops drawing on it and releases it once its requests on it
 *   have ended;
 * - `released`: billing applied the release of one of the user's slices after a revoke; a relay
 *   waiting to retry a refused pre-consume of the user retries now.
 *
 * Pub/sub rather than a Kafka event: every relay process must hear it (a consumer group would give
 * each message to one member), within milliseconds (the refused request waits for it), and losing
 * one costs only the refusal that was given before revokes existed (the retry's wait is bounded).
 */
export interface SliceSignal {
  kind: 'revoke' | 'released';
  userId: number;
}

/** The channel, under the services' Redis key prefix (ioredis prefixes keys, never channels). */
export const sliceSignalChannel = (keyPrefix: string): string => `${keyPrefix}wallet-slices`;

export const encodeSliceSignal = (s: SliceSignal): string => `${s.kind}:${s.userId}`;

/** The signal a message carries; undefined for anything else. */
export function parseSliceSignal(message: string): SliceSignal | undefined {
  const colon = message.indexOf(':');
  const kind = message.slice(0, colon);
  const userId = Number(message.slice(colon + 1));
  if ((kind !== 'revoke' && kind !== 'released') || !Number.isSafeInteger(userId) || userId <= 0) return undefined;
  return { kind, userId };
}

/** Publishes a signal (fire and forget: a lost one costs a refusal, never money). */
export function publishSliceSignal(redis: Redis, keyPrefix: string, signal: SliceSignal, logger?: Logger): void {
  redis.publish(sliceSignalChannel(keyPrefix), encodeSliceSignal(signal)).catch((err: unknown) => {
    logger?.warn({ err, signal }, 'wallet slices: signal not published');
  });
}

/**
 * Listens to the signals on a connection of its own (a subscribed connection serves nothing
 * else; ioredis subscribes again after a reconnect). Resolves once subscribed.
 */
export async function subscribeSliceSignals(
  url: string,
  keyPrefix: string,
  onSignal: (signal: SliceSignal) => void,
  logger?: Logger,
): Promise<{ stop(): Promise<void> }> {
  const redis = await connectRedis(url, keyPrefix, logger);
  redis.on('message', (_channel: string, message: string) => {
    const signal = parseSliceSignal(message);
    if (signal) onSignal(signal);
  });
  await redis.subscribe(sliceSignalChannel(keyPrefix));
  return {
    async stop() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
