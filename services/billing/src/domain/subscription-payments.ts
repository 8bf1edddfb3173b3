import { randomBytes } from 'node:crypto';
import { invalid, precondition } from '@aigw/common/errors';
import type { SubscriptionOrderRepository } from '../data/subscription-order-repository.ts';
import { epaySign, epayType, epayVerify } from './epay.ts';
import type { OptionReader } from './ports.ts';
import type { SubscriptionService } from './subscription-service.ts';

const trimSlash = (s: string) => s.replace(/\/+$/, '');
const nowSec = () => Math.floor(Date.now() / 1000);

/**
 * Plans paid through Epay (new-api's /api/subscription/epay/pay and /notify): an order per
 * purchase at the plan's price, the gateway's signed form, and a notification that starts the
 * subscription once however often it is replayed (the ledger records the trade number once).
 */
export function subscriptionPayments(deps: {
  orders: SubscriptionOrderRepository;
  subscriptions: SubscriptionService;
  options: OptionReader;
}) {
  const { orders, subscriptions, options } = deps;

  return {
    async createEpayOrder(req: { userId: number; username: string; planId: number; paymentMethod: string }) {
      const plan = await subscriptions.planOf(req.planId);
      if (!plan.enabled) throw precondition('套餐未启用');
      if (plan.price_amount < 0.01) throw precondition('套餐金额过低');
      const type = epayType(req.paymentMethod);
      if (!type) throw invalid('支付方式不存在');
      if (plan.max_purchase_per_user > 0) {
        if ((await subscriptions.countOf(req.userId, plan._id)) >= plan.max_purchase_per_user)
          throw precondition('已达到该套餐购买上限');
      }
      const address = trimSlash(options.text('PayAddress'));
      const pid = options.text('EpayId');
      const key = options.text('EpayKey');
      if (!address || !pid || !key) throw precondition('当前管理员未配置支付信息');
      const tradeNo = `SUBUSR${req.userId}NO${randomBytes(6).toString('hex')}${Date.now().toString(36)}`;
      const server = trimSlash(options.text('ServerAddress'));
      const callback = trimSlash(options.text('CustomCallbackAddress')) || server;
      await orders.insert({
        _id: tradeNo,
        user_id: req.userId,
        username: req.username,
        plan_id: plan._id,
        money: plan.price_amount,
        payment_method: req.paymentMethod,
        payment_provider: 'epay',
        status: 'pending',
        create_time: nowSec(),
        complete_time: 0,
      });
      const form: Record<string, string> = {
        pid,
        type,
        out_trade_no: tradeNo,
        notify_url: `${callback}/api/subscription/epay/notify`,
        return_url: `${server}/topup`,
        name: `SUB:${plan.title}`,
        money: plan.price_amount.toFixed(2),
      };
      form.sign = epaySign(form, key);
      form.sign_type = 'MD5';
      return { tradeNo, url: `${address}/submit.php`, form };
    },

    /** Verifies Epay's notification and starts the order's subscription once. */
    async handleEpayNotify(params: Record<string, string>) {
      const key = options.text('EpayKey');
      const tradeNo = params.out_trade_no ?? '';
      const refused = { success: false, tradeNo, activated: false };
      if (!key || !epayVerify(params, key)) return refused;
      if (params.pid !== undefined && params.pid !== options.text('EpayId')) return refused;
      const order = await orders.get(tradeNo);
      if (!order || order.payment_provider !== 'epay') return refused;
      if (params.trade_status !== 'TRADE_SUCCESS') return { success: true, tradeNo, activated: false };
      if (params.money !== undefined && Math.abs(Number(params.money) - order.money) > 0.005) return refused;
      const activated = await subscriptions.activateOrder({
        userId: order.user_id,
        username: order.username,
        planId: order.plan_id,
        tradeNo,
        money: order.money,
      });
      if (order.status !== 'success') await orders.complete(tradeNo, nowSec());
      return { success: true, tradeNo, activated };
    },
  };
}

export type SubscriptionPayments = ReturnType<typeof subscriptionPayments>;
