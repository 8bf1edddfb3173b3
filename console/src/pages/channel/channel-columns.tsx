import {
  Button,
  Dropdown,
  InputNumber,
  Menu,
  Popconfirm,
  Space,
  type TableColumnProps,
  Tag,
  Tooltip,
} from '@arco-design/web-react';
import { cloneElement, isValidElement, type ReactElement } from 'react';
import type { Channel, ChannelTypeInfo } from '../../api/channel.ts';
import type { Status } from '../../api/types.ts';
import { tr } from '../../locale/translate.ts';
import { renderQuota } from '../../utils/format.ts';
import { hasOverrides } from './channel-overrides.ts';
import { OverridesTag, StatusTag, timeText } from './channel-tags.tsx';
import { responseTimeBadge, typeLabel, typeOf } from './channel-types.ts';
import type { ChannelRowActions } from './use-channel-actions.ts';

interface ColumnContext {
  types: ChannelTypeInfo[];
  mobile: boolean;
  status: Status;
  actions: ChannelRowActions;
  onEdit: (id: number) => void;
  onManageKeys: (id: number) => void;
}

/** Test (with the test model, or a model picked from the channel's list), enable or disable, edit, copy, delete. */
function RowActions({ channel: c, actions, onEdit }: { channel: Channel } & Pick<ColumnContext, 'actions' | 'onEdit'>) {
  return (
    <Space wrap size={4}>
      <Dropdown.Button
        size="mini"
        type="primary"
        className="aigw-channel-test"
        onClick={() => void actions.runTest(c)}
        buttonsRender={([main, more]) => [
          main,
          isValidElement(more)
            ? cloneElement(more as ReactElement<{ 'aria-label'?: string }>, {
                'aria-label': tr('channel.testWithModel'),
              })
            : more,
        ]}
        droplist={
          <Menu className="aigw-channel-test-models" onClickMenuItem={(model) => void actions.runTest(c, model)}>
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
        <Button size="mini" status="warning" onClick={() => void actions.setStatusOf(c, 2)}>
          {tr('common.disable')}
        </Button>
      ) : (
        <Button size="mini" status="success" onClick={() => void actions.setStatusOf(c, 1)}>
          {tr('common.enable')}
        </Button>
      )}
      <Button size="mini" onClick={() => onEdit(c.id)}>
        {tr('common.edit')}
      </Button>
      <Popconfirm
        title={tr('channel.copyThisChannel')}
        content={tr('channel.copiesAllOfTheChannel')}
        onOk={() => void actions.copy(c)}
      >
        <Button size="mini">{tr('common.copy')}</Button>
      </Popconfirm>
      <Popconfirm
        title={tr('channel.deleteThisChannel')}
        content={tr('common.thisCannotBeUndone')}
        onOk={() => void actions.remove(c)}
      >
        <Button size="mini" status="danger">
          {tr('common.delete')}
        </Button>
      </Popconfirm>
    </Space>
  );
}

/** Used quota, and the balance (a click updates it from the provider). */
function QuotaCell({ channel: c, status, actions }: { channel: Channel } & Pick<ColumnContext, 'status' | 'actions'>) {
  return (
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
        <Tag color="green" style={{ cursor: 'pointer' }} onClick={() => void actions.runBalance(c)}>
          ${c.balance.toFixed(2)}
        </Tag>
      </Tooltip>
    </Space>
  );
}

/** Priority or weight edited in the row, saved when the field loses focus. */
function numberColumn(
  field: 'priority' | 'weight',
  title: string,
  width: number,
  min: number,
  actions: ChannelRowActions,
): TableColumnProps<Channel> {
  return {
    title,
    dataIndex: field,
    width,
    render: (v: number, c) => (
      <InputNumber
        size="small"
        defaultValue={v}
        min={min}
        precision={0}
        onBlur={(e) => void actions.saveNumber(c, field, Number((e.target as HTMLInputElement).value))}
      />
    ),
  };
}

/** The name (with its overrides tag), group and type columns. */
function identityColumns(types: ChannelTypeInfo[]): TableColumnProps<Channel>[] {
  return [
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
  ];
}

/** The channel table's columns (管理渠道). */
export function channelColumns(ctx: ColumnContext): TableColumnProps<Channel>[] {
  const { types, mobile, status, actions, onEdit, onManageKeys } = ctx;
  return [
    ...identityColumns(types),
    {
      title: tr('common.status'),
      dataIndex: 'status',
      width: 120,
      render: (_v, c) => <StatusTag channel={c} onManage={onManageKeys} />,
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
      render: (_v, c) => <QuotaCell channel={c} status={status} actions={actions} />,
    },
    numberColumn('priority', tr('common.priority'), 90, -999, actions),
    numberColumn('weight', tr('common.weight'), 84, 0, actions),
    {
      title: tr('common.actions'),
      // With the columns before it, 1144 px: the table fits a 1440 px screen without scrolling. On
      // a phone it scrolls with the row (fixed, it left the name and the values 40 px).
      width: 240,
      ...(mobile ? {} : { fixed: 'right' as const }),
      render: (_v, c) => <RowActions channel={c} actions={actions} onEdit={onEdit} />,
    },
  ];
}
