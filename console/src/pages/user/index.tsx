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
import { tr } from '../../locale/translate.ts';

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
    Message.success(tr('common.done'));
    if (action === 'delete') void load();
    else
      setRows((list) =>
        list.map((u) => (u.id === user.id ? { ...u, status: res.data!.status, role: res.data!.role } : u)),
      );
  };

  const addUser = async () => {
    if (!newUser.username || !newUser.password) {
      Message.error(tr('user.pleaseEnterAUsernameAnd'));
      return;
    }
    const res = await createUser(newUser);
    if (res.success) {
      Message.success(tr('user.userAccountCreated'));
      setAdding(false);
      setNewUser({ username: '', display_name: '', password: '' });
      void load();
    }
  };

  const columns: TableColumnProps<UserRecord>[] = [
    { title: 'ID', dataIndex: 'id', width: 80 },
    {
      title: tr('common.username2'),
      dataIndex: 'username',
      render: (_v, u) => (
        <Tooltip content={u.remark ? `${u.display_name || u.username} · ${u.remark}` : u.display_name || u.username}>
          <span>{u.username}</span>
        </Tooltip>
      ),
    },
    { title: tr('common.group'), dataIndex: 'group', render: (g: string) => <Tag>{g}</Tag> },
    {
      title: tr('user.statistics'),
      render: (_v, u) => (
        <Space wrap size={4}>
          <Tooltip content={tr('common.remainingQuota')}>
            <Tag color="green">{renderQuota(u.quota, status)}</Tag>
          </Tooltip>
          <Tooltip content={tr('common.usedQuota')}>
            <Tag color="arcoblue">{renderQuota(u.used_quota, status)}</Tag>
          </Tooltip>
          <Tooltip content={tr('user.requests')}>
            <Tag color="cyan">{renderNumber(u.request_count)}</Tag>
          </Tooltip>
        </Space>
      ),
    },
    { title: tr('user.role'), dataIndex: 'role', render: (r: number) => <RoleTag role={r} /> },
    { title: tr('common.status'), dataIndex: 'status', render: (_v, u) => <StatusTag user={u} /> },
    {
      title: tr('common.actions'),
      render: (_v, u) =>
        u.DeletedAt ? null : (
          <Space wrap size={4}>
            <Popconfirm title={tr('user.promoteThisUser')} onOk={() => void manage(u, 'promote')}>
              <Button size="mini" type="outline">
                {tr('user.promote')}
              </Button>
            </Popconfirm>
            <Popconfirm title={tr('user.demoteThisUser')} onOk={() => void manage(u, 'demote')}>
              <Button size="mini" type="outline" status="warning">
                {tr('user.demote')}
              </Button>
            </Popconfirm>
            {u.status === 1 ? (
              <Button size="mini" status="warning" onClick={() => void manage(u, 'disable')}>
                {tr('common.disable')}
              </Button>
            ) : (
              <Button size="mini" status="success" disabled={u.status === 3} onClick={() => void manage(u, 'enable')}>
                {tr('common.enable')}
              </Button>
            )}
            <Button size="mini" onClick={() => setEditing(u)}>
              {tr('common.edit')}
            </Button>
            <Popconfirm
              title={tr('user.deleteThisUser')}
              content={tr('user.thisDeletesTheUserAnd')}
              onOk={() => void manage(u, 'delete')}
            >
              <Button size="mini" status="danger">
                {tr('user.delete')}
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
            placeholder={tr('user.searchUsersByIdUsername')}
            value={keyword}
            onChange={setKeyword}
            style={{ width: 320 }}
            allowClear
          />
        </Form.Item>
        <Form.Item>
          <Select
            placeholder={tr('common.selectAGroup')}
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
              {tr('common.search')}
            </Button>
            <Button icon={<IconPlus />} onClick={() => setAdding(true)}>
              {tr('user.addUser')}
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
        title={tr('user.addUser')}
        visible={adding}
        onCancel={() => setAdding(false)}
        onOk={() => void addUser()}
        okText={tr('common.submit')}
      >
        <Form layout="vertical">
          <Form.Item label={tr('common.username2')} required>
            <Input
              name="new_username"
              value={newUser.username}
              onChange={(v) => setNewUser((n) => ({ ...n, username: v }))}
              maxLength={12}
              placeholder={tr('user.enterAUsername')}
            />
          </Form.Item>
          <Form.Item label={tr('user.displayName')}>
            <Input
              name="new_display_name"
              value={newUser.display_name}
              onChange={(v) => setNewUser((n) => ({ ...n, display_name: v }))}
              placeholder={tr('user.enterADisplayName')}
            />
          </Form.Item>
          <Form.Item label={tr('user.password')} required>
            <Input.Password
              name="new_password"
              value={newUser.password}
              onChange={(v) => setNewUser((n) => ({ ...n, password: v }))}
              placeholder={tr('user.enterAPassword')}
              autoComplete="new-password"
            />
          </Form.Item>
        </Form>
      </Drawer>
      <Drawer
        width={460}
        title={tr('user.editUser')}
        visible={editing !== null}
        onCancel={() => setEditing(null)}
        footer={null}
      >
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
