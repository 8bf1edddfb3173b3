import { type Logger, publishSliceSignal, type Redis } from '@aigw/common';
import type { SliceRevokes } from '../domain/ports.ts';

/** How long after a revoke the releases of the user's slices are announced (a refused relay waits at most ~1 s). */
const WATCH_MS = 3_000;
/** Revokes of one user closer together than this are one (a burst of refusals, one signal). */
const REPEAT_MS = 100;

/**
 * The revokes of wallet slices on Redis pub/sub (common/slice-signals.ts). A release is announced
 * only for users revoked in the last WATCH_MS: relays hear one message per revoke and per release
 * that someone may be waiting for, not one per slice.
 */
export function sliceRevokes(
  redis: Redis,
  keyPrefix: string,
  logger: Logger,
  clock: () => number = Date.now,
): SliceRevokes {
  const revokedAt = new Map<number, number>();
  const forgetOld = (now: number) => {
    for (const [userId, at] of revokedAt) if (now - at > WATCH_MS) revokedAt.delete(userId);
  };
  return {
    revoke(userId) {
      const now = clock();
      const last = revokedAt.get(userId);
      if (last !== undefined && now - last < REPEAT_MS) return;
      if (revokedAt.size > 1_000) forgetOld(now);
      revokedAt.set(userId, now);
      publishSliceSignal(redis, keyPrefix, { kind: 'revoke', userId }, logger);
    },
    released(userId) {
      const at = revokedAt.get(userId);
      if (at === undefined) return;
      if (clock() - at > WATCH_MS) {
        revokedAt.delete(userId);
        return;
      }
      publishSliceSignal(redis, keyPrefix, { kind: 'released', userId }, logger);
    },
  };
}
