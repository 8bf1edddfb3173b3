import { randomBytes } from 'node:crypto';
import { invalid, precondition } from '@aigw/common/errors';
import type { OrderRepository } from '../data/order-repository.ts';
import { epaySign, epayType, epayVerify } from './epay.ts';
import type { OptionReader } from './ports.ts';
import type { WalletService } from './wallet-service.ts';

const nowSec = () => Math.floor(Date.now() / 1000);
const trimSlash = (s: string) => s.replace(/\/+$/, '');

/**
 * Online top-up through an Epay-compatible gateway: quotes (amount x Price x the group's top-up
 * ratio), orders with a signed payment form, and the gateway's notification, which credits an
 * order exactly once (the ledger records `credit:topup:<trade_no>` only once).
 */
export function topupService(deps: { orders: OrderRepository; wallet: WalletService; options: OptionReader }) {
  const { orders, wallet, options } = deps;

  function checkAmount(amount: number): number {
    const min = options.number('MinTopUp');
    if (!Number.isFinite(amount) || !Number.isInteger(amount)) throw invalid('充值数量必须为整数');
    if (amount < min) throw invalid(`充值数量不能小于 ${min}`);
    if (amount > 10_000_000) throw invalid('充值数量过大');
    return amount;
  }

  function payable(amount: number, group: string): number {
    const price = options.number('Price');
    const ratios = options.json<Record<string, number>>('TopupGroupRatio');
    const ratio = typeof ratios[group] === 'number' && ratios[group] > 0 ? ratios[group] : 1;
    return Math.round(amount * price * ratio * 100) / 100;
  }

  function gateway() {
    const address = trimSlash(options.text('PayAddress'));
    const pid = options.text('EpayId');
    const key = options.text('EpayKey');
    if (!address || !pid || !key) throw precondition('管理员未开启在线充值！');
    return { address, pid, key };
  }

  return {
    quote(amount: number, group: string): number {
      return payable(checkAmount(amount), group);
    },

    async createOrder(req: {
      userId: number;
      username: string;
      group: string;
      amount: number;
      paymentMethod: string;
      callbackAddress: string;
    }) {
      const { address, pid, key } = gateway();
      const amount = checkAmount(req.amount);
      const type = epayType(req.paymentMethod);
      if (!type) throw invalid('不支持的支付方式');
      const money = payable(amount, req.group);
      const tradeNo = `USR${req.userId}NO${randomBytes(6).toString('hex')}${Date.now().toString(36)}`;
      const server = trimSlash(options.text('ServerAddress'));
      const callback = trimSlash(req.callbackAddress) || trimSlash(options.text('CustomCallbackAddress')) || server;
      await orders.insert({
        _id: tradeNo,
        user_id: req.userId,
        username: req.username,
        amount,
        money,
        payment_method: req.paymentMethod,
        status: 'pending',
        created_time: nowSec(),
        complete_time: 0,
      });
      const form: Record<string, string> = {
        pid,
        type,
        out_trade_no: tradeNo,
        notify_url: `${callback}/api/user/epay/notify`,
        return_url: `${server}/log`,
        name: `TUC${amount}`,
        money: money.toFixed(2),
      };
      form.sign = epaySign(form, key);
      form.sign_type = 'MD5';
      return { tradeNo, url: `${address}/submit.php`, form };
    },

    /** Verifies a notification and credits its order once. */
    async handleNotify(params: Record<string, string>) {
      const key = options.text('EpayKey');
      const tradeNo = params.out_trade_no ?? '';
      if (!key || !epayVerify(params, key)) return { success: false, tradeNo, credited: false };
      if (params.pid !== undefined && params.pid !== options.text('EpayId')) {
        return { success: false, tradeNo, credited: false };
      }
      const order = await orders.get(tradeNo);
      if (!order) return { success: false, tradeNo, credited: false };
      if (params.trade_status !== 'TRADE_SUCCESS') return { success: true, tradeNo, credited: false };
      if (params.money !== undefined && Math.abs(Number(params.money) - order.money) > 0.005) {
        return { success: false, tradeNo, credited: false };
      }
      const quota = Math.round(order.amount * options.number('QuotaPerUnit'));
      const { replayed } = await wallet.credit({
        requestId: `topup:${tradeNo}`,
        userId: order.user_id,
        username: order.username,
        amount: quota,
        reason: 4,
        content: `使用在线充值成功，充值金额: ${order.amount}，支付金额：${order.money.toFixed(2)}`,
      });
      if (order.status !== 'success') await orders.complete(tradeNo, nowSec());
      return { success: true, tradeNo, credited: !replayed };
    },
  };
}

export type TopupService = ReturnType<typeof topupService>;
