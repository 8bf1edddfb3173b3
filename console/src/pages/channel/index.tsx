import {
  Button,
  Card,
  Drawer,
  Dropdown,
  Form,
  Input,
  InputNumber,
  Menu,
  Message,
  Popconfirm,
  Popover,
  Select,
  Space,
  Switch,
  Table,
  type TableColumnProps,
  Tag,
  Tooltip,
} from '@arco-design/web-react';
import { IconPlus, IconSearch } from '@arco-design/web-react/icon';
import { cloneElement, isValidElement, type ReactElement, useCallback, useEffect, useState } from 'react';
import { listGroups } from '../../api/admin-user.ts';
import {
  type Channel,
  createChannel,
  deleteChannel,
  deleteChannels,
  deleteDisabledChannels,
  fixAbilities,
  getChannel,
  listChannels,
  searchChannels,
  testAllChannels,
  testChannel,
  updateAllBalances,
  updateChannel,
  updateChannelBalance,
} from '../../api/channel.ts';
import { useIsMobile } from '../../layout/use-mobile.ts';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';
import { renderQuota } from '../../utils/format.ts';
import ChannelForm from './channel-form.tsx';
import { hasOverrides } from './channel-overrides.ts';
import { multiKeyState, responseTimeBadge, statusReason, typeLabel, typeOf, useChannelTypes } from './channel-types.ts';
import MultiKeyDialog from './multi-key-dialog.tsx';
import './style/index.css';
import { serverText } from '../../locale/server-messages.ts';
import { tr } from '../../locale/translate.ts';

const PAGE_SIZE_KEY = 'channel-page-size';
const PAGE_SIZES = [10, 20, 50, 100];
const storedPageSize = () => {
  const n = Number(localStorage.getItem(PAGE_SIZE_KEY));
  return PAGE_SIZES.includes(n) ? n : 10;
};
const timeText = (sec: number) => (sec ? new Date(sec * 1000).toLocaleString() : '');

/**
 * Multi-key channels: how many keys serve, the disabled ones (line, time, reason) in a tooltip;
 * a click opens the key management dialog.
 */
function MultiKeyTag({ channel, onManage }: { channel: Channel; onManage: (id: number) => void }) {
  const state = multiKeyState(channel.multi_key_mode, channel.multi_key_status);
  if (!state) return null;
  const enabled = state.size - state.disabled.length;
  const tip =
    state.disabled.length === 0
      ? tr('channelKeys.allKeysEnabled')
      : state.disabled
          .map((d) =>
            tr('channelKeys.disabledKeyLine', { index: d.index, reason: serverText(d.reason), time: timeText(d.time) }),
          )
          .join('\n');
  return (
    <Tooltip content={<div style={{ whiteSpace: 'pre-line' }}>{tip}</div>}>
      <Tag
        className="aigw-multikey"
        color={state.disabled.length ? 'orange' : 'arcoblue'}
        style={{ cursor: 'pointer' }}
        aria-label={tr('channelKeys.manage')}
        onClick={() => onManage(channel.id)}
      >
        {tr('channelKeys.multiKeyTag', { enabled, size: state.size })}
      </Tag>
    </Tooltip>
  );
}

/** The overrides of a channel (param, header, setting, settings) in a popover on a small tag. */
function OverridesTag({ channel }: { channel: Channel }) {
  if (!hasOverrides(channel)) return null;
  const pretty = (text: string) => {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return text;
    }
  };
  const parts = (
    [
      ['param_override', channel.param_override],
      ['header_override', channel.header_override],
      ['setting', channel.setting],
      ['settings', channel.settings],
    ] as const
  ).filter(([, v]) => v);
  return (
    <Popover
      title={tr('channelOverrides.section')}
      content={
        <div className="aigw-channel-overrides-detail" style={{ maxWidth: 420, maxHeight: 360, overflow: 'auto' }}>
          {parts.map(([k, v]) => (
            <div key={k}>
              <b>{k}</b>
              <pre style={{ margin: '4px 0 8px', whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
                {pretty(v ?? '')}
              </pre>
            </div>
          ))}
        </div>
      }
    >
      <Tag size="small" color="purple" className="aigw-overrides">
        {tr('channelOverrides.tag')}
      </Tag>
    </Popover>
  );
}

/** Status tag; auto-disabled channels explain why and when in a tooltip. */
function StatusTag({ channel, onManage }: { channel: Channel; onManage: (id: number) => void }) {
  if (channel.status === 1)
    return (
      <Space size={4} wrap>
        <Tag color="green">{tr('common.enabled')}</Tag>
        <MultiKeyTag channel={channel} onManage={onManage} />
      </Space>
    );
  if (channel.status === 2) return <Tag color="red">{tr('common.disabled')}</Tag>;
  const why = statusReason(channel.other_info);
  const tag = <Tag color="orange">{tr('common.autoDisable')}</Tag>;
  if (!why) return tag;
  return (
    <Tooltip content={tr('channel.disabledWhy', { reason: serverText(why.reason), time: timeText(why.time) })}>
      <span className="aigw-status-reason">{tag}</span>
    </Tooltip>
  );
}

/** 管理渠道: search, paged table with inline priority/weight, row actions, bulk actions, drawer. */
export default function ChannelPage() {
  const mobile = useIsMobile();
  const t = useT();
  const { status } = useStatus();
  const [rows, setRows] = useState<Channel[]>([]);
  const [total, setTotal] = useState(0);
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(storedPageSize);
  const [idSort, setIdSort] = useState(localStorage.getItem('channel-id-sort') === 'true');
  const [loading, setLoading] = useState(false);
  const [filters, setFilters] = useState({ keyword: '', group: '', model: '' });
  const [query, setQuery] = useState({ keyword: '', group: '', model: '' });
  const [groups, setGroups] = useState<string[]>([]);
  const [selected, setSelected] = useState<number[]>([]);
  const [drawer, setDrawer] = useState<{ id?: number } | null>(null);
  const [keysOf, setKeysOf] = useState<number | undefined>();
  const types = useChannelTypes();

  const load = useCallback(async () => {
    setLoading(true);
    const searching = query.keyword !== '' || query.group !== '' || query.model !== '';
    const res = searching
      ? await searchChannels(query, page, pageSize, idSort)
      : await listChannels(page, pageSize, idSort);
    setLoading(false);
    if (res.success && res.data) {
      setRows(res.data.items);
      setTotal(res.data.total);
    }
  }, [page, pageSize, query, idSort]);

  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    void listGroups().then((res) => res.success && setGroups(res.data ?? []));
  }, []);

  const patchRow = (id: number, patch: Partial<Channel>) =>
    setRows((list) => list.map((c) => (c.id === id ? { ...c, ...patch } : c)));

  const search = () => {
    setPage(1);
    setQuery({ keyword: filters.keyword.trim(), group: filters.group, model: filters.model.trim() });
  };

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
    } else void load();
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
      void load();
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
      void load();
    } else Message.error(tr('channel.failedToCopyTheChannel'));
  };

  const remove = async (c: Channel) => {
    const res = await deleteChannel(c.id);
    if (res.success) {
      Message.success(tr('common.done'));
      void load();
    }
  };

  const bulk = {
    removeSelected: async () => {
      if (selected.length === 0) {
        Message.error(tr('channel.selectTheChannelsToDelete'));
        return;
      }
      const res = await deleteChannels(selected);
      if (res.success) {
        Message.success(tr('channel.deletedN', { n: res.data ?? 0 }));
        setSelected([]);
        void load();
      }
    },
    removeDisabled: async () => {
      const res = await deleteDisabledChannels();
      if (res.success) {
        Message.success(tr('channel.deletedDisabledN', { n: res.data ?? 0 }));
        void load();
      }
    },
    testAll: async () => {
      const res = await testAllChannels();
      if (res.success) Message.info(tr('channel.testingAllChannelsStartedRefresh'));
    },
    balances: async () => {
      const res = await updateAllBalances();
      if (res.success) {
        Message.success(tr('channel.balancesOfAllEnabledChannels'));
        void load();
      }
    },
    fix: async () => {
      const res = await fixAbilities();
      if (res.success) {
        Message.success(tr('channel.fixedN', { n: res.data ?? 0 }));
        void load();
      }
    },
  };

  const columns: TableColumnProps<Channel>[] = [
    { title: 'ID', dataIndex: 'id', width: 56 },
    {
      title: tr('common.name'),
      dataIndex: 'name',
      width: 110,
      render: (name: string, c) =>
        hasOverrides(c) ? (
          <Space size={2} wrap>
            {name}
            <OverridesTag channel={c} />
          </Space>
        ) : (
          name
        ),
    },
    {
      title: tr('common.group'),
      width: 90,
      dataIndex: 'group',
      render: (g: string) => (
        <Space wrap size={4}>
          {g
            .split(',')
            .filter(Boolean)
            .map((x) => (
              <Tag key={x}>{x}</Tag>
            ))}
        </Space>
      ),
    },
    {
      title: tr('common.type'),
      dataIndex: 'type',
      width: 110,
      render: (type: number) => {
        // Nothing until the catalogue arrives (not "unknown type" for a moment).
        if (types.length === 0) return null;
        const o = typeOf(types, type);
        return <Tag color={o?.color ?? 'gray'}>{o ? typeLabel(o) : tr('channel.unknownType', { type })}</Tag>;
      },
    },
    {
      title: tr('common.status'),
      dataIndex: 'status',
      width: 120,
      render: (_v, c) => <StatusTag channel={c} onManage={setKeysOf} />,
    },
    {
      title: tr('channel.responseTime'),
      dataIndex: 'response_time',
      width: 84,
      render: (ms: number, c) => {
        const badge = responseTimeBadge(ms);
        return (
          <Tooltip
            content={c.test_time ? tr('channel.lastTest', { time: timeText(c.test_time) }) : tr('channel.notTested')}
          >
            <Tag color={badge.color} className="aigw-response-time">
              {badge.text}
            </Tag>
          </Tooltip>
        );
      },
    },
    {
      title: tr('channel.usedRemaining'),
      width: 156,
      render: (_v, c) => (
        <Space size={4} wrap={false}>
          <Tooltip content={tr('common.usedQuota')}>
            <Tag color="arcoblue">{renderQuota(c.used_quota, status)}</Tag>
          </Tooltip>
          <Tooltip
            content={
              c.balance_updated_time
                ? tr('channel.balanceUpdatedAt', { time: timeText(c.balance_updated_time) })
                : tr('channel.clickToUpdateTheBalance')
            }
          >
            <Tag color="green" style={{ cursor: 'pointer' }} onClick={() => void runBalance(c)}>
              ${c.balance.toFixed(2)}
            </Tag>
          </Tooltip>
        </Space>
      ),
    },
    {
      title: tr('common.priority'),
      dataIndex: 'priority',
      width: 90,
      render: (p: number, c) => (
        <InputNumber
          size="small"
          defaultValue={p}
          min={-999}
          precision={0}
          onBlur={(e) => void saveNumber(c, 'priority', Number((e.target as HTMLInputElement).value))}
        />
      ),
    },
    {
      title: tr('common.weight'),
      dataIndex: 'weight',
      width: 84,
      render: (w: number, c) => (
        <InputNumber
          size="small"
          defaultValue={w}
          min={0}
          precision={0}
          onBlur={(e) => void saveNumber(c, 'weight', Number((e.target as HTMLInputElement).value))}
        />
      ),
    },
    {
      title: tr('common.actions'),
      // With the columns before it, 1144 px: the table fits a 1440 px screen without scrolling. On
      // a phone it scrolls with the row (fixed, it left the name and the values 40 px).
      width: 240,
      ...(mobile ? {} : { fixed: 'right' as const }),
      render: (_v, c) => (
        <Space wrap size={4}>
          <Dropdown.Button
            size="mini"
            type="primary"
            className="aigw-channel-test"
            onClick={() => void runTest(c)}
            buttonsRender={([main, more]) => [
              main,
              isValidElement(more)
                ? cloneElement(more as ReactElement<{ 'aria-label'?: string }>, {
                    'aria-label': tr('channel.testWithModel'),
                  })
                : more,
            ]}
            droplist={
              <Menu className="aigw-channel-test-models" onClickMenuItem={(model) => void runTest(c, model)}>
                {c.models
                  .split(',')
                  .filter(Boolean)
                  .map((m) => (
                    <Menu.Item key={m}>{m}</Menu.Item>
                  ))}
              </Menu>
            }
          >
            {tr('channel.test')}
          </Dropdown.Button>
          {c.status === 1 ? (
            <Button size="mini" status="warning" onClick={() => void setStatusOf(c, 2)}>
              {tr('common.disable')}
            </Button>
          ) : (
            <Button size="mini" status="success" onClick={() => void setStatusOf(c, 1)}>
              {tr('common.enable')}
            </Button>
          )}
          <Button size="mini" onClick={() => setDrawer({ id: c.id })}>
            {tr('common.edit')}
          </Button>
          <Popconfirm
            title={tr('channel.copyThisChannel')}
            content={tr('channel.copiesAllOfTheChannel')}
            onOk={() => void copy(c)}
          >
            <Button size="mini">{tr('common.copy')}</Button>
          </Popconfirm>
          <Popconfirm
            title={tr('channel.deleteThisChannel')}
            content={tr('common.thisCannotBeUndone')}
            onOk={() => void remove(c)}
          >
            <Button size="mini" status="danger">
              {tr('common.delete')}
            </Button>
          </Popconfirm>
        </Space>
      ),
    },
  ];

  return (
    <Card bordered={false} title={t('page.channel.title')}>
      <Form layout="inline" onSubmit={search} style={{ marginBottom: 16 }}>
        <Form.Item>
          <Input
            name="keyword"
            prefix={<IconSearch />}
            placeholder={tr('channel.searchChannelsByIdName')}
            value={filters.keyword}
            onChange={(v) => setFilters((f) => ({ ...f, keyword: v }))}
            style={{ width: 300 }}
            allowClear
          />
        </Form.Item>
        <Form.Item>
          <Input
            name="model"
            placeholder={tr('channel.modelKeyword')}
            value={filters.model}
            onChange={(v) => setFilters((f) => ({ ...f, model: v }))}
            style={{ width: 160 }}
            allowClear
          />
        </Form.Item>
        <Form.Item>
          <Select
            placeholder={tr('common.selectAGroup')}
            value={filters.group || undefined}
            onChange={(v: string) => setFilters((f) => ({ ...f, group: v ?? '' }))}
            allowClear
            style={{ width: 140 }}
          >
            {groups.map((g) => (
              <Select.Option key={g} value={g}>
                {g}
              </Select.Option>
            ))}
          </Select>
        </Form.Item>
        <Form.Item>
          <Button type="primary" htmlType="submit">
            {tr('common.search')}
          </Button>
        </Form.Item>
      </Form>
      <Space wrap style={{ marginBottom: 16 }}>
        <Button type="primary" icon={<IconPlus />} onClick={() => setDrawer({})}>
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
          <Switch
            checked={idSort}
            onChange={(v) => {
              localStorage.setItem('channel-id-sort', String(v));
              setIdSort(v);
            }}
          />
        </Space>
      </Space>
      <Table
        rowKey="id"
        loading={loading}
        columns={columns}
        data={rows}
        rowClassName={(c) => (c.status === 1 ? '' : 'aigw-row-disabled')}
        rowSelection={{
          type: 'checkbox',
          fixed: !mobile,
          selectedRowKeys: selected,
          onChange: (keys) => setSelected(keys as number[]),
        }}
        pagination={{
          current: page,
          pageSize,
          total,
          showTotal: true,
          sizeCanChange: true,
          sizeOptions: PAGE_SIZES,
          onChange: (p, size) => {
            if (size !== pageSize) localStorage.setItem(PAGE_SIZE_KEY, String(size));
            setPage(size === pageSize ? p : 1);
            setPageSize(size);
          },
        }}
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
              void load();
            }}
          />
        )}
      </Drawer>
      <MultiKeyDialog
        channelId={keysOf}
        onClose={(changed) => {
          setKeysOf(undefined);
          if (changed) void load();
        }}
      />
    </Card>
  );
}
