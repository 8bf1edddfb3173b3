import {
  Button,
  Drawer,
  Form,
  Input,
  Message,
  Popconfirm,
  Space,
  Switch,
  Table,
  type TableColumnProps,
  Tag,
} from '@arco-design/web-react';
import { IconPlus } from '@arco-design/web-react/icon';
import { useState } from 'react';
import { createVendor, deleteVendor, updateVendor, type Vendor, type VendorInput } from '../../api/model-meta.ts';
import { tr } from '../../locale/translate.ts';

const EMPTY: VendorInput = { name: '', description: '', icon: '', status: 1 };

/** The vendors tab: every vendor with its model count; create, edit and delete. */
export default function VendorsTab({
  vendors,
  counts,
  onChanged,
}: {
  vendors: Vendor[];
  counts: Record<string, number>;
  onChanged: () => void;
}) {
  const [form, setForm] = useState<VendorInput | null>(null);
  const [error, setError] = useState<string>();
  const [saving, setSaving] = useState(false);

  const submit = async () => {
    if (!form) return;
    if (!form.name.trim()) {
      setError(tr('models.vendorNameRequired'));
      return;
    }
    setSaving(true);
    const body = { ...form, name: form.name.trim() };
    const res = form.id ? await updateVendor(body) : await createVendor(body);
    setSaving(false);
    if (!res.success) return;
    Message.success(tr('common.done'));
    setForm(null);
    onChanged();
  };
  const remove = async (v: Vendor) => {
    if ((await deleteVendor(v.id)).success) {
      Message.success(tr('common.done'));
      onChanged();
    }
  };

  const columns: TableColumnProps<Vendor>[] = [
    { title: 'ID', dataIndex: 'id', width: 80 },
    { title: tr('common.name'), dataIndex: 'name' },
    { title: tr('models.description'), dataIndex: 'description', ellipsis: true },
    { title: tr('models.icon'), dataIndex: 'icon' },
    {
      title: tr('common.status'),
      dataIndex: 'status',
      render: (s: number) =>
        s === 1 ? <Tag color="green">{tr('common.enabled')}</Tag> : <Tag color="red">{tr('common.disabled')}</Tag>,
    },
    { title: tr('models.modelCount'), render: (_v, r) => counts[String(r.id)] ?? 0 },
    {
      title: tr('common.actions'),
      render: (_v, r) => (
        <Space size={4}>
          <Button size="mini" onClick={() => setForm({ ...r })}>
            {tr('common.edit')}
          </Button>
          <Popconfirm title={tr('models.deleteVendorConfirm')} onOk={() => void remove(r)}>
            <Button size="mini" status="danger">
              {tr('common.delete')}
            </Button>
          </Popconfirm>
        </Space>
      ),
    },
  ];

  return (
    <>
      <Space style={{ marginBottom: 16 }}>
        <Button type="primary" icon={<IconPlus />} onClick={() => setForm(EMPTY)}>
          {tr('models.addVendor')}
        </Button>
      </Space>
      <Table rowKey="id" columns={columns} data={vendors} pagination={{ pageSize: 20 }} />
      <Drawer
        width={440}
        title={form?.id ? tr('models.editVendor') : tr('models.addVendor')}
        visible={form !== null}
        onCancel={() => setForm(null)}
        footer={
          <Space>
            <Button onClick={() => setForm(null)}>{tr('common.cancel')}</Button>
            <Button type="primary" loading={saving} onClick={() => void submit()}>
              {tr('common.submit')}
            </Button>
          </Space>
        }
      >
        {form && (
          <Form layout="vertical">
            <Form.Item label={tr('common.name')} required validateStatus={error ? 'error' : undefined} help={error}>
              <Input
                name="vendor-name"
                value={form.name}
                onChange={(v) => {
                  setError(undefined);
                  setForm({ ...form, name: v });
                }}
              />
            </Form.Item>
            <Form.Item label={tr('models.description')}>
              <Input.TextArea value={form.description} onChange={(v) => setForm({ ...form, description: v })} />
            </Form.Item>
            <Form.Item label={tr('models.icon')}>
              <Input value={form.icon} onChange={(v) => setForm({ ...form, icon: v })} />
            </Form.Item>
            <Form.Item label={tr('common.status')}>
              <Switch checked={form.status === 1} onChange={(on) => setForm({ ...form, status: on ? 1 : 0 })} />
            </Form.Item>
          </Form>
        )}
      </Drawer>
    </>
  );
}
