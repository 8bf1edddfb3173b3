/**
 * How the relay pipeline (domain/relay-request.ts) is wired to this process: the ratios and
 * settings it reads from the caches and options, billing's wallet under the process's lease,
 * and where usage and health go (metrics and Kafka).
 */
import type { OptionsCache } from '@aigw/common';
import { topicName } from '@aigw/common';
import { messageTraceHeaders, tracingActive } from '@aigw/common/telemetry';
import { LogType } from '@aigw/proto/common/v1/common';
import { TOPICS } from '@aigw/proto/topics';
import type { Config } from './config.ts';
import type { Reloadable } from './data/routing-data.ts';
import type { ChannelIndex } from './domain/channel-index.ts';
import type { Ratios } from './domain/pricing.ts';
import { RelayError } from './domain/relay-error.ts';
import type {
  HealthRecord,
  RelayDeps,
  RelaySettings,
  SlicePort,
  UsageRecord,
  WalletPort,
} from './domain/relay-request.ts';
import { type WalletSlices, walletSlices } from './domain/wallet-slices.ts';
import type { LeaseFence } from './transport/http/lease-fence.ts';
import { providerOf, type RelayMetrics } from './transport/http/metrics.ts';
import type { RelayEvents } from './transport/kafka/relay-events.ts';

type Options = Pick<OptionsCache, 'json' | 'number' | 'bool' | 'text'>;

/** Whether the ModelPriceTiers option holds any model (most deployments: none, no copy per request). */
export function hasTiers(tiers: Record<string, unknown>): boolean {
  if (!tiers || typeof tiers !== 'object') return false;
  for (const _ in tiers) return true;
  return false;
}

/**
 * The ratios a request reads first. While the usage buffer is full (Kafka down for long), the
 * request is refused before anything is spent rather than served unbilled; and before the first
 * channels and ratios arrived (billing or channels still starting), an empty copy would answer
 * 模型倍率未配置 or 无可用渠道: an outage to retry, not an answer.
 */
export function currentRatios(
  events: Pick<RelayEvents, 'full'>,
  ratios: Pick<Reloadable<Ratios>, 'loaded' | 'current'>,
  snapshot: Pick<Reloadable<ChannelIndex>, 'loaded'>,
  options: Pick<Options, 'json'>,
): () => Ratios {
  let merged: { base: Ratios; priceTiers: unknown; groupGroupRatio: unknown; ratios: Ratios } | undefined;
  return () => {
    if (events.full()) throw new RelayError(503, '服务繁忙，请稍后重试', 'usage_buffer_full');
    if (!ratios.loaded() || !snapshot.loaded())
      throw new RelayError(503, '服务繁忙，请稍后重试', 'snapshot_not_loaded');
    // Long-context tiers straight from the options (parsed once per change); pricing.ts checks them.
    // GroupGroupRatio likewise; the copy is made once per change of any of the three.
    const priceTiers = options.json<Record<string, unknown>>('ModelPriceTiers');
    const groupGroupRatio = options.json<Record<string, Record<string, number>>>('GroupGroupRatio');
    const base = ratios.current();
    if (!hasTiers(priceTiers) && !hasTiers(groupGroupRatio)) return base;
    if (merged?.base !== base || merged.priceTiers !== priceTiers || merged.groupGroupRatio !== groupGroupRatio)
      merged = { base, priceTiers, groupGroupRatio, ratios: { ...base, priceTiers, groupGroupRatio } };
    return merged.ratios;
  };
}

/** The pipeline's settings: options read per request, the output limits, the first-token timeout. */
export function relaySettings(
  options: Pick<Options, 'number' | 'bool'>,
  config: Pick<Config, 'RELAY_FIRST_TOKEN_TIMEOUT_MS'>,
  outputLimit: (model: string) => number,
): RelaySettings {
  return {
    retryTimes: () => options.number('RetryTimes'),
    preConsumedQuota: () => options.number('PreConsumedQuota'),
    quotaPerUnit: () => options.number('QuotaPerUnit'),
    firstTokenTimeoutMs: () => config.RELAY_FIRST_TOKEN_TIMEOUT_MS,
    outputLimit,
    unpricedModelRatio: () => {
      if (!options.bool('UnpricedModelsEnabled')) return undefined;
      const r = options.number('DefaultModelRatio');
      return Number.isFinite(r) && r >= 0 ? r : undefined;
    },
  };
}

/**
 * Billing's wallet under this process's lease: each hold carries the lease's age (billing tells
 * this process's holds from a live one's once it lapses) and is watched by the lease fence.
 */
export function leasedWallet(
  raw: WalletPort,
  lease: { age(): number },
  fence: Pick<LeaseFence, 'held'>,
  metrics: Pick<RelayMetrics, 'preConsume'>,
): WalletPort {
  return {
    async preConsume(req) {
      const t0 = performance.now();
      try {
        const res = await raw.preConsume({ ...req, leaseAgeMs: lease.age() });
        fence.held(req.requestId);
        return res;
      } finally {
        metrics.preConsume((performance.now() - t0) / 1000);
      }
    },
    refund: (requestId, userId) => raw.refund(requestId, userId),
  };
}

/**
 * Wallet slices of this process (RELAY_WALLET_SLICES=1; domain/wallet-slices.ts): taken through
 * billing's pre-consume under the process's lease (a slice is a hold like any other when the lease
 * lapses: its id starts with the process's id), released by an event on the usage topic behind the
 * usage events of its requests. A request drawn from a slice is watched by the lease fence, and the
 * fence closes every slice (billing may give them back once the lease lapses).
 */
export function processSlices(
  config: Pick<Config, 'RELAY_WALLET_SLICE_REQUESTS' | 'RELAY_WALLET_SLICE_IDLE_MS' | 'RELAY_WALLET_SLICE_MAX_AGE_MS'>,
  wallet: WalletPort,
  events: Pick<RelayEvents, 'sliceRelease'>,
  fence: Pick<LeaseFence, 'held' | 'onCut'>,
  newId: () => string,
): SlicePort & Pick<WalletSlices, 'sweep' | 'closeAll' | 'drop' | 'revoke' | 'held'> {
  const slices = walletSlices(
    {
      requests: config.RELAY_WALLET_SLICE_REQUESTS,
      idleMs: config.RELAY_WALLET_SLICE_IDLE_MS,
      maxAgeMs: config.RELAY_WALLET_SLICE_MAX_AGE_MS,
    },
    {
      take: async (userId, sliceId, amount, min) => {
        const res = await wallet.preConsume({
          requestId: sliceId,
          userId,
          tokenId: 0,
          amount,
          walletSlice: true,
          sliceMin: min,
        });
        return { granted: res.preConsumed ?? amount, userQuota: res.userQuota };
      },
      release: (userId, sliceId) => events.sliceRelease(userId, sliceId),
      // No "." (a hold id is a key of the ledger state).
      newId: () => `${newId()}-slice`,
    },
  );
  fence.onCut(() => slices.closeAll());
  return {
    async reserve(requestId, userId, need) {
      const ticket = await slices.reserve(userId, need);
      if (ticket) fence.held(requestId);
      return ticket;
    },
    finish: (ticket, charged) => slices.finish(ticket, charged),
    observe: (userId, quota) => slices.observe(userId, quota),
    sweep: () => slices.sweep(),
    closeAll: (final) => slices.closeAll(final),
    drop: (userId) => slices.drop(userId),
    revoke: (userId) => slices.revoke(userId),
    held: () => slices.held(),
  };
}

/** Where a finished request's usage and a failed attempt's health go: the metrics, then Kafka. */
export function outcomeSinks(
  events: Pick<RelayEvents, 'usage' | 'health'>,
  metrics: Pick<RelayMetrics, 'usage' | 'retries' | 'upstreamError'>,
  channels: () => ChannelIndex,
): Pick<RelayDeps, 'usage' | 'health'> {
  const tracing = tracingActive();
  const usageTopic = topicName(TOPICS.usage);
  /** Labels of a finished request: the model as configured for the caller's group, else "other". */
  const labelsOf = (rec: UsageRecord | HealthRecord, model: string, group: string) => {
    const index = channels();
    return {
      model: model && index.has(group, model) ? model : 'other',
      provider: providerOf(rec.channelId ? index.byId(rec.channelId)?.type : undefined),
    };
  };
  return {
    usage: (rec) => {
      const { model, provider } = labelsOf(rec, rec.model, rec.caller.group);
      const u = rec.usage;
      if (rec.type === LogType.CONSUME)
        metrics.usage(
          model,
          provider,
          u.promptTokens,
          u.completionTokens,
          u.cachedTokens ?? 0,
          rec.isStream ? { firstTokenMs: rec.firstTokenMs, totalMs: rec.useTimeMs } : undefined,
        );
      metrics.retries(rec.channelsTried.length - 1);
      events.usage(rec, tracing ? messageTraceHeaders(usageTopic) : undefined);
    },
    health: (rec) => {
      metrics.upstreamError(rec.channelId, rec.statusCode);
      events.health(rec);
    },
  };
}
