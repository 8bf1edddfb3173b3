import {
  Button,
  Card,
  Divider,
  Form,
  Input,
  InputNumber,
  Message,
  Modal,
  Space,
  Statistic,
  Typography,
} from '@arco-design/web-react';
import { useCallback, useEffect, useState } from 'react';
import { getSelf } from '../../api/account.ts';
import { payTopup, quoteTopup, redeemCode } from '../../api/wallet.ts';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';
import { useUser } from '../../store/user-context.tsx';
import { renderQuota } from '../../utils/format.ts';
import './style/index.css';
import { tr } from '../../locale/translate.ts';
import { CardPayments, TopupHistory } from './card-payments.tsx';
import { SubscriptionAdmin } from './subscription-admin.tsx';
import { SubscriptionCards } from './subscriptions.tsx';

/** Posts the payment form to the gateway's URL in a hidden form (the browser leaves for it). */
export function submitPaymentForm(url: string, fields: Record<string, string>): void {
  const form = document.createElement('form');
  form.method = 'POST';
  form.action = url;
  form.style.display = 'none';
  for (const [name, value] of Object.entries(fields)) {
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = value;
    form.appendChild(input);
  }
  document.body.appendChild(form);
  form.submit();
  form.remove();
}

/** 钱包: balance, redeem a code, online top-up with a confirmation of the payable sum. */
export default function TopupPage() {
  const t = useT();
  const { status } = useStatus();
  const { user, setUser } = useUser();
  const [quota, setQuota] = useState<number>(user?.quota ?? 0);
  const [code, setCode] = useState('');
  const [redeeming, setRedeeming] = useState(false);
  const min = status.min_topup && status.min_topup > 0 ? status.min_topup : 1;
  const [amount, setAmount] = useState<number>(min);
  const [payable, setPayable] = useState('');
  const [confirm, setConfirm] = useState<'zfb' | 'wx' | null>(null);
  const [paying, setPaying] = useState(false);

  const refresh = useCallback(async () => {
    const res = await getSelf();
    if (res.success && res.data) {
      setQuota(res.data.quota ?? 0);
      setUser(res.data);
    }
  }, [setUser]);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  useEffect(() => {
    if (!status.enable_online_topup || amount < min) {
      setPayable('');
      return;
    }
    const timer = setTimeout(() => {
      void quoteTopup(amount).then((res) => {
        if (res.success) setPayable(res.data ?? '');
        else Message.error(`${tr('api.error')}${res.message}`);
      });
    }, 300);
    return () => clearTimeout(timer);
  }, [amount, min, status.enable_online_topup]);

  const redeem = async () => {
    if (code.trim() === '') {
      Message.error(tr('topup.pleaseEnterARedemptionCode'));
      return;
    }
    setRedeeming(true);
    const res = await redeemCode(code.trim());
    setRedeeming(false);
    if (res.success) {
      Message.success(tr('topup.redeemed', { quota: renderQuota(res.data ?? 0, status, 6) }));
      setCode('');
      void refresh();
    } else Message.error(res.message || tr('topup.requestFailed'));
  };

  const startPay = (method: 'zfb' | 'wx') => {
    if (!status.enable_online_topup) {
      Message.error(tr('topup.theAdministratorHasNotEnabled'));
      return;
    }
    if (amount < min) {
      Message.error(tr('topup.amountMin', { min }));
      return;
    }
    setConfirm(method);
  };

  const pay = async () => {
    if (!confirm) return;
    setPaying(true);
    const res = await payTopup(amount, confirm);
    setPaying(false);
    setConfirm(null);
    if (res.success && res.url && res.data) submitPaymentForm(res.url, res.data);
  };

  return (
    <div className="aigw-wallet">
      <Card bordered={false} title={t('menu.topup')}>
        <Statistic title={tr('common.balance')} value={renderQuota(quota, status, 6)} className="aigw-wallet-balance" />
      </Card>
      <Card bordered={false} title={tr('topup.redeemACode')}>
        <Form layout="vertical" onSubmit={() => void redeem()}>
          <Form.Item>
            <Input
              name="redemption-code"
              value={code}
              onChange={setCode}
              placeholder={tr('topup.enterARedemptionCode')}
              allowClear
            />
          </Form.Item>
          <Space>
            {status.top_up_link ? (
              <Button onClick={() => window.open(status.top_up_link, '_blank', 'noopener')}>
                {tr('topup.getARedemptionCode')}
              </Button>
            ) : (
              // Spec 02 section 9: the get-code button only with a top-up link, otherwise this notice.
              <Typography.Text type="secondary" className="aigw-topup-no-link">
                {tr('topup.theRootUserHasNot')}
              </Typography.Text>
            )}
            <Button type="primary" htmlType="submit" loading={redeeming}>
              {tr('topup.redeem')}
            </Button>
          </Space>
        </Form>
      </Card>
      <Card bordered={false} title={tr('topup.onlineTopUp')}>
        <Form layout="vertical">
          <Form.Item label={tr('topup.amountLabel', { min })}>
            <InputNumber
              value={amount}
              min={1}
              precision={0}
              onChange={(v) => setAmount(Math.max(1, Math.floor(v ?? 1)))}
              style={{ width: 200 }}
            />
          </Form.Item>
          {payable && (
            <Typography.Paragraph>
              {tr('topup.amountToPay')}
              <Typography.Text bold>{tr('topup.yuan', { n: payable })}</Typography.Text>
            </Typography.Paragraph>
          )}
          <Space>
            <Button type="primary" onClick={() => startPay('zfb')}>
              {tr('topup.alipay')}
            </Button>
            <Button type="primary" status="success" onClick={() => startPay('wx')}>
              {tr('topup.wechat')}
            </Button>
          </Space>
        </Form>
        <Divider />
        <Typography.Text type="secondary">{tr('topup.theBalanceIsCreditedOnce')}</Typography.Text>
      </Card>
      <CardPayments />
      <SubscriptionCards onBought={() => void refresh()} />
      {(user?.role ?? 0) >= 10 && <SubscriptionAdmin />}
      <TopupHistory />
      {(user?.role ?? 0) >= 10 && <TopupHistory admin />}
      <Modal
        title={tr('topup.confirmTopUp')}
        visible={confirm !== null}
        onOk={() => void pay()}
        onCancel={() => setConfirm(null)}
        confirmLoading={paying}
        okText={tr('topup.pay')}
      >
        <p>{tr('topup.amountColon', { n: amount })}</p>
        <p>{tr('topup.payableColon', { n: payable || '-' })}</p>
        <p>{tr('topup.confirmTheTopUp')}</p>
      </Modal>
    </div>
  );
}
