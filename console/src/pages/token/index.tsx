import {
  Alert,
  Button,
  Card,
  Dropdown,
  Form,
  Input,
  Menu,
  Message,
  Modal,
  Popconfirm,
  Space,
  Table,
  type TableColumnProps,
  Tag,
  Typography,
} from '@arco-design/web-react';
import { IconPlus, IconSearch } from '@arco-design/web-react/icon';
import { useState } from 'react';
import { deleteToken, listTokens, searchTokens, setTokenStatus, type Token } from '../../api/token.ts';
import { usePagedList } from '../../hooks/use-paged-list.ts';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';
import { copyText } from '../../utils/clipboard.ts';
import { renderQuota } from '../../utils/format.ts';
import TokenDrawer from './token-drawer.tsx';
import './style/index.css';
import { tr } from '../../locale/translate.ts';

const timeText = (sec: number) => (sec === -1 ? tr('token.neverExpires') : new Date(sec * 1000).toLocaleString());

/** The searched name and key. */
interface TokenQuery {
  keyword: string;
  token: string;
}

/** Status labels of spec 02 section 4. */
export function tokenStatusTag(t: Pick<Token, 'status' | 'model_limits_enabled'>) {
  switch (t.status) {
    case 1:
      return t.model_limits_enabled ? (
        <Tag color="green">{tr('token.enabledLimitedModels')}</Tag>
      ) : (
        <Tag color="green">{tr('common.enabled')}</Tag>
      );
    case 2:
      return <Tag color="red">{tr('common.disabled')}</Tag>;
    case 3:
      return <Tag color="gold">{tr('token.expired')}</Tag>;
    case 4:
      return <Tag color="gray">{tr('token.exhausted')}</Tag>;
    default:
      return <Tag color="gray">{tr('common.unknownStatus')}</Tag>;
  }
}

/** 令牌: search by name and key, paged list with row actions, the token drawer. */
export default function TokenPage() {
  const t = useT();
  const { status } = useStatus();
  const list = usePagedList<Token, TokenQuery>({
    initialQuery: { keyword: '', token: '' },
    fetch: (q, page, pageSize) =>
      q.keyword || q.token ? searchTokens(q.keyword, q.token, page, pageSize) : listTokens(page, pageSize),
  });
  const { rows, setRows } = list;
  const [selected, setSelected] = useState<Token[]>([]);
  const [drawer, setDrawer] = useState<{ visible: boolean; id?: number }>({ visible: false });

  const search = (v: Partial<TokenQuery>) =>
    list.search({ keyword: (v.keyword ?? '').trim(), token: (v.token ?? '').trim() });

  const address = status.server_address || window.location.origin;
  const chats = (status.chats ?? []).flatMap((m) => Object.entries(m));
  const openChat = (template: string, t: Token) => {
    const link = template.replaceAll('{key}', `sk-${t.key}`).replaceAll('{address}', address);
    window.open(link, '_blank', 'noopener');
  };

  const toggle = async (t: Token) => {
    const res = await setTokenStatus(t.id, t.status === 1 ? 2 : 1);
    if (res.success && res.data) {
      const next = res.data;
      setRows((list) => list.map((x) => (x.id === t.id ? { ...x, status: next.status } : x)));
      Message.success(tr('common.done'));
    }
  };

  const remove = async (t: Token) => {
    const res = await deleteToken(t.id);
    if (res.success) {
      Message.success(tr('common.done'));
      void list.reload();
    }
  };

  const copySelected = () => {
    if (selected.length === 0) {
      Message.error(tr('token.pleaseSelectAtLeastOne'));
      return;
    }
    void copyText(selected.map((t) => `${t.name}    sk-${t.key}`).join('\n'));
  };

  /** A token's period budgets as "spent / budget" lines (none for a token without budgets). */
  const budgetLines = (t: Token): string[] =>
    (
      [
        ['token.budgetDailyShort', t.budget_daily, t.budget_daily_used],
        ['token.budgetWeeklyShort', t.budget_weekly, t.budget_weekly_used],
        ['token.budgetMonthlyShort', t.budget_monthly, t.budget_monthly_used],
      ] as const
    )
      .filter(([, budget]) => (budget ?? 0) > 0)
      .map(([label, budget, used]) =>
        tr(label, { used: renderQuota(used ?? 0, status), budget: renderQuota(budget ?? 0, status) }),
      );

  const columns: TableColumnProps<Token>[] = [
    { title: tr('common.name'), dataIndex: 'name' },
    { title: tr('common.status'), dataIndex: 'status', render: (_v, t) => tokenStatusTag(t) },
    { title: tr('common.usedQuota'), dataIndex: 'used_quota', render: (q: number) => renderQuota(q, status) },
    {
      title: tr('common.remainingQuota'),
      dataIndex: 'remain_quota',
      render: (q: number, t) => (
        <>
          {t.unlimited_quota ? <Tag color="arcoblue">{tr('token.unlimited')}</Tag> : renderQuota(q, status)}
          {budgetLines(t).map((line) => (
            <div key={line} style={{ fontSize: 12, color: 'var(--color-text-3)' }}>
              {line}
            </div>
          ))}
        </>
      ),
    },
    { title: tr('common.created'), dataIndex: 'created_time', render: (s: number) => timeText(s) },
    { title: tr('token.expires'), dataIndex: 'expired_time', render: (s: number) => timeText(s) },
    {
      title: tr('common.actions'),
      // Wide enough for the six mini buttons side by side (they wrapped onto three lines at 1440 px).
      width: 350,
      render: (_v, t) => (
        <Space size={4} className="aigw-token-actions">
          <Button
            size="mini"
            onClick={() =>
              Modal.info({
                title: t.name,
                content: <Typography.Text copyable>{`sk-${t.key}`}</Typography.Text>,
                simple: false,
              })
            }
          >
            {tr('common.view')}
          </Button>
          <Button size="mini" type="primary" className="aigw-copy-token" onClick={() => void copyText(`sk-${t.key}`)}>
            {tr('common.copy')}
          </Button>
          {chats.length > 0 && (
            <Dropdown
              droplist={
                <Menu onClickMenuItem={(k) => openChat(chats[Number(k)]?.[1] ?? '', t)}>
                  {chats.map(([name], i) => (
                    <Menu.Item key={String(i)}>{name}</Menu.Item>
                  ))}
                </Menu>
              }
            >
              <Button size="mini">{tr('token.chat')}</Button>
            </Dropdown>
          )}
          <Popconfirm
            title={tr('token.deleteThisToken')}
            content={tr('common.thisCannotBeUndone')}
            onOk={() => void remove(t)}
          >
            <Button size="mini" status="danger">
              {tr('common.delete')}
            </Button>
          </Popconfirm>
          {t.status === 1 ? (
            <Button size="mini" status="warning" onClick={() => void toggle(t)}>
              {tr('common.disable')}
            </Button>
          ) : (
            <Button size="mini" status="success" onClick={() => void toggle(t)}>
              {tr('common.enable')}
            </Button>
          )}
          <Button size="mini" onClick={() => setDrawer({ visible: true, id: t.id })}>
            {tr('common.edit')}
          </Button>
        </Space>
      ),
    },
  ];

  return (
    <Card bordered={false} title={t('menu.token')}>
      <Alert type="warning" style={{ marginBottom: 16 }} content={tr('token.tokenQuotasCannotBeControlled')} />
      <Form layout="inline" initialValues={{ keyword: '', token: '' }} onSubmit={search} style={{ marginBottom: 16 }}>
        <Form.Item field="keyword">
          <Input name="keyword" prefix={<IconSearch />} placeholder={tr('token.searchTokensByName')} allowClear />
        </Form.Item>
        <Form.Item field="token">
          <Input name="token" placeholder={tr('common.key')} allowClear />
        </Form.Item>
        <Form.Item>
          <Button type="primary" htmlType="submit">
            {tr('common.search')}
          </Button>
        </Form.Item>
      </Form>
      <Space style={{ marginBottom: 16 }}>
        <Button type="primary" icon={<IconPlus />} onClick={() => setDrawer({ visible: true })}>
          {tr('token.addToken')}
        </Button>
        <Button onClick={copySelected}>{tr('token.copySelectedTokens')}</Button>
      </Space>
      <Table
        rowKey="id"
        loading={list.loading}
        columns={columns}
        data={rows}
        rowClassName={(t) => (t.status === 1 ? '' : 'aigw-row-disabled')}
        rowSelection={{
          type: 'checkbox',
          selectedRowKeys: selected.map((t) => t.id),
          onChange: (_keys, records) => setSelected(records),
        }}
        pagination={list.pagination}
        scroll={{ x: 1000 }}
      />
      <TokenDrawer
        visible={drawer.visible}
        id={drawer.id}
        onClose={() => setDrawer({ visible: false })}
        onSaved={() => void list.reload()}
      />
    </Card>
  );
}
