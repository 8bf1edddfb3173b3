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
import { useEffect, useState } from 'react';
import type { UserRecord } from '../../api/account.ts';
import { createUser, listGroups, listUsers, type ManageAction, manageUser, searchUsers } from '../../api/admin-user.ts';
import { usePagedList } from '../../hooks/use-paged-list.ts';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';
import { renderNumber, renderQuota } from '../../utils/format.ts';
import EditUserForm from './edit-user-form.tsx';
import { RoleTag, StatusTag } from './labels.tsx';
import './style/index.css';
import { tr } from '../../locale/translate.ts';

/** The searched keyword and group (empty: any). */
interface UserQuery {
  keyword: string;
  group: string;
}

interface NewUser {
  username: string;
  display_name: string;
  password: string;
}

/** 管理用户: search by keyword and group, a paged table with manage actions, add and edit drawers. */
export default function UserPage() {
  const t = useT();
  const { status } = useStatus();
  const list = usePagedList<UserRecord, UserQuery>({
    initialQuery: { keyword: '', group: '' },
    fetch: (q, page, pageSize) =>
      q.keyword !== '' || q.group !== '' ? searchUsers(q.keyword, q.group, page, pageSize) : listUsers(page, pageSize),
  });
  const { rows, setRows } = list;
  const [groups, setGroups] = useState<string[]>([]);
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<UserRecord | null>(null);
  const [addForm] = Form.useForm<NewUser>();

  useEffect(() => {
    void listGroups().then((res) => res.success && setGroups(res.data ?? []));
  }, []);

  const search = (v: Partial<UserQuery>) => list.search({ keyword: (v.keyword ?? '').trim(), group: v.group ?? '' });

  const manage = async (user: UserRecord, action: ManageAction) => {
    const res = await manageUser(user.id, action);
    if (!res.success || !res.data) return;
    Message.success(tr('common.done'));
    if (action === 'delete') void list.reload();
    else
      setRows((list) =>
        list.map((u) => (u.id === user.id ? { ...u, status: res.data!.status, role: res.data!.role } : u)),
      );
  };

  // Username and password are required; the message is the one the toast used to give.
  const required = [{ required: true, message: tr('user.pleaseEnterAUsernameAnd') }];
  const addUser = async () => {
    const values = await addForm.validate().catch(() => null);
    if (!values) return;
    const res = await createUser({ ...values, display_name: values.display_name ?? '' });
    if (res.success) {
      Message.success(tr('user.userAccountCreated'));
      setAdding(false);
      addForm.resetFields();
      void list.reload();
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
      <Form layout="inline" initialValues={{ keyword: '' }} onSubmit={search} style={{ marginBottom: 16 }}>
        <Form.Item field="keyword">
          <Input
            name="keyword"
            prefix={<IconSearch />}
            placeholder={tr('user.searchUsersByIdUsername')}
            style={{ width: 320 }}
            allowClear
          />
        </Form.Item>
        <Form.Item field="group">
          <Select placeholder={tr('common.selectAGroup')} allowClear style={{ width: 160 }}>
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
        loading={list.loading}
        columns={columns}
        data={rows}
        rowClassName={(u) => (u.DeletedAt || u.status !== 1 ? 'aigw-row-disabled' : '')}
        pagination={list.pagination}
      />
      <Drawer
        width={420}
        title={tr('user.addUser')}
        visible={adding}
        onCancel={() => setAdding(false)}
        onOk={() => void addUser()}
        okText={tr('common.submit')}
      >
        <Form form={addForm} layout="vertical">
          <Form.Item label={tr('common.username2')} field="username" rules={required}>
            <Input name="new_username" maxLength={12} placeholder={tr('user.enterAUsername')} />
          </Form.Item>
          <Form.Item label={tr('user.displayName')} field="display_name">
            <Input name="new_display_name" placeholder={tr('user.enterADisplayName')} />
          </Form.Item>
          <Form.Item label={tr('user.password')} field="password" rules={required}>
            <Input.Password name="new_password" placeholder={tr('user.enterAPassword')} autoComplete="new-password" />
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
              void list.reload();
            }}
          />
        )}
      </Drawer>
    </Card>
  );
}
