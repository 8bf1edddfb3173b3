import { Message } from '@arco-design/web-react';
import {
  type Channel,
  createChannel,
  deleteChannel,
  deleteChannels,
  deleteDisabledChannels,
  fixAbilities,
  getChannel,
  testAllChannels,
  testChannel,
  updateAllBalances,
  updateChannel,
  updateChannelBalance,
} from '../../api/channel.ts';
import { tr } from '../../locale/translate.ts';

/** What the actions change on the page: one row in place, or the whole page reloaded. */
interface ListHandle {
  patchRow: (id: number, patch: Partial<Channel>) => void;
  reload: () => Promise<void>;
}

/** The row actions: enable or disable, priority and weight, test, balance, copy, delete. */
export function useChannelRowActions({ patchRow, reload }: ListHandle) {
  const setStatusOf = async (c: Channel, next: number) => {
    const res = await updateChannel({ id: c.id, status: next });
    if (res.success && res.data) {
      patchRow(c.id, { status: res.data.status, other_info: res.data.other_info });
      Message.success(tr('common.done'));
    }
  };

  const saveNumber = async (c: Channel, field: 'priority' | 'weight', value: number | undefined) => {
    if (value === undefined || value === c[field]) return;
    const res = await updateChannel({ id: c.id, [field]: value });
    if (res.success) {
      patchRow(c.id, { [field]: value });
      Message.success(tr('common.done'));
    } else void reload();
  };

  /** Tests with the channel's test model (or its first), or with the model chosen from its list. */
  const runTest = async (c: Channel, model = '') => {
    const res = await testChannel(c.id, model);
    const time = res.data?.time ?? 0;
    if (res.success) {
      patchRow(c.id, { response_time: Math.round(time * 1000), test_time: Math.floor(Date.now() / 1000) });
      Message.success(tr('channel.testOk', { name: c.name, time: time.toFixed(2) }));
    } else {
      Message.error(tr('channel.testFailed', { name: c.name, message: res.message ?? '' }));
      void reload();
    }
  };

  const runBalance = async (c: Channel) => {
    const res = await updateChannelBalance(c.id);
    const balance = (res as { balance?: number }).balance ?? res.data?.balance;
    if (res.success && balance !== undefined) {
      patchRow(c.id, { balance, balance_updated_time: Math.floor(Date.now() / 1000) });
      Message.success(tr('channel.balanceUpdated', { name: c.name }));
    }
  };

  const copy = async (c: Channel) => {
    const full = await getChannel(c.id, { toast: false });
    if (!full.success || !full.data) {
      Message.error(tr('channel.failedToCopyTheChannel'));
      return;
    }
    const { id: _id, created_time, test_time, response_time, used_quota, balance, ...fields } = full.data;
    const res = await createChannel({
      ...fields,
      name: `${c.name}${tr('channel.copySuffix')}`,
      groups: fields.group.split(','),
    });
    if (res.success) {
      Message.success(tr('channel.channelCopied'));
      void reload();
    } else Message.error(tr('channel.failedToCopyTheChannel'));
  };

  const remove = async (c: Channel) => {
    const res = await deleteChannel(c.id);
    if (res.success) {
      Message.success(tr('common.done'));
      void reload();
    }
  };

  return { setStatusOf, saveNumber, runTest, runBalance, copy, remove };
}

export type ChannelRowActions = ReturnType<typeof useChannelRowActions>;

/** The actions over many channels: delete the selected or the disabled, test all, balances, repair. */
export function channelBulkActions(
  { reload }: Pick<ListHandle, 'reload'>,
  selected: number[],
  clearSelected: () => void,
) {
  /** Runs an action; on success its toast and a reload. */
  const then = async <T>(call: Promise<{ success: boolean; data?: T }>, done: (data: T | undefined) => string) => {
    const res = await call;
    if (!res.success) return;
    Message.success(done(res.data));
    void reload();
  };
  return {
    removeSelected: async () => {
      if (selected.length === 0) {
        Message.error(tr('channel.selectTheChannelsToDelete'));
        return;
      }
      await then(deleteChannels(selected), (n) => {
        clearSelected();
        return tr('channel.deletedN', { n: n ?? 0 });
      });
    },
    removeDisabled: () => then(deleteDisabledChannels(), (n) => tr('channel.deletedDisabledN', { n: n ?? 0 })),
    testAll: async () => {
      const res = await testAllChannels();
      if (res.success) Message.info(tr('channel.testingAllChannelsStartedRefresh'));
    },
    balances: () => then(updateAllBalances(), () => tr('channel.balancesOfAllEnabledChannels')),
    fix: () => then(fixAbilities(), (n) => tr('channel.fixedN', { n: n ?? 0 })),
  };
}

export type ChannelBulkActions = ReturnType<typeof channelBulkActions>;
