import { channelsAutoDisabled, failoverRulesFrom, type Notification, type OptionsCache } from '@aigw/common';
import { AppError, invalid } from '@aigw/common/errors';
import { CHANNEL_STATUS, splitList } from './channel-rules.ts';
import { type RelayChannelView, toRelayChannel } from './channel-view.ts';
import type { ChannelsService } from './channels-service.ts';
import { fetchBalance, fetchUpstreamModels, hasBalanceEndpoint } from './upstream.ts';

/** Runs a test request through the relay's adaptor for the channel's type. */
export type RelayTester = (req: {
  channel: RelayChannelView;
  model: string;
}) => Promise<{ success: boolean; timeMs: number; message: string; statusCode: number }>;

export type OptionReader = Pick<OptionsCache, 'bool' | 'number' | 'text'>;

/** A channel-health event as the consumer hands it over. */
export interface HealthReport {
  eventId: string;
  channelId: number;
  kind: 'failure' | 'success' | 'slow';
  shouldDisable: boolean;
  message: string;
  responseTimeMs: number;
  /** Multi-key channels: the fingerprint of the key that failed. */
  keyHash?: string;
}

export interface TestOutcome {
  success: boolean;
  timeMs: number;
  message: string;
}

const nowSec = () => Math.floor(Date.now() / 1000);

type HealthDeps = {
  channels: ChannelsService;
  tester: RelayTester;
  options: OptionReader;
  seen: { has(eventId: string): Promise<boolean>; add(eventId: string): Promise<void> };
  /** Tells the admins (AdminWebhookUrl) that a channel was auto-disabled; fire and forget. */
  alert?: (n: Notification) => void;
};

/**
 * The automatic status rules: with AutomaticDisableChannelEnabled and the channel's auto_ban a
 * channel (or one key of a multi-key channel) goes to status 3; with AutomaticEnableChannelEnabled
 * a status-3 channel comes back. Status 2 is never touched.
 */
function statusRules(deps: HealthDeps) {
  const { channels, options } = deps;

  async function autoDisable(id: number, reason: string): Promise<boolean> {
    if (!options.bool('AutomaticDisableChannelEnabled')) return false;
    const ch = await channels.existing(id);
    if (ch.status !== CHANNEL_STATUS.enabled || ch.auto_ban !== 1) return false;
    await channels.setStatus(id, CHANNEL_STATUS.autoDisabled, reason);
    channelsAutoDisabled.inc({ channel: String(id) });
    // new-api's words and type (channel_update) for a disabled channel.
    const name = `通道「${ch.name}」（#${id}）`;
    deps.alert?.({
      type: 'channel_update',
      title: `${name}已被禁用`,
      content: `${name}已被禁用，原因：{{value}}`,
      values: [reason],
    });
    return true;
  }

  /** One key of a multi-key channel, under the same conditions as the channel itself. */
  async function autoDisableKey(id: number, hash: string, reason: string): Promise<boolean> {
    if (!options.bool('AutomaticDisableChannelEnabled')) return false;
    const ch = await channels.existing(id);
    if (ch.status !== CHANNEL_STATUS.enabled || ch.auto_ban !== 1) return false;
    if (!ch.multi_key_mode) return autoDisable(id, reason);
    return channels.disableKey(id, hash, reason);
  }

  async function autoEnable(id: number): Promise<boolean> {
    if (!options.bool('AutomaticEnableChannelEnabled')) return false;
    const ch = await channels.existing(id);
    if (ch.status !== CHANNEL_STATUS.autoDisabled) return false;
    await channels.setStatus(id, CHANNEL_STATUS.enabled, '');
    return true;
  }

  return { autoDisable, autoDisableKey, autoEnable };
}

type StatusRules = ReturnType<typeof statusRules>;

/** One channel's test through the relay: its response time recorded, then the status rules applied. */
function channelTest(deps: HealthDeps, rules: StatusRules) {
  const { channels, tester, options } = deps;
  // AutomaticDisableStatusCodes and AutomaticDisableKeywords, as the relay reads them.
  const failover = failoverRulesFrom((key) => options.text(key));
  return async function test(id: number, model: string): Promise<TestOutcome> {
    const doc = await channels.existing(id);
    const testModel = model.trim() || doc.test_model || splitList(doc.models)[0] || '';
    if (!testModel) throw invalid('渠道未配置模型');
    let res: Awaited<ReturnType<RelayTester>>;
    try {
      res = await tester({ channel: toRelayChannel(doc, channels.reveal(doc)), model: testModel });
    } catch (err) {
      const message = err instanceof AppError ? err.message : '测试请求失败';
      res = { success: false, timeMs: 0, message: `测试失败：${message}`, statusCode: 0 };
    }
    const timeMs = Math.round(res.timeMs);
    await channels.record(id, {
      response_time: res.success ? Math.max(1, timeMs) : doc.response_time,
      test_time: nowSec(),
    });
    const thresholdMs = options.number('ChannelDisableThreshold') * 1000;
    if (res.success && thresholdMs > 0 && timeMs > thresholdMs) {
      const reason = `响应时间 ${(timeMs / 1000).toFixed(2)}s 超过阈值 ${(thresholdMs / 1000).toFixed(2)}s`;
      await rules.autoDisable(id, reason);
      return { success: false, timeMs, message: reason };
    }
    if (!res.success && failover().disables(res.statusCode, res.message)) await rules.autoDisable(id, res.message);
    if (res.success) await rules.autoEnable(id);
    return { success: res.success, timeMs, message: res.message };
  };
}

/** Balances and model lists read from the channels' upstreams. */
function upstreamReads(channels: ChannelsService) {
  async function updateBalance(id: number): Promise<number> {
    const doc = await channels.existing(id);
    const balance = await fetchBalance(doc.type, doc.base_url, channels.reveal(doc));
    await channels.record(id, { balance, balance_updated_time: nowSec() });
    return balance;
  }
  return {
    updateBalance,

    async updateAllBalances(): Promise<number> {
      const { items } = await channels.list({ skip: 0, limit: 100_000, idSort: true, status: CHANNEL_STATUS.enabled });
      let updated = 0;
      for (const c of items.filter((i) => hasBalanceEndpoint(i.type))) {
        try {
          await updateBalance(c.id);
          updated++;
        } catch {
          // One unreachable provider does not stop the others.
        }
      }
      return updated;
    },

    async fetchModels(req: { id: number; type: number; baseUrl: string; key: string }): Promise<string[]> {
      if (req.id) {
        const doc = await channels.existing(req.id);
        return fetchUpstreamModels(doc.type, req.baseUrl || doc.base_url, req.key || channels.reveal(doc));
      }
      return fetchUpstreamModels(req.type, req.baseUrl, req.key);
    },
  };
}

/**
 * Tests, balances and the automatic status rules (reference-behaviour.md relay step 8): with
 * AutomaticDisableChannelEnabled and the channel's auto_ban, an unusable key or a test slower than
 * ChannelDisableThreshold sets status 3 (reason and time in other_info); with
 * AutomaticEnableChannelEnabled a passing status-3 channel comes back. Status 2 is never touched.
 */
export function channelHealth(deps: HealthDeps) {
  const { channels, options } = deps;
  const rules = statusRules(deps);
  const test = channelTest(deps, rules);
  let testingAll = false;

  return {
    test,
    ...upstreamReads(channels),

    /** Tests every channel except manually disabled ones, one after another, in the background. */
    async testAll(onDone?: (tested: number) => void): Promise<number> {
      if (testingAll) throw invalid('测试已在运行中，请稍后再试');
      testingAll = true;
      let ids: number[];
      try {
        const { items } = await channels.list({ skip: 0, limit: 100_000, idSort: true });
        ids = items.filter((c) => c.status !== CHANNEL_STATUS.manuallyDisabled).map((c) => c.id);
      } catch (err) {
        testingAll = false;
        throw err;
      }
      (async () => {
        for (const id of ids) await test(id, '').catch(() => undefined);
      })()
        .then(() => onDone?.(ids.length))
        .finally(() => {
          testingAll = false;
        });
      return ids.length;
    },

    /** The monitor's pass: re-tests status-3 channels when AutomaticEnableChannelEnabled is on. */
    async retestDisabled(): Promise<number> {
      if (!options.bool('AutomaticEnableChannelEnabled')) return 0;
      const { items } = await channels.list({
        skip: 0,
        limit: 100_000,
        idSort: true,
        status: CHANNEL_STATUS.autoDisabled,
      });
      for (const c of items) await test(c.id, '').catch(() => undefined);
      return items.length;
    },

    /** Applies one channel-health event (idempotent: an event id is handled once). */
    async handle(report: HealthReport): Promise<void> {
      if (await deps.seen.has(report.eventId)) return;
      try {
        if (report.kind === 'failure' && report.shouldDisable) {
          if (report.keyHash) await rules.autoDisableKey(report.channelId, report.keyHash, report.message);
          else await rules.autoDisable(report.channelId, report.message);
        }
        if (report.kind === 'slow') {
          await rules.autoDisable(report.channelId, `响应时间 ${(report.responseTimeMs / 1000).toFixed(2)}s 超过阈值`);
        }
        if (report.kind === 'success') await rules.autoEnable(report.channelId);
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'NOT_FOUND')) throw err;
      }
      await deps.seen.add(report.eventId);
    },
  };
}

export type ChannelHealth = ReturnType<typeof channelHealth>;
