import {
  Button,
  Card,
  Drawer,
  Form,
  Input,
  Message,
  Popconfirm,
  Select,
  Space,
  Table,
  type TableColumnProps,
  Tag,
  Tooltip,
} from '@arco-design/web-react';
import { IconPlus, IconSearch } from '@arco-design/web-react/icon';
import { useCallback, useEffect, useState } from 'react';
import type { UserRecord } from '../../api/account.ts';
import { createUser, listGroups, listUsers, type ManageAction, manageUser, searchUsers } from '../../api/admin-user.ts';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';
import { renderNumber, renderQuota } from '../../utils/format.ts';
import EditUserForm from './edit-user-form.tsx';
import { RoleTag, StatusTag } from './labels.tsx';
import './style/index.css';

const PAGE_SIZES = [10, 20, 50, 100];

/** 管理用户: search by keyword and group, a paged table with manage actions, add and edit drawers. */
export default function UserPage() {
  const t = useT();
  const { status } = useStatus();
  const [rows, setRows] = useState<UserRecord[]>([]);
  const [total, setTotal] = useState(0);
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(10);
  const [loading, setLoading] = useState(false);
  const [keyword, setKeyword] = useState('');
  const [group, setGroup] = useState('');
  const [query, setQuery] = useState({ keyword: '', group: '' });
  const [groups, setGroups] = useState<string[]>([]);
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<UserRecord | null>(null);
  const [newUser, setNewUser] = useState({ username: '', display_name: '', password: '' });

  const load = useCallback(async () => {
    setLoading(true);
    const searching = query.keyword !== '' || query.group !== '';
    const res = searching
      ? await searchUsers(query.keyword, query.group, page, pageSize)
      : await listUsers(page, pageSize);
    setLoading(false);
    if (res.success && res.data) {
      setRows(res.data.items);
      setTotal(res.data.total);
    }
  }, [page, pageSize, query]);

  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    void listGroups().then((res) => res.success && setGroups(res.data ?? []));
  }, []);

  const search = () => {
    setPage(1);
    setQuery({ keyword: keyword.trim(), group });
  };

  const manage = async (user: UserRecord, action: ManageAction) => {
    const res = await manageUser(user.id, action);
    if (!res.success || !res.data) return;
    Message.success('操作成功完成！');
    if (action === 'delete') void load();
    else
      setRows((list) =>
        list.map((u) => (u.id === user.id ? { ...u, status: res.data!.status, role: res.data!.role } : u)),
      );
  };

  const addUser = async () => {
    if (!newUser.username || !newUser.password) {
      Message.error('请输入用户名和密码！');
      return;
    }
    const res = await createUser(newUser);
    if (res.success) {
      Message.success('用户账户创建成功！');
      setAdding(false);
      setNewUser({ username: '', display_name: '', password: '' });
      void load();
    }
  };

  const columns: TableColumnProps<UserRecord>[] = [
    { title: 'ID', dataIndex: 'id', width: 80 },
    {
      title: '用户名',
      dataIndex: 'username',
      render: (_v, u) => (
        <Tooltip content={u.display_name || u.username}>
          <span>{u.username}</span>
        </Tooltip>
      ),
    },
    { title: '分组', dataIndex: 'group', render: (g: string) => <Tag>{g}</Tag> },
    {
      title: '统计信息',
      render: (_v, u) => (
        <Space wrap size={4}>
          <Tooltip content="剩余额度">
            <Tag color="green">{renderQuota(u.quota, status)}</Tag>
          </Tooltip>
          <Tooltip content="已用额度">
            <Tag color="arcoblue">{renderQuota(u.used_quota, status)}</Tag>
          </Tooltip>
          <Tooltip content="调用次数">
            <Tag color="cyan">{renderNumber(u.request_count)}</Tag>
          </Tooltip>
        </Space>
      ),
    },
    { title: '用户角色', dataIndex: 'role', render: (r: number) => <RoleTag role={r} /> },
    { title: '状态', dataIndex: 'status', render: (_v, u) => <StatusTag user={u} /> },
    {
      title: '操作',
      render: (_v, u) =>
        u.DeletedAt ? null : (
          <Space wrap size={4}>
            <Popconfirm title="确定要提升此用户吗？" onOk={() => void manage(u, 'promote')}>
              <Button size="mini" type="outline">
                提升
              </Button>
            </Popconfirm>
            <Popconfirm title="确定要降级此用户吗？" onOk={() => void manage(u, 'demote')}>
              <Button size="mini" type="outline" status="warning">
                降级
              </Button>
            </Popconfirm>
            {u.status === 1 ? (
              <Button size="mini" status="warning" onClick={() => void manage(u, 'disable')}>
                禁用
              </Button>
            ) : (
              <Button size="mini" status="success" disabled={u.status === 3} onClick={() => void manage(u, 'enable')}>
                启用
              </Button>
            )}
            <Button size="mini" onClick={() => setEditing(u)}>
              编辑
            </Button>
            <Popconfirm
              title="确定是否要注销此用户？"
              content="相当于删除用户，此修改将不可逆"
              onOk={() => void manage(u, 'delete')}
            >
              <Button size="mini" status="danger">
                注销
              </Button>
            </Popconfirm>
          </Space>
        ),
    },
  ];

  return (
    <Card bordered={false} title={t('page.user.title')}>
      <Form layout="inline" onSubmit={search} style={{ marginBottom: 16 }}>
        <Form.Item>
          <Input
            name="keyword"
            prefix={<IconSearch />}
            placeholder="搜索用户的 ID，用户名，显示名称，以及邮箱地址 ..."
            value={keyword}
            onChange={setKeyword}
            style={{ width: 320 }}
            allowClear
          />
        </Form.Item>
        <Form.Item>
          <Select
            placeholder="选择分组"
            value={group || undefined}
            onChange={(v: string) => setGroup(v ?? '')}
            allowClear
            style={{ width: 160 }}
          >
            {groups.map((g) => (
              <Select.Option key={g} value={g}>
                {g}
              </Select.Option>
            ))}
          </Select>
        </Form.Item>
        <Form.Item>
          <Space>
            <Button type="primary" htmlType="submit">
              查询
            </Button>
            <Button icon={<IconPlus />} onClick={() => setAdding(true)}>
              添加用户
            </Button>
          </Space>
        </Form.Item>
      </Form>
      <Table
        rowKey="id"
        loading={loading}
        columns={columns}
        data={rows}
        rowClassName={(u) => (u.DeletedAt || u.status !== 1 ? 'aigw-row-disabled' : '')}
        pagination={{
          current: page,
          pageSize,
          total,
          sizeCanChange: true,
          sizeOptions: PAGE_SIZES,
          showTotal: true,
          onChange: (p, size) => {
            setPage(size !== pageSize ? 1 : p);
            setPageSize(size);
          },
        }}
      />
      <Drawer
        width={420}
        title="添加用户"
        visible={adding}
        onCancel={() => setAdding(false)}
        onOk={() => void addUser()}
        okText="提交"
      >
        <Form layout="vertical">
          <Form.Item label="用户名" required>
            <Input
              name="new_username"
              value={newUser.username}
              onChange={(v) => setNewUser((n) => ({ ...n, username: v }))}
              maxLength={12}
              placeholder="请输入用户名"
            />
          </Form.Item>
          <Form.Item label="显示名称">
            <Input
              name="new_display_name"
              value={newUser.display_name}
              onChange={(v) => setNewUser((n) => ({ ...n, display_name: v }))}
              placeholder="请输入显示名称"
            />
          </Form.Item>
          <Form.Item label="密码" required>
            <Input.Password
              name="new_password"
              value={newUser.password}
              onChange={(v) => setNewUser((n) => ({ ...n, password: v }))}
              placeholder="请输入密码"
              autoComplete="new-password"
            />
          </Form.Item>
        </Form>
      </Drawer>
      <Drawer width={460} title="编辑用户" visible={editing !== null} onCancel={() => setEditing(null)} footer={null}>
        {editing && (
          <EditUserForm
            user={editing}
            onCancel={() => setEditing(null)}
            onSaved={() => {
              setEditing(null);
              void load();
            }}
          />
        )}
      </Drawer>
    </Card>
  );
}
