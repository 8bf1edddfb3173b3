/**
 * Routing and pricing data held in memory: the channels service's relay snapshot (abilities and
 * channels with keys) and billing's ratios. Both reload on change events (debounced) and every
 * `refreshMs` as a safety net; a failed reload keeps the last good copy.
 */
import type { Logger, ServiceClient } from '@aigw/common';
import type { PricingService } from '@aigw/proto/billing/v1/billing';
import type { ChannelsService } from '@aigw/proto/channels/v1/channels';
import { buildChannelIndex, type ChannelIndex } from '../domain/channel-index.ts';
import type { Ratios } from '../domain/pricing.ts';

export interface Reloadable<T> {
  current(): T;
  /** Whether a load has succeeded yet (before it, current() is the empty initial value). */
  loaded(): boolean;
  /** Schedules a reload soon (coalescing bursts of events). */
  invalidate(): void;
  reload(): Promise<void>;
  stop(): void;
}

/** Retries of a failed load: 0.5 s, doubling, at most 10 s apart. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 10_000;

function reloadable<T>(opts: {
  initial: T;
  load(): Promise<T>;
  refreshMs: number;
  debounceMs: number;
  logger: Logger;
  what: string;
}): Reloadable<T> {
  let value = opts.initial;
  let loaded = false;
  let timer: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  const reload = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = opts
      .load()
      .then((v) => {
        value = v;
        loaded = true;
        failures = 0;
      })
      .catch((err) => {
        failures++;
        // A failed load is tried again in seconds, not at the next refresh (a minute): right
        // after a start the peer is often still starting, and until the first load succeeds the
        // relay has nothing to serve from (it reports not ready and refuses with 503 meanwhile).
        const inMs = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (failures - 1));
        opts.logger.warn(
          { err, retryInMs: inMs, failures },
          loaded ? `${opts.what} reload failed; keeping the last copy` : `${opts.what} not loaded yet`,
        );
        if (!retry && !stopped) {
          retry = setTimeout(() => {
            retry = undefined;
            void reload();
          }, inMs);
          retry.unref();
        }
      })
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          void reload();
        }
      });
    return running;
  };
  const interval = setInterval(() => void reload(), opts.refreshMs);
  interval.unref();
  return {
    current: () => value,
    loaded: () => loaded,
    invalidate() {
      if (timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        void reload();
      }, opts.debounceMs);
      timer.unref();
    },
    reload,
    stop() {
      stopped = true;
      clearInterval(interval);
      if (timer) clearTimeout(timer);
      if (retry) clearTimeout(retry);
    },
  };
}

export function channelSnapshot(
  client: ServiceClient<typeof ChannelsService>,
  logger: Logger,
  refreshMs: number,
): Reloadable<ChannelIndex> {
  return reloadable({
    initial: buildChannelIndex([], []),
    refreshMs,
    debounceMs: 100,
    logger,
    what: 'channel snapshot',
    load: async () => {
      const snap = await client.getRelaySnapshot({}, { deadlineMs: 15_000 });
      return buildChannelIndex(snap.channels, snap.abilities, snap.version);
    },
  });
}

/**
 * Billing's ratios. `seenVersion` is the options version this relay has seen (its options cache):
 * an answer built from an older version of billing's options (billing had not yet applied the
 * change that made this relay reload) counts as a failed load, so it is tried again in 0.5 s
 * instead of serving the old ratios until the next refresh (a minute: the fault suite saw every
 * request of a scenario priced without the CompletionRatio set just before it).
 */
export function pricingData(
  client: ServiceClient<typeof PricingService>,
  logger: Logger,
  refreshMs: number,
  seenVersion: () => number,
): Reloadable<Ratios> {
  return reloadable<Ratios>({
    initial: { modelRatio: {}, completionRatio: {}, modelPrice: {}, groupRatio: { default: 1 } },
    refreshMs,
    debounceMs: 100,
    logger,
    what: 'ratios',
    load: async () => {
      const want = seenVersion();
      const r = await client.getRatios({});
      if (r.version < want)
        throw new Error(`billing answered ratios of options version ${r.version}; this relay has seen ${want}`);
      return {
        modelRatio: r.modelRatio,
        completionRatio: r.completionRatio,
        modelPrice: r.modelPrice,
        groupRatio: r.groupRatio,
        cacheRatio: r.cacheRatio,
        cacheCreationRatio: r.cacheCreationRatio,
        audioRatio: r.audioRatio,
        audioCompletionRatio: r.audioCompletionRatio,
        imageRatio: r.imageRatio,
      };
    },
  });
}
