import { pageOf, type ServiceImpl } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import type { ChannelsService as ChannelsServiceDesc } from '@aigw/proto/channels/v1/channels';
import type { ChannelHealth } from '../../domain/channel-health.ts';
import type { ChannelsService } from '../../domain/channels-service.ts';
import type { CatalogueMethods } from './model-meta-handlers.ts';

/** gRPC handlers of ChannelsService: thin, they only translate to the use cases. */
export function channelsHandlers(
  channels: ChannelsService,
  health: ChannelHealth,
): Omit<ServiceImpl<typeof ChannelsServiceDesc>, CatalogueMethods> {
  return {
    async listChannels(req) {
      const p = pageOf(req.page);
      const { items, total } = await channels.list({
        skip: p.skip,
        limit: p.pageSize,
        idSort: req.idSort,
        status: req.status,
        type: req.type,
      });
      return { items, page: { page: p.page, pageSize: p.pageSize, total } };
    },
    async searchChannels(req) {
      const p = pageOf(req.page);
      const { items, total } = await channels.search({ ...req, skip: p.skip, limit: p.pageSize });
      return { items, page: { page: p.page, pageSize: p.pageSize, total } };
    },
    async getChannel(req) {
      return { channel: await channels.get(req.id, req.includeKey) };
    },
    async createChannels(req) {
      if (!req.channel) throw invalid('请填写渠道名称和渠道密钥！');
      return { ids: await channels.create(req.channel, req.batch) };
    },
    async updateChannel(req) {
      return { channel: await channels.update(req.id, req) };
    },
    async deleteChannel(req) {
      await channels.remove([req.id]);
      return {};
    },
    async deleteDisabledChannels() {
      return { count: await channels.removeDisabled() };
    },
    async batchDeleteChannels(req) {
      if (req.ids.length === 0) throw invalid('请先选择要删除的通道！');
      return { count: await channels.remove(req.ids) };
    },
    async fixAbilities() {
      return channels.fixAbilities();
    },
    async updateChannelStatus(req) {
      return { channel: await channels.setStatus(req.id, req.status, req.reason) };
    },
    async testChannel(req) {
      return health.test(req.id, req.model);
    },
    async testAllChannels() {
      return { count: await health.testAll() };
    },
    async recordTestResult(req) {
      await channels.existing(req.id);
      const updated = await channels.record(req.id, {
        response_time: Math.round(req.timeMs),
        test_time: req.testedAt || Math.floor(Date.now() / 1000),
      });
      return { channel: updated ? await channels.get(req.id, false) : undefined };
    },
    async updateChannelBalance(req) {
      return { balance: await health.updateBalance(req.id) };
    },
    async updateAllChannelBalances() {
      return { count: await health.updateAllBalances() };
    },
    async fetchUpstreamModels(req) {
      return { models: await health.fetchModels(req) };
    },
    async listModelsByType() {
      const byType = channels.modelsByType();
      return { models: Object.fromEntries(Object.entries(byType).map(([t, models]) => [Number(t), { models }])) };
    },
    async listEnabledModels() {
      return { models: await channels.enabledModels() };
    },
    async listGroupModels(req) {
      return { models: await channels.groupModels(req.group) };
    },
    async listGroups() {
      return { groups: await channels.groups() };
    },
    async listModelGroups() {
      return { items: await channels.modelGroups() };
    },
    async selectChannel(req) {
      return { channel: await channels.select(req.group, req.model, req.retry, req.excludeChannelIds) };
    },
    async getRelaySnapshot() {
      return channels.snapshot();
    },
    async manageMultiKeys(req) {
      return channels.manageKeys(req.channelId, {
        action: req.action,
        keyIndex: req.keyIndex,
        page: req.page,
        pageSize: req.pageSize,
        status: req.status,
      });
    },
  };
}
