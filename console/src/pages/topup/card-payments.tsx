import { Button, Card, Form, Input, InputNumber, Message, Space, Table, Tag, Typography } from '@arco-design/web-react';
import { useEffect, useMemo, useState } from 'react';
import {
  completeTopup,
  getTopupInfo,
  listAllTopups,
  listMyTopups,
  payCreem,
  payStripe,
  type TopupInfo,
  type TopupRecord,
} from '../../api/wallet.ts';
import { usePagedList } from '../../hooks/use-paged-list.ts';
import { tr } from '../../locale/translate.ts';

interface CreemProduct {
  productId: string;
  name: string;
  price: number;
  currency: string;
  quota: number;
}

function products(info: TopupInfo | null): CreemProduct[] {
  try {
    const list = JSON.parse(info?.creem_products || '[]') as unknown;
    return Array.isArray(list) ? (list as CreemProduct[]) : [];
  } catch {
    return [];
  }
}

/** Stripe Checkout and Creem, shown only when the operator enabled them (GET /api/user/topup/info). */
export function CardPayments() {
  const [info, setInfo] = useState<TopupInfo | null>(null);
  const [amount, setAmount] = useState(1);
  const [busy, setBusy] = useState('');

  useEffect(() => {
    void getTopupInfo().then((res) => {
      if (res.success && res.data) {
        setInfo(res.data);
        setAmount(Math.max(1, res.data.stripe_min_topup || 1));
      }
    });
  }, []);

  const creem = useMemo(() => products(info), [info]);
  if (!info || (!info.enable_stripe_topup && !info.enable_creem_topup)) return null;
  const min = Math.max(1, info.stripe_min_topup || 1);

  const go = (url: string) => {
    Message.info(tr('topup.redirecting'));
    window.location.href = url;
  };
  const stripe = async () => {
    if (amount < min) {
      Message.error(tr('topup.amountMin', { min }));
      return;
    }
    setBusy('stripe');
    const res = await payStripe(amount);
    setBusy('');
    if (res.success && res.data?.pay_link) go(res.data.pay_link);
  };
  const buy = async (productId: string) => {
    setBusy(productId);
    const res = await payCreem(productId);
    setBusy('');
    if (res.success && res.data?.checkout_url) go(res.data.checkout_url);
  };

  return (
    <Card bordered={false} title={tr('topup.cardPayments')}>
      {info.enable_stripe_topup && (
        <Form layout="vertical">
          <Form.Item label={tr('topup.amountLabel', { min })}>
            <InputNumber
              value={amount}
              min={1}
              max={10000}
              precision={0}
              onChange={(v) => setAmount(Math.max(1, Math.floor(v ?? 1)))}
              style={{ width: 200 }}
            />
          </Form.Item>
          <Typography.Paragraph>
            {tr('topup.amountToPay')}
            <Typography.Text bold>{(amount * (info.stripe_unit_price || 0)).toFixed(2)}</Typography.Text>
          </Typography.Paragraph>
          <Button type="primary" loading={busy === 'stripe'} onClick={() => void stripe()}>
            {tr('topup.payWithStripe')}
          </Button>
        </Form>
      )}
      {info.enable_creem_topup && creem.length > 0 && (
        <div style={{ marginTop: 16 }}>
          <Typography.Paragraph>{tr('topup.creemProducts')}</Typography.Paragraph>
          <Space wrap>
            {creem.map((p) => (
              <Button key={p.productId} loading={busy === p.productId} onClick={() => void buy(p.productId)}>
                {tr('topup.creemProduct', { name: p.name, price: p.price, currency: p.currency })}
              </Button>
            ))}
          </Space>
        </div>
      )}
    </Card>
  );
}

const STATUS: Record<string, { key: string; color: string }> = {
  pending: { key: 'topup.statusPending', color: 'orange' },
  success: { key: 'topup.statusSuccess', color: 'green' },
  failed: { key: 'topup.statusFailed', color: 'red' },
  expired: { key: 'topup.statusExpired', color: 'gray' },
};

const when = (sec: number) => (sec > 0 ? new Date(sec * 1000).toLocaleString() : '-');

/**
 * The caller's top-up orders (GET /api/user/topup/self), newest first, once there is one; with `admin`, every
 * user's orders (GET /api/user/topup) with a search by order number and 补单 for pending ones.
 */
export function TopupHistory({ admin = false }: { admin?: boolean }) {
  // The order number searched (admin only; the user's own list has no search).
  const list = usePagedList<TopupRecord, string>({
    initialQuery: '',
    fetch: (kw, p, size) => (admin ? listAllTopups(p, size, kw) : listMyTopups(p, size)),
    deps: [admin],
  });
  const keyword = list.query;

  const complete = async (tradeNo: string) => {
    const res = await completeTopup(tradeNo);
    if (res.success) {
      Message.success(tr('topup.completedOrder'));
      void list.reload();
    }
  };

  // No orders yet (and no search): no card, the wallet page stays as it was.
  if (list.total === 0 && keyword === '') return null;

  return (
    <Card
      bordered={false}
      title={admin ? tr('topup.allOrders') : tr('topup.history')}
      extra={
        admin ? (
          <Input.Search
            allowClear
            placeholder={tr('topup.colTradeNo')}
            onSearch={(v) => list.search(v.trim())}
            style={{ width: 240 }}
          />
        ) : undefined
      }
    >
      <Table<TopupRecord>
        rowKey="trade_no"
        loading={list.loading}
        data={list.rows}
        // Ten orders a page, no size choice.
        pagination={{ current: list.page, pageSize: list.pageSize, total: list.total, onChange: list.onPageChange }}
        columns={[
          { title: tr('topup.colTradeNo'), dataIndex: 'trade_no' },
          ...(admin ? [{ title: tr('topup.colUser'), dataIndex: 'username' }] : []),
          { title: tr('topup.colMethod'), dataIndex: 'payment_method' },
          { title: tr('topup.colAmount'), dataIndex: 'amount' },
          { title: tr('topup.colMoney'), dataIndex: 'money', render: (v: number) => v.toFixed(2) },
          {
            title: tr('topup.colStatus'),
            dataIndex: 'status',
            render: (s: string) => {
              const st = STATUS[s];
              return <Tag color={st?.color}>{st ? tr(st.key as Parameters<typeof tr>[0]) : s}</Tag>;
            },
          },
          { title: tr('topup.colCreated'), dataIndex: 'create_time', render: when },
          { title: tr('topup.colCompleted'), dataIndex: 'complete_time', render: when },
          ...(admin
            ? [
                {
                  title: '',
                  dataIndex: 'trade_no',
                  render: (_: unknown, r: TopupRecord) =>
                    r.status === 'pending' ? (
                      <Button size="mini" onClick={() => void complete(r.trade_no)}>
                        {tr('topup.completeOrder')}
                      </Button>
                    ) : null,
                },
              ]
            : []),
        ]}
      />
    </Card>
  );
}
