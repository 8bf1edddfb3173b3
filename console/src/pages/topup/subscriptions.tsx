import { Button, Card, Message, Modal, Progress, Select, Space, Table, Tag, Typography } from '@arco-design/web-react';
import { useCallback, useEffect, useState } from 'react';
import {
  type BillingPreference,
  buyWithBalance,
  getMySubscriptions,
  listPlans,
  type MySubscriptions,
  payPlanCreem,
  payPlanEpay,
  payPlanStripe,
  type SubscriptionPlan,
  setBillingPreference,
  type UserSubscription,
} from '../../api/subscription.ts';
import { getTopupInfo, type TopupInfo } from '../../api/wallet.ts';
import { tr } from '../../locale/translate.ts';
import type { LocaleKey } from '../../locale/zh-CN.ts';
import { useStatus } from '../../store/status-context.tsx';
import { quotaPerUnitOf, renderQuota } from '../../utils/format.ts';
import { submitPaymentForm } from './index.tsx';

export const PREFERENCES: BillingPreference[] = [
  'subscription_first',
  'wallet_first',
  'subscription_only',
  'wallet_only',
];
const STATUS_COLOR: Record<string, string> = { active: 'green', expired: 'gray', cancelled: 'red' };
const when = (sec: number) => (sec > 0 ? new Date(sec * 1000).toLocaleString() : '-');

/** "1 个月", "7 天"... of a plan's term. */
export const durationText = (p: Pick<SubscriptionPlan, 'duration_unit' | 'duration_value' | 'custom_seconds'>) =>
  tr(`subscription.unit.${p.duration_unit}` as LocaleKey, {
    n: p.duration_unit === 'custom' ? p.custom_seconds : p.duration_value,
  });

/** A plan's windows as "每天 $1.00 · 每周 $5.00" (不限 without any). */
export function planWindows(p: SubscriptionPlan, status: Parameters<typeof renderQuota>[1]): string {
  const parts = (
    [
      ['daily', p.daily_quota],
      ['weekly', p.weekly_quota],
      ['monthly', p.monthly_quota],
      ['total', p.total_amount],
    ] as const
  )
    .filter(([, q]) => q > 0)
    .map(([k, q]) => `${tr(`subscription.window.${k}` as LocaleKey)} ${renderQuota(q, status)}`);
  return parts.length > 0 ? parts.join(' · ') : tr('subscription.unlimited');
}

/** The usage of each window of a subscription, as bars. */
export function WindowBars({ sub }: { sub: UserSubscription }) {
  const { status } = useStatus();
  if (sub.windows.length === 0) return <span>{tr('subscription.unlimited')}</span>;
  return (
    <Space direction="vertical" size={2}>
      {sub.windows.map((w) => (
        <div key={w.period} className="aigw-sub-window">
          <Typography.Text type="secondary">
            {tr(`subscription.window.${w.period}` as LocaleKey)} {renderQuota(w.used, status)} /{' '}
            {renderQuota(w.limit, status)}
          </Typography.Text>
          <Progress size="small" percent={Math.min(100, Math.round((w.used / w.limit) * 100))} showText={false} />
        </div>
      ))}
    </Space>
  );
}

/** The subscriptions table shared by the user's card and the admin's view of a user. */
export function SubscriptionTable({
  rows,
  action,
}: {
  rows: UserSubscription[];
  action?: (s: UserSubscription) => React.ReactNode;
}) {
  return (
    <Table<UserSubscription>
      rowKey="id"
      data={rows}
      pagination={false}
      noDataElement={tr('subscription.none')}
      columns={[
        { title: tr('subscription.plan'), dataIndex: 'plan_title' },
        {
          title: tr('subscription.status'),
          dataIndex: 'status',
          render: (s: string) => <Tag color={STATUS_COLOR[s]}>{tr(`subscription.status.${s}` as LocaleKey)}</Tag>,
        },
        { title: tr('subscription.windows'), dataIndex: 'windows', render: (_: unknown, s) => <WindowBars sub={s} /> },
        { title: tr('subscription.endTime'), dataIndex: 'end_time', render: when },
        ...(action
          ? [
              {
                title: tr('subscription.actions'),
                dataIndex: 'id',
                render: (_: unknown, s: UserSubscription) => action(s),
              },
            ]
          : []),
      ]}
    />
  );
}

/**
 * The wallet page's subscriptions (new-api's subscription plans card): the enabled plans with a
 * balance purchase, the caller's subscriptions with each window's usage, and the billing
 * preference. Nothing is shown while there is no plan and no subscription.
 */
export function SubscriptionCards({ onBought }: { onBought?: () => void }) {
  const { status } = useStatus();
  const [plans, setPlans] = useState<SubscriptionPlan[]>([]);
  const [mine, setMine] = useState<MySubscriptions | null>(null);
  const [buying, setBuying] = useState<{ plan: SubscriptionPlan; requestId: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [cards, setCards] = useState<Pick<TopupInfo, 'enable_stripe_topup' | 'enable_creem_topup'> | null>(null);

  const load = useCallback(async () => {
    const [p, m, info] = await Promise.all([listPlans(), getMySubscriptions(), getTopupInfo()]);
    if (p.success && p.data) setPlans(p.data.map((d) => d.plan));
    if (m.success && m.data) setMine(m.data);
    if (info.success && info.data) setCards(info.data);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const all = mine?.all_subscriptions.map((s) => s.subscription) ?? [];
  if (plans.length === 0 && all.length === 0) return null;

  // Card payments as for top-ups (enabled by the operator), for plans with the provider's id.
  const byStripe = (p: SubscriptionPlan) => Boolean(cards?.enable_stripe_topup && p.stripe_price_id);
  const byCreem = (p: SubscriptionPlan) => Boolean(cards?.enable_creem_topup && p.creem_product_id);
  const purchasable = (p: SubscriptionPlan) =>
    p.allow_balance_pay || Boolean(status.enable_online_topup) || byStripe(p) || byCreem(p);

  const buy = async () => {
    if (!buying) return;
    setBusy(true);
    // One request id per confirmation dialog: a second click of the same purchase buys nothing more.
    const res = await buyWithBalance(buying.plan.id, buying.requestId);
    setBusy(false);
    if (res.success) {
      Message.success(tr('subscription.bought'));
      setBuying(null);
      void load();
      onBought?.();
    }
  };

  // Epay: the gateway's form, posted by the browser; the notification starts the subscription.
  const payOnline = async (method: 'zfb' | 'wx') => {
    if (!buying) return;
    setBusy(true);
    const res = await payPlanEpay(buying.plan.id, method);
    setBusy(false);
    if (res.success && res.url && res.data) submitPaymentForm(res.url, res.data);
  };

  // Stripe or Creem: their checkout page; their webhook starts the subscription once paid.
  const payCard = async (provider: 'stripe' | 'creem') => {
    if (!buying) return;
    setBusy(true);
    const url =
      provider === 'stripe'
        ? (await payPlanStripe(buying.plan.id)).data?.pay_link
        : (await payPlanCreem(buying.plan.id)).data?.checkout_url;
    setBusy(false);
    if (url) {
      Message.info(tr('topup.redirecting'));
      window.location.href = url;
    }
  };

  const changePreference = async (pref: BillingPreference) => {
    const res = await setBillingPreference(pref);
    if (res.success && res.data)
      setMine((m) => (m ? { ...m, billing_preference: res.data?.billing_preference ?? pref } : m));
  };

  return (
    <>
      {plans.length > 0 && (
        <Card bordered={false} title={tr('subscription.plans')}>
          <Table<SubscriptionPlan>
            rowKey="id"
            data={plans}
            pagination={false}
            columns={[
              {
                title: tr('subscription.plan'),
                dataIndex: 'title',
                render: (_: unknown, p) => (
                  <Space direction="vertical" size={0}>
                    <Typography.Text bold>{p.title}</Typography.Text>
                    {p.subtitle && <Typography.Text type="secondary">{p.subtitle}</Typography.Text>}
                  </Space>
                ),
              },
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
                title: tr('subscription.models'),
                dataIndex: 'models',
                render: (m: string[], p) =>
                  [m.join(', ') || tr('subscription.any'), p.group].filter(Boolean).join(' / '),
              },
              {
                title: '',
                dataIndex: 'id',
                render: (_: unknown, p) =>
                  purchasable(p) ? (
                    <Button
                      type="primary"
                      size="small"
                      onClick={() => setBuying({ plan: p, requestId: crypto.randomUUID() })}
                    >
                      {tr('subscription.buy')}
                    </Button>
                  ) : null,
              },
            ]}
          />
        </Card>
      )}
      <Card
        bordered={false}
        title={tr('subscription.mine')}
        extra={
          <Space>
            <Typography.Text type="secondary">{tr('subscription.preference')}</Typography.Text>
            <Select
              size="small"
              style={{ width: 140 }}
              value={mine?.billing_preference ?? 'subscription_first'}
              onChange={(v: BillingPreference) => void changePreference(v)}
              options={PREFERENCES.map((p) => ({ value: p, label: tr(`subscription.pref.${p}` as LocaleKey) }))}
            />
          </Space>
        }
      >
        <SubscriptionTable rows={all} />
      </Card>
      <Modal
        title={tr('subscription.buyTitle')}
        visible={buying !== null}
        onOk={() => void buy()}
        onCancel={() => setBuying(null)}
        confirmLoading={busy}
        okText={tr('subscription.payBalance')}
        okButtonProps={{ disabled: !buying?.plan.allow_balance_pay }}
      >
        {buying?.plan.allow_balance_pay && (
          <p>
            {tr('subscription.buyConfirm', {
              price: renderQuota(Math.ceil(buying.plan.price_amount * quotaPerUnitOf(status)), status),
              title: buying.plan.title,
            })}
          </p>
        )}
        {buying && status.enable_online_topup && (
          <Space>
            <Typography.Text type="secondary">{tr('subscription.payOnline')}</Typography.Text>
            <Button size="small" disabled={busy} onClick={() => void payOnline('zfb')}>
              {tr('topup.alipay')}
            </Button>
            <Button size="small" disabled={busy} onClick={() => void payOnline('wx')}>
              {tr('topup.wechat')}
            </Button>
          </Space>
        )}
        {buying && (byStripe(buying.plan) || byCreem(buying.plan)) && (
          <Space style={{ marginTop: 8 }}>
            <Typography.Text type="secondary">{tr('topup.cardPayments')}</Typography.Text>
            {byStripe(buying.plan) && (
              <Button size="small" disabled={busy} onClick={() => void payCard('stripe')}>
                {tr('topup.payWithStripe')}
              </Button>
            )}
            {byCreem(buying.plan) && (
              <Button size="small" disabled={busy} onClick={() => void payCard('creem')}>
                {tr('subscription.payCreem')}
              </Button>
            )}
          </Space>
        )}
      </Modal>
    </>
  );
}
