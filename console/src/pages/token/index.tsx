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
import { useCallback, useEffect, useState } from 'react';
import { deleteToken, listTokens, searchTokens, setTokenStatus, type Token } from '../../api/token.ts';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';
import { copyText } from '../../utils/clipboard.ts';
import { renderQuota } from '../../utils/format.ts';
import TokenDrawer from './token-drawer.tsx';
import './style/index.css';

const PAGE_SIZES = [10, 20, 50, 100];
const timeText = (sec: number) => (sec === -1 ? '永不过期' : new Date(sec * 1000).toLocaleString());

/** Status labels of spec 02 section 4. */
export function tokenStatusTag(t: Pick<Token, 'status' | 'model_limits_enabled'>) {
  switch (t.status) {
    case 1:
      return t.model_limits_enabled ? <Tag color="green">已启用：限制模型</Tag> : <Tag color="green">已启用</Tag>;
    case 2:
      return <Tag color="red">已禁用</Tag>;
    case 3:
      return <Tag color="gold">已过期</Tag>;
    case 4:
      return <Tag color="gray">已耗尽</Tag>;
    default:
      return <Tag color="gray">未知状态</Tag>;
  }
}

/** 令牌: search by name and key, paged list with row actions, the token drawer. */
export default function TokenPage() {
  const t = useT();
  const { status } = useStatus();
  const [rows, setRows] = useState<Token[]>([]);
  const [total, setTotal] = useState(0);
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(10);
  const [loading, setLoading] = useState(false);
  const [filters, setFilters] = useState({ keyword: '', token: '' });
  const [query, setQuery] = useState({ keyword: '', token: '' });
  const [selected, setSelected] = useState<Token[]>([]);
  const [drawer, setDrawer] = useState<{ visible: boolean; id?: number }>({ visible: false });

  const load = useCallback(async () => {
    setLoading(true);
    const res =
      query.keyword || query.token
        ? await searchTokens(query.keyword, query.token, page, pageSize)
        : await listTokens(page, pageSize);
    setLoading(false);
    if (res.success && res.data) {
      setRows(res.data.items);
      setTotal(res.data.total);
    }
  }, [page, pageSize, query]);

  useEffect(() => {
    void load();
  }, [load]);

  const search = () => {
    setPage(1);
    setQuery({ keyword: filters.keyword.trim(), token: filters.token.trim() });
  };

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
      Message.success('操作成功完成！');
    }
  };

  const remove = async (t: Token) => {
    const res = await deleteToken(t.id);
    if (res.success) {
      Message.success('操作成功完成！');
      void load();
    }
  };

  const copySelected = () => {
    if (selected.length === 0) {
      Message.error('请至少选择一个令牌！');
      return;
    }
    void copyText(selected.map((t) => `${t.name}    sk-${t.key}`).join('\n'));
  };

  const columns: TableColumnProps<Token>[] = [
    { title: '名称', dataIndex: 'name' },
    { title: '状态', dataIndex: 'status', render: (_v, t) => tokenStatusTag(t) },
    { title: '已用额度', dataIndex: 'used_quota', render: (q: number) => renderQuota(q, status) },
    {
      title: '剩余额度',
      dataIndex: 'remain_quota',
      render: (q: number, t) => (t.unlimited_quota ? <Tag color="arcoblue">无限制</Tag> : renderQuota(q, status)),
    },
    { title: '创建时间', dataIndex: 'created_time', render: (s: number) => timeText(s) },
    { title: '过期时间', dataIndex: 'expired_time', render: (s: number) => timeText(s) },
    {
      title: '操作',
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
            查看
          </Button>
          <Button size="mini" type="primary" className="aigw-copy-token" onClick={() => void copyText(`sk-${t.key}`)}>
            复制
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
              <Button size="mini">聊天</Button>
            </Dropdown>
          )}
          <Popconfirm title="确定是否要删除此令牌？" content="此修改将不可逆" onOk={() => void remove(t)}>
            <Button size="mini" status="danger">
              删除
            </Button>
          </Popconfirm>
          {t.status === 1 ? (
            <Button size="mini" status="warning" onClick={() => void toggle(t)}>
              禁用
            </Button>
          ) : (
            <Button size="mini" status="success" onClick={() => void toggle(t)}>
              启用
            </Button>
          )}
          <Button size="mini" onClick={() => setDrawer({ visible: true, id: t.id })}>
            编辑
          </Button>
        </Space>
      ),
    },
  ];

  return (
    <Card bordered={false} title={t('menu.token')}>
      <Alert
        type="warning"
        style={{ marginBottom: 16 }}
        content="令牌无法精确控制使用额度，只允许自用，请勿直接将令牌分发给用户。"
      />
      <Form layout="inline" onSubmit={search} style={{ marginBottom: 16 }}>
        <Form.Item>
          <Input
            name="keyword"
            prefix={<IconSearch />}
            placeholder="搜索令牌的名称 ..."
            value={filters.keyword}
            onChange={(v) => setFilters((f) => ({ ...f, keyword: v }))}
            allowClear
          />
        </Form.Item>
        <Form.Item>
          <Input
            name="token"
            placeholder="密钥"
            value={filters.token}
            onChange={(v) => setFilters((f) => ({ ...f, token: v }))}
            allowClear
          />
        </Form.Item>
        <Form.Item>
          <Button type="primary" htmlType="submit">
            查询
          </Button>
        </Form.Item>
      </Form>
      <Space style={{ marginBottom: 16 }}>
        <Button type="primary" icon={<IconPlus />} onClick={() => setDrawer({ visible: true })}>
          添加令牌
        </Button>
        <Button onClick={copySelected}>复制所选令牌</Button>
      </Space>
      <Table
        rowKey="id"
        loading={loading}
        columns={columns}
        data={rows}
        rowClassName={(t) => (t.status === 1 ? '' : 'aigw-row-disabled')}
        rowSelection={{
          type: 'checkbox',
          selectedRowKeys: selected.map((t) => t.id),
          onChange: (_keys, records) => setSelected(records),
        }}
        pagination={{
          current: page,
          pageSize,
          total,
          showTotal: true,
          sizeCanChange: true,
          sizeOptions: PAGE_SIZES,
          onChange: (p, size) => {
            setPage(size === pageSize ? p : 1);
            setPageSize(size);
          },
        }}
        scroll={{ x: 1000 }}
      />
      <TokenDrawer
        visible={drawer.visible}
        id={drawer.id}
        onClose={() => setDrawer({ visible: false })}
        onSaved={() => void load()}
      />
    </Card>
  );
}
