import { Button, Popconfirm, Space, Switch } from '@arco-design/web-react';
import { IconPlus } from '@arco-design/web-react/icon';
import { tr } from '../../locale/translate.ts';
import type { ChannelBulkActions } from './use-channel-actions.ts';

/** Add, the actions over many channels (each confirmed but the balances) and the sort by id. */
export function ChannelToolbar({
  bulk,
  idSort,
  onAdd,
  onIdSort,
}: {
  bulk: ChannelBulkActions;
  idSort: boolean;
  onAdd: () => void;
  onIdSort: (on: boolean) => void;
}) {
  return (
    <Space wrap style={{ marginBottom: 16 }}>
      <Button type="primary" icon={<IconPlus />} onClick={onAdd}>
        {tr('channel.addChannel')}
      </Button>
      <Popconfirm
        title={tr('channel.areYouSure')}
        content={tr('channel.testsEveryChannelNotDisabled')}
        onOk={() => void bulk.testAll()}
      >
        <Button>{tr('channel.testAllChannels')}</Button>
      </Popconfirm>
      <Button onClick={() => void bulk.balances()}>{tr('channel.updateBalancesOfEnabledChannels')}</Button>
      <Popconfirm
        title={tr('channel.deleteTheDisabledChannels')}
        content={tr('common.thisCannotBeUndone')}
        onOk={() => void bulk.removeDisabled()}
      >
        <Button status="danger">{tr('channel.deleteDisabledChannels')}</Button>
      </Popconfirm>
      <Popconfirm
        title={tr('channel.deleteTheSelectedChannels')}
        content={tr('common.thisCannotBeUndone')}
        onOk={() => void bulk.removeSelected()}
      >
        <Button status="danger">{tr('channel.deleteSelectedChannels')}</Button>
      </Popconfirm>
      <Popconfirm
        title={tr('channel.repairDatabaseConsistency')}
        content={tr('channel.rebuildsTheAbilitiesTableOf')}
        onOk={() => void bulk.fix()}
      >
        <Button status="warning">{tr('channel.repairDatabaseConsistency2')}</Button>
      </Popconfirm>
      <Space>
        <span>{tr('channel.sortById')}</span>
        <Switch checked={idSort} onChange={onIdSort} />
      </Space>
    </Space>
  );
}
