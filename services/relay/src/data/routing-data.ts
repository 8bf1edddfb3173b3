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
  /** Schedules a reload soon (coalescing bursts of events). */
  invalidate(): void;
  reload(): Promise<void>;
  stop(): void;
}

function reloadable<T>(opts: {
  initial: T;
  load(): Promise<T>;
  refreshMs: number;
  debounceMs: number;
  logger: Logger;
  what: string;
}): Reloadable<T> {
  let value = opts.initial;
  let timer: NodeJS.Timeout | undefined;
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
      })
      .catch((err) => opts.logger.warn({ err }, `${opts.what} reload failed; keeping the last copy`))
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
      clearInterval(interval);
      if (timer) clearTimeout(timer);
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

export function pricingData(
  client: ServiceClient<typeof PricingService>,
  logger: Logger,
  refreshMs: number,
): Reloadable<Ratios> {
  return reloadable<Ratios>({
    initial: { modelRatio: {}, completionRatio: {}, modelPrice: {}, groupRatio: { default: 1 } },
    refreshMs,
    debounceMs: 100,
    logger,
    what: 'ratios',
    load: async () => {
      const r = await client.getRatios({});
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
