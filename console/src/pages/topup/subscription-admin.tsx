import {
  Button,
  Card,
  Form,
  Input,
  InputNumber,
  Message,
  Modal,
  Popconfirm,
  Select,
  Space,
  Switch,
  Table,
  Tag,
} from '@arco-design/web-react';
import { useCallback, useEffect, useState } from 'react';
import {
  bindSubscription,
  getUserSubscriptions,
  invalidateSubscription,
  listAllPlans,
  type SubscriptionPlan,
  savePlan,
  setPlanEnabled,
  type UserSubscription,
} from '../../api/subscription.ts';
import { tr } from '../../locale/translate.ts';
import type { LocaleKey } from '../../locale/zh-CN.ts';
import { useStatus } from '../../store/status-context.tsx';
import { durationText, planWindows, SubscriptionTable } from './subscriptions.tsx';

const UNITS = ['year', 'month', 'day', 'hour', 'custom'] as const;
const QUOTA_FIELDS = ['daily_quota', 'weekly_quota', 'monthly_quota', 'total_amount'] as const;
const QUOTA_LABEL: Record<(typeof QUOTA_FIELDS)[number], LocaleKey> = {
  daily_quota: 'subscription.dailyQuota',
  weekly_quota: 'subscription.weeklyQuota',
  monthly_quota: 'subscription.monthlyQuota',
  total_amount: 'subscription.totalAmount',
};
const EMPTY: Partial<SubscriptionPlan> = {
  title: '',
  subtitle: '',
  price_amount: 0,
  duration_unit: 'month',
  duration_value: 1,
  custom_seconds: 0,
  enabled: true,
  allow_balance_pay: true,
  max_purchase_per_user: 0,
  sort_order: 0,
  daily_quota: 0,
  weekly_quota: 0,
  monthly_quota: 0,
  total_amount: 0,
  models: [],
  group: '',
};

/** The plan form (create or edit); the server checks every field and answers new-api's messages. */
function PlanForm({ plan, onDone }: { plan: Partial<SubscriptionPlan>; onDone: () => void }) {
  const [form] = Form.useForm();
  const [saving, setSaving] = useState(false);
  const [unit, setUnit] = useState(plan.duration_unit ?? 'month');
  const submit = async () => {
    const v = form.getFieldsValue() as Partial<SubscriptionPlan> & { models_text?: string };
    const { models_text, ...rest } = v;
    const models = (models_text ?? '')
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean);
    setSaving(true);
    const res = await savePlan({ ...rest, id: plan.id, models });
    setSaving(false);
    if (res.success) {
      Message.success(tr('subscription.saved'));
      onDone();
    }
  };
  return (
    <Form form={form} layout="vertical" initialValues={{ ...plan, models_text: (plan.models ?? []).join(',') }}>
      <Form.Item label={tr('subscription.title')} field="title">
        <Input />
      </Form.Item>
      <Form.Item label={tr('subscription.subtitle')} field="subtitle">
        <Input />
      </Form.Item>
      <Space wrap>
        <Form.Item label={tr('subscription.priceUsd')} field="price_amount">
          <InputNumber min={0} max={9999} precision={2} style={{ width: 140 }} />
        </Form.Item>
        <Form.Item label={tr('subscription.durationUnit')} field="duration_unit">
          <Select
            style={{ width: 140 }}
            onChange={setUnit}
            options={UNITS.map((u) => ({ value: u, label: tr(`subscription.unit.${u}` as LocaleKey, { n: '' }) }))}
          />
        </Form.Item>
        {unit === 'custom' ? (
          <Form.Item label={tr('subscription.customSeconds')} field="custom_seconds">
            <InputNumber min={1} precision={0} style={{ width: 140 }} />
          </Form.Item>
        ) : (
          <Form.Item label={tr('subscription.durationValue')} field="duration_value">
            <InputNumber min={1} max={1000} precision={0} style={{ width: 140 }} />
          </Form.Item>
        )}
      </Space>
      <Space wrap>
        {QUOTA_FIELDS.map((f) => (
          <Form.Item key={f} label={tr(QUOTA_LABEL[f])} field={f}>
            <InputNumber min={0} precision={0} style={{ width: 180 }} />
          </Form.Item>
        ))}
      </Space>
      <Form.Item label={tr('subscription.models')} field="models_text" extra={tr('subscription.modelsHint')}>
        <Input />
      </Form.Item>
      <Form.Item label={tr('subscription.group')} field="group" extra={tr('subscription.groupHint')}>
        <Input />
      </Form.Item>
      <Space wrap>
        <Form.Item
          label={tr('subscription.stripePriceId')}
          field="stripe_price_id"
          extra={tr('subscription.cardIdHint')}
        >
          <Input style={{ width: 260 }} placeholder="price_..." />
        </Form.Item>
        <Form.Item label={tr('subscription.creemProductId')} field="creem_product_id">
          <Input style={{ width: 260 }} placeholder="prod_..." />
        </Form.Item>
      </Space>
      <Space wrap>
        <Form.Item label={tr('subscription.maxPurchase')} field="max_purchase_per_user">
          <InputNumber min={0} precision={0} style={{ width: 140 }} />
        </Form.Item>
        <Form.Item label={tr('subscription.sortOrder')} field="sort_order">
          <InputNumber precision={0} style={{ width: 140 }} />
        </Form.Item>
        <Form.Item label={tr('subscription.allowBalancePay')} field="allow_balance_pay" triggerPropName="checked">
          <Switch />
        </Form.Item>
        <Form.Item label={tr('subscription.enabled')} field="enabled" triggerPropName="checked">
          <Switch />
        </Form.Item>
      </Space>
      <Button type="primary" loading={saving} onClick={() => void submit()}>
        {tr('subscription.save')}
      </Button>
    </Form>
  );
}

/** The admin's plans: list, create, edit, enable or disable (new-api's subscription management). */
function PlansManager() {
  const { status } = useStatus();
  const [plans, setPlans] = useState<SubscriptionPlan[]>([]);
  const [editing, setEditing] = useState<Partial<SubscriptionPlan> | null>(null);
  const load = useCallback(async () => {
    const res = await listAllPlans();
    if (res.success && res.data) setPlans(res.data.map((d) => d.plan));
  }, []);
  useEffect(() => {
    void load();
  }, [load]);
  const toggle = async (p: SubscriptionPlan) => {
    const res = await setPlanEnabled(p.id, !p.enabled);
    if (res.success) void load();
  };
  if (editing)
    return (
      <PlanForm
        plan={editing}
        onDone={() => {
          setEditing(null);
          void load();
        }}
      />
    );
  return (
    <Space direction="vertical" style={{ width: '100%' }}>
      <Button type="primary" onClick={() => setEditing(EMPTY)}>
        {tr('subscription.create')}
      </Button>
      <Table<SubscriptionPlan>
        rowKey="id"
        data={plans}
        pagination={false}
        columns={[
          { title: 'ID', dataIndex: 'id' },
          { title: tr('subscription.title'), dataIndex: 'title' },
          { title: tr('subscription.price'), dataIndex: 'price_amount', render: (v: number) => `$${v.toFixed(2)}` },
          {
            title: tr('subscription.duration'),
            dataIndex: 'duration_unit',
            render: (_: unknown, p) => durationText(p),
          },
          {
            title: tr('subscription.windows'),
            dataIndex: 'daily_quota',
            render: (_: unknown, p) => planWindows(p, status),
          },
          {
            title: tr('subscription.status'),
            dataIndex: 'enabled',
            render: (on: boolean) => (
              <Tag color={on ? 'green' : 'gray'}>{tr(on ? 'subscription.enabled' : 'subscription.disabled')}</Tag>
            ),
          },
          {
            title: tr('subscription.actions'),
            dataIndex: 'id',
            render: (_: unknown, p) => (
              <Space>
                <Button size="mini" onClick={() => setEditing(p)}>
                  {tr('subscription.edit')}
                </Button>
                <Button size="mini" onClick={() => void toggle(p)}>
                  {tr(p.enabled ? 'subscription.disable' : 'subscription.enable')}
                </Button>
              </Space>
            ),
          },
        ]}
      />
    </Space>
  );
}

/** The admin's view of one user's subscriptions: windows, add a plan, invalidate. */
function UserSubscriptions() {
  const [userId, setUserId] = useState<number | undefined>();
  const [rows, setRows] = useState<UserSubscription[] | null>(null);
  const [plans, setPlans] = useState<SubscriptionPlan[]>([]);
  const [planId, setPlanId] = useState<number | undefined>();
  useEffect(() => {
    void listAllPlans().then((res) => res.success && res.data && setPlans(res.data.map((d) => d.plan)));
  }, []);
  const load = async (id = userId) => {
    if (!id) return;
    const res = await getUserSubscriptions(id);
    if (res.success && res.data) setRows(res.data.all_subscriptions.map((s) => s.subscription));
  };
  const bind = async () => {
    if (!userId || !planId) return;
    const res = await bindSubscription(userId, planId);
    if (res.success) void load();
  };
  const invalidate = async (id: string) => {
    const res = await invalidateSubscription(id);
    if (res.success) void load();
  };
  return (
    <Space direction="vertical" style={{ width: '100%' }}>
      <Space wrap>
        <InputNumber
          placeholder={tr('subscription.userId')}
          min={1}
          precision={0}
          value={userId}
          onChange={(v) => setUserId(v || undefined)}
          style={{ width: 160 }}
        />
        <Button onClick={() => void load()}>{tr('subscription.query')}</Button>
      </Space>
      {rows && (
        <>
          <Space wrap>
            <Select
              placeholder={tr('subscription.plan')}
              style={{ width: 200 }}
              value={planId}
              onChange={setPlanId}
              options={plans.map((p) => ({ value: p.id, label: p.title }))}
            />
            <Button type="primary" disabled={!planId} onClick={() => void bind()}>
              {tr('subscription.bind')}
            </Button>
          </Space>
          <SubscriptionTable
            rows={rows}
            action={(s) =>
              s.status === 'active' ? (
                <Popconfirm title={tr('subscription.invalidateConfirm')} onOk={() => void invalidate(s.id)}>
                  <Button size="mini" status="danger">
                    {tr('subscription.invalidate')}
                  </Button>
                </Popconfirm>
              ) : null
            }
          />
        </>
      )}
    </Space>
  );
}

/** The wallet page's entry for admins: plans and users' subscriptions, each in a dialog. */
export function SubscriptionAdmin() {
  const [open, setOpen] = useState<'plans' | 'users' | null>(null);
  return (
    <Card bordered={false} title={tr('subscription.manage')}>
      <Space wrap>
        <Button onClick={() => setOpen('plans')}>{tr('subscription.plans')}</Button>
        <Button onClick={() => setOpen('users')}>{tr('subscription.userLookup')}</Button>
      </Space>
      <Modal
        title={tr(open === 'users' ? 'subscription.userLookup' : 'subscription.plans')}
        visible={open !== null}
        footer={null}
        onCancel={() => setOpen(null)}
        style={{ width: 'min(960px, 96vw)' }}
        unmountOnExit
      >
        {open === 'plans' && <PlansManager />}
        {open === 'users' && <UserSubscriptions />}
      </Modal>
    </Card>
  );
}
