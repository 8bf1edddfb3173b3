import {
  Button,
  Card,
  Drawer,
  Form,
  Input,
  InputNumber,
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
import {
  createRedemptions,
  deleteRedemption,
  listRedemptions,
  type Redemption,
  searchRedemptions,
  setRedemptionStatus,
  updateRedemption,
} from '../../api/redemption.ts';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';
import { copyText } from '../../utils/clipboard.ts';
import { renderQuota } from '../../utils/format.ts';
import './style/index.css';

const PAGE_SIZES = [10, 20, 50, 100];
const timeText = (sec: number) => (sec ? new Date(sec * 1000).toLocaleString() : '-');

/** Offers the generated keys as `<name>.txt`, one key per line (spec 02 section 7). */
export function downloadKeys(name: string, keys: string[]): void {
  const blob = new Blob([keys.join('\n')], { type: 'text/plain;charset=utf-8' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = `${name}.txt`;
  document.body.appendChild(a);
  a.click();
  a.remove();
  URL.revokeObjectURL(url);
}

function StatusTag({ status }: { status: number }) {
  if (status === 1) return <Tag color="green">未使用</Tag>;
  if (status === 2) return <Tag color="red">已禁用</Tag>;
  if (status === 3) return <Tag color="gray">已使用</Tag>;
  return <Tag>未知状态</Tag>;
}

interface FormState {
  id?: number;
  name: string;
  quota: number;
  count: number;
}
const EMPTY: FormState = { name: '', quota: 100000, count: 1 };

/** 管理兑换码: search by id or name, table, create/edit drawer, row and bulk copy. */
export default function RedemptionPage() {
  const t = useT();
  const { status } = useStatus();
  const [rows, setRows] = useState<Redemption[]>([]);
  const [total, setTotal] = useState(0);
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(10);
  const [loading, setLoading] = useState(false);
  const [keyword, setKeyword] = useState('');
  const [query, setQuery] = useState('');
  const [selected, setSelected] = useState<Redemption[]>([]);
  const [form, setForm] = useState<FormState | null>(null);
  const [saving, setSaving] = useState(false);

  const load = useCallback(async () => {
    setLoading(true);
    const res = query ? await searchRedemptions(query, page, pageSize) : await listRedemptions(page, pageSize);
    setLoading(false);
    if (res.success && res.data) {
      setRows(res.data.items);
      setTotal(res.data.total);
    }
  }, [page, pageSize, query]);

  useEffect(() => {
    void load();
  }, [load]);

  const submit = async () => {
    if (!form) return;
    const editing = form.id !== undefined;
    if (!editing && form.name.trim() === '') return;
    setSaving(true);
    if (editing) {
      const res = await updateRedemption({
        id: form.id as number,
        name: form.name.trim(),
        quota: Math.floor(form.quota),
      });
      setSaving(false);
      if (!res.success) return;
      Message.success('兑换码更新成功！');
    } else {
      const name = form.name.trim();
      const res = await createRedemptions({ name, quota: Math.floor(form.quota), count: Math.floor(form.count) });
      setSaving(false);
      if (!res.success) return;
      Message.success('兑换码创建成功！');
      const keys = res.data ?? [];
      Modal.confirm({
        title: '兑换码创建成功',
        content: `兑换码已生成 ${keys.length} 个，是否下载兑换码？`,
        okText: '下载',
        onOk: () => downloadKeys(name, keys),
      });
    }
    setForm(null);
    void load();
  };

  const toggle = async (r: Redemption) => {
    const res = await setRedemptionStatus(r.id, r.status === 1 ? 2 : 1);
    if (res.success && res.data) {
      const next = res.data.status;
      setRows((list) => list.map((x) => (x.id === r.id ? { ...x, status: next } : x)));
      Message.success('操作成功完成！');
    }
  };

  const remove = async (r: Redemption) => {
    const res = await deleteRedemption(r.id);
    if (res.success) {
      Message.success('操作成功完成！');
      void load();
    }
  };

  const columns: TableColumnProps<Redemption>[] = [
    { title: 'ID', dataIndex: 'id', width: 80 },
    { title: '名称', dataIndex: 'name' },
    { title: '状态', dataIndex: 'status', render: (s: number) => <StatusTag status={s} /> },
    { title: '额度', dataIndex: 'quota', render: (q: number) => renderQuota(q, status) },
    { title: '创建时间', dataIndex: 'created_time', render: (s: number) => timeText(s) },
    { title: '兑换人 ID', dataIndex: 'used_user_id', render: (id: number) => (id ? id : '无') },
    {
      title: '操作',
      render: (_v, r) => (
        <Space wrap size={4}>
          <Button
            size="mini"
            onClick={() => Modal.info({ title: r.name, content: <Typography.Text copyable>{r.key}</Typography.Text> })}
          >
            查看
          </Button>
          <Button size="mini" type="primary" onClick={() => void copyText(r.key)}>
            复制
          </Button>
          <Popconfirm title="确定是否要删除此兑换码？" content="此修改将不可逆" onOk={() => void remove(r)}>
            <Button size="mini" status="danger">
              删除
            </Button>
          </Popconfirm>
          {r.status === 1 ? (
            <Button size="mini" status="warning" onClick={() => void toggle(r)}>
              禁用
            </Button>
          ) : (
            <Button size="mini" status="success" disabled={r.status === 3} onClick={() => void toggle(r)}>
              启用
            </Button>
          )}
          <Button
            size="mini"
            disabled={r.status !== 1}
            onClick={() => setForm({ id: r.id, name: r.name, quota: r.quota, count: 1 })}
          >
            编辑
          </Button>
        </Space>
      ),
    },
  ];

  return (
    <Card bordered={false} title={t('page.redemption.title')}>
      <Form
        layout="inline"
        onSubmit={() => {
          setPage(1);
          setQuery(keyword.trim());
        }}
        style={{ marginBottom: 16 }}
      >
        <Form.Item>
          <Input
            name="keyword"
            prefix={<IconSearch />}
            placeholder="搜索兑换码的 ID 和名称 ..."
            value={keyword}
            onChange={setKeyword}
            style={{ width: 300 }}
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
        <Button type="primary" icon={<IconPlus />} onClick={() => setForm(EMPTY)}>
          添加兑换码
        </Button>
        <Button
          onClick={() => {
            if (selected.length === 0) Message.error('请至少选择一个兑换码！');
            else void copyText(selected.map((r) => `${r.name}    ${r.key}`).join('\n'));
          }}
        >
          复制所选兑换码
        </Button>
      </Space>
      <Table
        rowKey="id"
        loading={loading}
        columns={columns}
        data={rows}
        rowClassName={(r) => (r.status === 1 ? '' : 'aigw-row-disabled')}
        rowSelection={{
          type: 'checkbox',
          selectedRowKeys: selected.map((r) => r.id),
          onChange: (_k, records) => setSelected(records),
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
      />
      <Drawer
        width={480}
        title={form?.id ? '更新兑换码信息' : '创建新的兑换码'}
        visible={form !== null}
        onCancel={() => setForm(null)}
        footer={
          <Space>
            <Button onClick={() => setForm(null)}>取消</Button>
            <Button type="primary" loading={saving} onClick={() => void submit()}>
              提交
            </Button>
          </Space>
        }
      >
        {form && (
          <Form layout="vertical">
            <Form.Item label="名称" required={form.id === undefined}>
              <Input
                name="redemption-name"
                value={form.name}
                onChange={(v) => setForm({ ...form, name: v })}
                placeholder="请输入名称"
              />
            </Form.Item>
            <Form.Item label={`额度（${renderQuota(form.quota, status)}）`}>
              <InputNumber
                value={form.quota}
                min={1}
                precision={0}
                onChange={(v) => setForm({ ...form, quota: v ?? 0 })}
              />
            </Form.Item>
            {form.id === undefined && (
              <Form.Item label="生成数量">
                <InputNumber
                  value={form.count}
                  min={1}
                  max={100}
                  precision={0}
                  onChange={(v) => setForm({ ...form, count: v ?? 1 })}
                />
              </Form.Item>
            )}
          </Form>
        )}
      </Drawer>
    </Card>
  );
}
