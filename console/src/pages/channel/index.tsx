import { Card, Drawer, Table } from '@arco-design/web-react';
import { useState } from 'react';
import { type Channel, listChannels, searchChannels } from '../../api/channel.ts';
import { PAGE_SIZES } from '../../hooks/paged-list-state.ts';
import { usePagedList } from '../../hooks/use-paged-list.ts';
import { useIsMobile } from '../../layout/use-mobile.ts';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';
import { channelColumns } from './channel-columns.tsx';
import { ChannelFilterBar, type ChannelQuery, isSearch, NO_QUERY } from './channel-filter-bar.tsx';
import ChannelForm from './channel-form.tsx';
import { ChannelToolbar } from './channel-toolbar.tsx';
import { useChannelTypes } from './channel-types.ts';
import MultiKeyDialog from './multi-key-dialog.tsx';
import { channelBulkActions, useChannelRowActions } from './use-channel-actions.ts';
import './style/index.css';

const PAGE_SIZE_KEY = 'channel-page-size';
const ID_SORT_KEY = 'channel-id-sort';
const storedPageSize = () => {
  const n = Number(localStorage.getItem(PAGE_SIZE_KEY));
  return PAGE_SIZES.includes(n) ? n : 10;
};
const savePageSize = (size: number) => localStorage.setItem(PAGE_SIZE_KEY, String(size));

/** The channel list: the searched page, sorted by id or not (both kept locally), and row patches. */
function useChannelList() {
  const [idSort, setIdSort] = useState(localStorage.getItem(ID_SORT_KEY) === 'true');
  const list = usePagedList<Channel, ChannelQuery>({
    initialQuery: NO_QUERY,
    initialPageSize: storedPageSize,
    onPageSizeChange: savePageSize,
    fetch: (q, page, pageSize) =>
      isSearch(q) ? searchChannels(q, page, pageSize, idSort) : listChannels(page, pageSize, idSort),
    deps: [idSort],
  });
  const patchRow = (id: number, patch: Partial<Channel>) =>
    list.setRows((rows) => rows.map((c) => (c.id === id ? { ...c, ...patch } : c)));
  const sortById = (on: boolean) => {
    localStorage.setItem(ID_SORT_KEY, String(on));
    setIdSort(on);
  };
  return { list, patchRow, idSort, sortById };
}

/** 管理渠道: search, paged table with inline priority/weight, row actions, bulk actions, drawer. */
export default function ChannelPage() {
  const mobile = useIsMobile();
  const t = useT();
  const { status } = useStatus();
  const { list, patchRow, idSort, sortById } = useChannelList();
  const [selected, setSelected] = useState<number[]>([]);
  const [drawer, setDrawer] = useState<{ id?: number } | null>(null);
  const [keysOf, setKeysOf] = useState<number | undefined>();
  const types = useChannelTypes();
  const actions = useChannelRowActions({ patchRow, reload: list.reload });
  const bulk = channelBulkActions(list, selected, () => setSelected([]));
  const columns = channelColumns({
    types,
    mobile,
    status,
    actions,
    onEdit: (id) => setDrawer({ id }),
    onManageKeys: setKeysOf,
  });

  return (
    <Card bordered={false} title={t('page.channel.title')}>
      <ChannelFilterBar onSearch={list.search} />
      <ChannelToolbar bulk={bulk} idSort={idSort} onAdd={() => setDrawer({})} onIdSort={sortById} />
      <Table
        rowKey="id"
        loading={list.loading}
        columns={columns}
        data={list.rows}
        rowClassName={(c) => (c.status === 1 ? '' : 'aigw-row-disabled')}
        rowSelection={{
          type: 'checkbox',
          fixed: !mobile,
          selectedRowKeys: selected,
          onChange: (keys) => setSelected(keys as number[]),
        }}
        pagination={list.pagination}
        scroll={{ x: columns.reduce((sum, c) => sum + Number(c.width ?? 0), 40) }}
      />
      <Drawer
        width={640}
        title={drawer?.id ? t('route.channelEdit') : t('route.channelAdd')}
        visible={drawer !== null}
        onCancel={() => setDrawer(null)}
        footer={null}
        unmountOnExit
      >
        {drawer && (
          <ChannelForm
            id={drawer.id}
            onDone={() => {
              setDrawer(null);
              void list.reload();
            }}
          />
        )}
      </Drawer>
      <MultiKeyDialog
        channelId={keysOf}
        onClose={(changed) => {
          setKeysOf(undefined);
          if (changed) void list.reload();
        }}
      />
    </Card>
  );
}
