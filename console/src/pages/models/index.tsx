import {
  Button,
  Card,
  Form,
  Input,
  Message,
  Popconfirm,
  Select,
  Space,
  Switch,
  Table,
  type TableColumnProps,
  Tabs,
  Tag,
} from '@arco-design/web-react';
import { IconPlus, IconSearch } from '@arco-design/web-react/icon';
import { useCallback, useEffect, useState } from 'react';
import {
  deleteModelMeta,
  type ModelMeta,
  searchModelMetas,
  searchVendors,
  setModelMetaStatus,
  type Vendor,
} from '../../api/model-meta.ts';
import { useT } from '../../locale/index.tsx';
import { tr } from '../../locale/translate.ts';
import MissingDialog from './missing-dialog.tsx';
import ModelDrawer from './model-drawer.tsx';
import { EMPTY_MODEL, type ModelForm, NAME_RULES, tagsOf } from './model-form.ts';
import SyncDialog from './sync-dialog.tsx';
import VendorsTab from './vendors-tab.tsx';

const PAGE_SIZES = [10, 20, 50, 100];

/** 模型管理 (admin): new-api's model catalogue: model metadata, vendors, missing models, upstream sync. */
export default function ModelsPage() {
  const t = useT();
  const [rows, setRows] = useState<ModelMeta[]>([]);
  const [total, setTotal] = useState(0);
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(10);
  const [loading, setLoading] = useState(false);
  const [keyword, setKeyword] = useState('');
  const [query, setQuery] = useState({ keyword: '', vendor: '' });
  const [vendors, setVendors] = useState<Vendor[]>([]);
  const [counts, setCounts] = useState<Record<string, number>>({});
  const [form, setForm] = useState<ModelForm | null>(null);
  const [missingOpen, setMissingOpen] = useState(false);
  const [syncOpen, setSyncOpen] = useState(false);

  const load = useCallback(async () => {
    setLoading(true);
    const res = await searchModelMetas({ ...query, p: page, page_size: pageSize });
    setLoading(false);
    if (res.success && res.data) {
      setRows(res.data.items);
      setTotal(res.data.total);
      setCounts(res.data.vendor_counts ?? {});
    }
  }, [page, pageSize, query]);
  const loadVendors = useCallback(async () => {
    const res = await searchVendors('', 1, 100);
    if (res.success && res.data) setVendors(res.data.items);
  }, []);

  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    void loadVendors();
  }, [loadVendors]);

  const vendorName = (id: number) => vendors.find((v) => v.id === id)?.name;
  const toggle = async (m: ModelMeta, on: boolean) => {
    const res = await setModelMetaStatus(m.id, on ? 1 : 0);
    if (res.success) setRows((list) => list.map((x) => (x.id === m.id ? { ...x, status: on ? 1 : 0 } : x)));
  };
  const remove = async (m: ModelMeta) => {
    if ((await deleteModelMeta(m.id)).success) {
      Message.success(tr('common.done'));
      void load();
    }
  };
  const edit = (m: ModelMeta) =>
    setForm({
      id: m.id,
      model_name: m.model_name,
      description: m.description,
      icon: m.icon,
      tags: m.tags,
      vendor_id: m.vendor_id,
      endpoints: m.endpoints,
      status: m.status,
      sync_official: m.sync_official,
      name_rule: m.name_rule,
    });

  const columns: TableColumnProps<ModelMeta>[] = [
    { title: 'ID', dataIndex: 'id', width: 70 },
    {
      title: tr('models.modelName'),
      dataIndex: 'model_name',
      render: (name: string, r) => (
        <Space size={4} wrap>
          {name}
          {r.name_rule !== 0 && (
            <Tag size="small" color="arcoblue">
              {tr(NAME_RULES[r.name_rule] ?? 'models.ruleExact')} {r.matched_count}
            </Tag>
          )}
        </Space>
      ),
    },
    { title: tr('models.vendor'), dataIndex: 'vendor_id', render: (id: number) => vendorName(id) ?? '-' },
    {
      title: tr('models.tags'),
      dataIndex: 'tags',
      render: (tags: string) => (
        <Space size={2} wrap>
          {tagsOf(tags).map((tag) => (
            <Tag key={tag} size="small">
              {tag}
            </Tag>
          ))}
        </Space>
      ),
    },
    {
      title: tr('models.channels'),
      render: (_v, r) => r.bound_channels.map((c) => c.name).join(', ') || '-',
    },
    { title: tr('models.groups'), render: (_v, r) => r.enable_groups.join(', ') || '-' },
    {
      title: tr('common.status'),
      dataIndex: 'status',
      render: (s: number, r) => <Switch size="small" checked={s === 1} onChange={(on) => void toggle(r, on)} />,
    },
    {
      title: tr('common.actions'),
      render: (_v, r) => (
        <Space size={4}>
          <Button size="mini" onClick={() => edit(r)}>
            {tr('common.edit')}
          </Button>
          <Popconfirm title={tr('models.deleteModelConfirm')} onOk={() => void remove(r)}>
            <Button size="mini" status="danger">
              {tr('common.delete')}
            </Button>
          </Popconfirm>
        </Space>
      ),
    },
  ];

  return (
    <Card bordered={false} title={t('page.models.title')}>
      <Tabs defaultActiveTab="models">
        <Tabs.TabPane key="models" title={tr('models.modelsTab')}>
          <Form
            layout="inline"
            style={{ marginBottom: 16 }}
            onSubmit={() => {
              setPage(1);
              setQuery((q) => ({ ...q, keyword: keyword.trim() }));
            }}
          >
            <Form.Item>
              <Input
                name="keyword"
                prefix={<IconSearch />}
                placeholder={tr('models.searchPlaceholder')}
                value={keyword}
                onChange={setKeyword}
                style={{ width: 260 }}
                allowClear
              />
            </Form.Item>
            <Form.Item>
              <Select
                allowClear
                placeholder={tr('models.allVendors')}
                style={{ width: 180 }}
                value={query.vendor || undefined}
                onChange={(v?: string) => {
                  setPage(1);
                  setQuery((q) => ({ ...q, vendor: v ?? '' }));
                }}
              >
                {vendors.map((v) => (
                  <Select.Option key={v.id} value={String(v.id)}>
                    {`${v.name} (${counts[String(v.id)] ?? 0})`}
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
          <Space style={{ marginBottom: 16 }} wrap>
            <Button type="primary" icon={<IconPlus />} onClick={() => setForm(EMPTY_MODEL)}>
              {tr('models.addModel')}
            </Button>
            <Button onClick={() => setMissingOpen(true)}>{tr('models.missingModels')}</Button>
            <Button onClick={() => setSyncOpen(true)}>{tr('models.syncUpstream')}</Button>
          </Space>
          <Table
            rowKey="id"
            loading={loading}
            columns={columns}
            data={rows}
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
        </Tabs.TabPane>
        <Tabs.TabPane key="vendors" title={tr('models.vendorsTab')}>
          <VendorsTab
            vendors={vendors}
            counts={counts}
            onChanged={() => {
              void loadVendors();
              void load();
            }}
          />
        </Tabs.TabPane>
      </Tabs>
      <ModelDrawer
        form={form}
        vendors={vendors}
        onClose={() => setForm(null)}
        onSaved={() => {
          setForm(null);
          void load();
        }}
      />
      <MissingDialog
        visible={missingOpen}
        onClose={() => setMissingOpen(false)}
        onAdd={(model) => {
          setMissingOpen(false);
          setForm({ ...EMPTY_MODEL, model_name: model });
        }}
      />
      <SyncDialog
        visible={syncOpen}
        onClose={() => setSyncOpen(false)}
        onSynced={() => {
          setSyncOpen(false);
          void load();
          void loadVendors();
        }}
      />
    </Card>
  );
}
