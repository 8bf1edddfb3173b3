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
        else Message.error(`错误：${res.message}`);
      });
    }, 300);
    return () => clearTimeout(timer);
  }, [amount, min, status.enable_online_topup]);

  const redeem = async () => {
    if (code.trim() === '') {
      Message.error('请输入兑换码！');
      return;
    }
    setRedeeming(true);
    const res = await redeemCode(code.trim());
    setRedeeming(false);
    if (res.success) {
      Message.success(`兑换成功！已为您充值 ${renderQuota(res.data ?? 0, status, 6)}`);
      setCode('');
      void refresh();
    } else Message.error(res.message || '请求失败');
  };

  const startPay = (method: 'zfb' | 'wx') => {
    if (!status.enable_online_topup) {
      Message.error('管理员未开启在线充值！');
      return;
    }
    if (amount < min) {
      Message.error(`充值数量不能小于${min}`);
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
        <Statistic title="当前余额" value={renderQuota(quota, status, 6)} className="aigw-wallet-balance" />
      </Card>
      <Card bordered={false} title="兑换码充值">
        <Form layout="vertical" onSubmit={() => void redeem()}>
          <Form.Item>
            <Input name="redemption-code" value={code} onChange={setCode} placeholder="请输入兑换码" allowClear />
          </Form.Item>
          <Space>
            {status.top_up_link ? (
              <Button onClick={() => window.open(status.top_up_link, '_blank', 'noopener')}>获取兑换码</Button>
            ) : (
              <Button onClick={() => Message.error('超级管理员未设置充值链接！')}>获取兑换码</Button>
            )}
            <Button type="primary" htmlType="submit" loading={redeeming}>
              兑换
            </Button>
          </Space>
        </Form>
      </Card>
      <Card bordered={false} title="在线充值">
        <Form layout="vertical">
          <Form.Item label={`充值数量（最低 ${min}）`}>
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
              实付金额：<Typography.Text bold>{payable} 元</Typography.Text>
            </Typography.Paragraph>
          )}
          <Space>
            <Button type="primary" onClick={() => startPay('zfb')}>
              支付宝
            </Button>
            <Button type="primary" status="success" onClick={() => startPay('wx')}>
              微信
            </Button>
          </Space>
        </Form>
        <Divider />
        <Typography.Text type="secondary">支付完成后余额会自动到账，可在日志中查看充值记录。</Typography.Text>
      </Card>
      <Modal
        title="充值确认"
        visible={confirm !== null}
        onOk={() => void pay()}
        onCancel={() => setConfirm(null)}
        confirmLoading={paying}
        okText="确认支付"
      >
        <p>充值数量：{amount}</p>
        <p>实付金额：{payable || '-'} 元</p>
        <p>是否确认充值？</p>
      </Modal>
    </div>
  );
}
