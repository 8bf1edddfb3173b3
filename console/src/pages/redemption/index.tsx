import {
  Button,
  Card,
  DatePicker,
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
import { useState } from 'react';
import {
  createRedemptions,
  deleteInvalidRedemptions,
  deleteRedemption,
  listRedemptions,
  type Redemption,
  searchRedemptions,
  setRedemptionStatus,
  updateRedemption,
} from '../../api/redemption.ts';
import { usePagedList } from '../../hooks/use-paged-list.ts';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';
import { copyText } from '../../utils/clipboard.ts';
import { renderQuota } from '../../utils/format.ts';
import './style/index.css';
import { tr } from '../../locale/translate.ts';

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

/** Whether an unused code is past its expiry (new-api's expired_time). */
const isExpired = (r: Pick<Redemption, 'status' | 'expired_time'>) =>
  r.status === 1 && r.expired_time > 0 && r.expired_time < Date.now() / 1000;

function StatusTag({ status, expired }: { status: number; expired: boolean }) {
  if (expired) return <Tag color="orange">{tr('redemption.expired')}</Tag>;
  if (status === 1) return <Tag color="green">{tr('redemption.unused')}</Tag>;
  if (status === 2) return <Tag color="red">{tr('common.disabled')}</Tag>;
  if (status === 3) return <Tag color="gray">{tr('redemption.used')}</Tag>;
  return <Tag>{tr('common.unknownStatus')}</Tag>;
}

/** The drawer's fields; expiredTime in Unix seconds, 0 never. */
interface FormState {
  name: string;
  quota: number;
  count: number;
  expiredTime: number;
}
const EMPTY: FormState = { name: '', quota: 100000, count: 1, expiredTime: 0 };

/** 管理兑换码: search by id or name, table, create/edit drawer, row and bulk copy. */
export default function RedemptionPage() {
  const t = useT();
  const { status } = useStatus();
  const list = usePagedList<Redemption, string>({
    initialQuery: '',
    fetch: (q, page, pageSize) => (q ? searchRedemptions(q, page, pageSize) : listRedemptions(page, pageSize)),
  });
  const { rows, setRows } = list;
  const [selected, setSelected] = useState<Redemption[]>([]);
  // The drawer: closed, or open on a new code (no id) or the code with this id.
  const [editing, setEditing] = useState<{ id?: number; values: FormState } | null>(null);
  const [form] = Form.useForm<FormState>();
  const [saving, setSaving] = useState(false);
  const quota = Form.useWatch('quota', form) as number | undefined;

  const open = (id?: number, values: FormState = EMPTY) => setEditing(id === undefined ? { values } : { id, values });
  const creating = editing?.id === undefined;

  const submit = async () => {
    if (!editing) return;
    const values = await form.validate().catch(() => null);
    if (!values || (creating && !values.name?.trim())) return;
    setSaving(true);
    if (editing.id !== undefined) {
      const res = await updateRedemption({
        id: editing.id,
        name: values.name.trim(),
        quota: Math.floor(values.quota),
        expired_time: values.expiredTime,
      });
      setSaving(false);
      if (!res.success) return;
      Message.success(tr('redemption.redemptionCodeUpdated'));
    } else {
      const name = values.name.trim();
      const res = await createRedemptions({
        name,
        quota: Math.floor(values.quota),
        count: Math.floor(values.count),
        expired_time: values.expiredTime,
      });
      setSaving(false);
      if (!res.success) return;
      Message.success(tr('redemption.redemptionCodeCreated'));
      const keys = res.data ?? [];
      Modal.confirm({
        title: tr('redemption.redemptionCodesCreated'),
        content: tr('redemption.generatedDownload', { n: keys.length }),
        okText: tr('redemption.download'),
        onOk: () => downloadKeys(name, keys),
      });
    }
    setEditing(null);
    void list.reload();
  };

  const toggle = async (r: Redemption) => {
    const res = await setRedemptionStatus(r.id, r.status === 1 ? 2 : 1);
    if (res.success && res.data) {
      const next = res.data.status;
      setRows((list) => list.map((x) => (x.id === r.id ? { ...x, status: next } : x)));
      Message.success(tr('common.done'));
    }
  };

  const removeInvalid = async () => {
    const res = await deleteInvalidRedemptions();
    if (!res.success) return;
    Message.success(tr('redemption.deletedInvalid', { n: res.data ?? 0 }));
    void list.reload();
  };

  const remove = async (r: Redemption) => {
    const res = await deleteRedemption(r.id);
    if (res.success) {
      Message.success(tr('common.done'));
      void list.reload();
    }
  };

  const columns: TableColumnProps<Redemption>[] = [
    { title: 'ID', dataIndex: 'id', width: 80 },
    { title: tr('common.name'), dataIndex: 'name' },
    {
      title: tr('common.status'),
      dataIndex: 'status',
      render: (s: number, r) => <StatusTag status={s} expired={isExpired(r)} />,
    },
    { title: tr('redemption.quota'), dataIndex: 'quota', render: (q: number) => renderQuota(q, status) },
    { title: tr('common.created'), dataIndex: 'created_time', render: (s: number) => timeText(s) },
    {
      title: tr('redemption.expiredTime'),
      dataIndex: 'expired_time',
      render: (s: number) => (s ? timeText(s) : tr('redemption.neverExpires')),
    },
    {
      title: tr('redemption.redeemedBy'),
      dataIndex: 'used_user_id',
      render: (id: number) => (id ? id : tr('common.none')),
    },
    {
      title: tr('common.actions'),
      render: (_v, r) => (
        <Space wrap size={4}>
          <Button
            size="mini"
            onClick={() => Modal.info({ title: r.name, content: <Typography.Text copyable>{r.key}</Typography.Text> })}
          >
            {tr('common.view')}
          </Button>
          <Button size="mini" type="primary" onClick={() => void copyText(r.key)}>
            {tr('common.copy')}
          </Button>
          <Popconfirm
            title={tr('redemption.deleteThisRedemptionCode')}
            content={tr('common.thisCannotBeUndone')}
            onOk={() => void remove(r)}
          >
            <Button size="mini" status="danger">
              {tr('common.delete')}
            </Button>
          </Popconfirm>
          {r.status === 1 ? (
            <Button size="mini" status="warning" onClick={() => void toggle(r)}>
              {tr('common.disable')}
            </Button>
          ) : (
            <Button size="mini" status="success" disabled={r.status === 3} onClick={() => void toggle(r)}>
              {tr('common.enable')}
            </Button>
          )}
          <Button
            size="mini"
            disabled={r.status !== 1}
            onClick={() => open(r.id, { name: r.name, quota: r.quota, count: 1, expiredTime: r.expired_time })}
          >
            {tr('common.edit')}
          </Button>
        </Space>
      ),
    },
  ];

  return (
    <Card bordered={false} title={t('page.redemption.title')}>
      <Form
        layout="inline"
        initialValues={{ keyword: '' }}
        onSubmit={(v: { keyword?: string }) => list.search((v.keyword ?? '').trim())}
        style={{ marginBottom: 16 }}
      >
        <Form.Item field="keyword">
          <Input
            name="keyword"
            prefix={<IconSearch />}
            placeholder={tr('redemption.searchRedemptionCodesById')}
            style={{ width: 300 }}
            allowClear
          />
        </Form.Item>
        <Form.Item>
          <Button type="primary" htmlType="submit">
            {tr('common.search')}
          </Button>
        </Form.Item>
      </Form>
      <Space style={{ marginBottom: 16 }}>
        <Button type="primary" icon={<IconPlus />} onClick={() => open()}>
          {tr('redemption.addRedemptionCode')}
        </Button>
        <Button
          onClick={() => {
            if (selected.length === 0) Message.error(tr('redemption.pleaseSelectAtLeastOne'));
            else void copyText(selected.map((r) => `${r.name}    ${r.key}`).join('\n'));
          }}
        >
          {tr('redemption.copySelectedCodes')}
        </Button>
        <Popconfirm title={tr('redemption.deleteInvalidConfirm')} onOk={() => void removeInvalid()}>
          <Button status="danger">{tr('redemption.deleteInvalid')}</Button>
        </Popconfirm>
      </Space>
      <Table
        rowKey="id"
        loading={list.loading}
        columns={columns}
        data={rows}
        rowClassName={(r) => (r.status === 1 ? '' : 'aigw-row-disabled')}
        rowSelection={{
          type: 'checkbox',
          selectedRowKeys: selected.map((r) => r.id),
          onChange: (_k, records) => setSelected(records),
        }}
        pagination={list.pagination}
      />
      <Drawer
        width={480}
        title={editing?.id ? tr('redemption.editRedemptionCode') : tr('redemption.newRedemptionCode')}
        visible={editing !== null}
        onCancel={() => setEditing(null)}
        footer={
          <Space>
            <Button onClick={() => setEditing(null)}>{tr('common.cancel')}</Button>
            <Button type="primary" loading={saving} onClick={() => void submit()}>
              {tr('common.submit')}
            </Button>
          </Space>
        }
      >
        {editing && (
          <Form form={form} layout="vertical" initialValues={editing.values}>
            <Form.Item
              label={tr('common.name')}
              field="name"
              // Required when creating (spec 02): submit does nothing while the name is empty.
              required={creating}
            >
              <Input name="redemption-name" placeholder={tr('common.enterAName')} />
            </Form.Item>
            <Form.Item
              label={tr('common.quotaOf', { quota: renderQuota(quota ?? editing.values.quota, status) })}
              field="quota"
              normalize={(v?: number) => v ?? 0}
            >
              <InputNumber min={1} precision={0} />
            </Form.Item>
            <Form.Item
              label={tr('redemption.expiredTime')}
              extra={tr('redemption.expiredTimeExtra')}
              field="expiredTime"
              getValueFromEvent={(_text: string, date?: { unix(): number }) => (date ? date.unix() : 0)}
              formatter={(sec?: number) => (sec ? sec * 1000 : undefined)}
            >
              <DatePicker showTime style={{ width: '100%' }} />
            </Form.Item>
            {creating && (
              <Form.Item label={tr('redemption.count')} field="count" normalize={(v?: number) => v ?? 1}>
                <InputNumber min={1} max={100} precision={0} />
              </Form.Item>
            )}
          </Form>
        )}
      </Drawer>
    </Card>
  );
}
