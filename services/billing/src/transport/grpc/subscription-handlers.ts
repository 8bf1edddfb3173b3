import type { ServiceImpl } from '@aigw/common';
import type { SubscriptionPlan, SubscriptionService as SubscriptionServiceDesc } from '@aigw/proto/billing/v1/billing';
import type { SubscriptionPayments } from '../../domain/subscription-payments.ts';
import type { PlanView, SubscriptionService } from '../../domain/subscription-service.ts';

type PlanMessage = Omit<SubscriptionPlan, '$typeName' | '$unknown'>;

const toMessage = (p: PlanView): PlanMessage => ({
  id: p.id,
  title: p.title,
  subtitle: p.subtitle,
  priceAmount: p.price_amount,
  currency: p.currency,
  durationUnit: p.duration_unit,
  durationValue: p.duration_value,
  customSeconds: p.custom_seconds,
  enabled: p.enabled,
  sortOrder: p.sort_order,
  allowBalancePay: p.allow_balance_pay,
  maxPurchasePerUser: p.max_purchase_per_user,
  dailyQuota: p.daily_quota,
  weeklyQuota: p.weekly_quota,
  monthlyQuota: p.monthly_quota,
  totalAmount: p.total_amount,
  models: p.models,
  group: p.group,
  stripePriceId: p.stripe_price_id ?? '',
  creemProductId: p.creem_product_id ?? '',
  createdAt: p.created_at,
  updatedAt: p.updated_at,
});

const fromMessage = (m: PlanMessage): Partial<PlanView> => ({
  id: m.id,
  title: m.title,
  subtitle: m.subtitle,
  price_amount: m.priceAmount,
  currency: m.currency,
  duration_unit: m.durationUnit,
  duration_value: m.durationValue,
  custom_seconds: m.customSeconds,
  enabled: m.enabled,
  sort_order: m.sortOrder,
  allow_balance_pay: m.allowBalancePay,
  max_purchase_per_user: m.maxPurchasePerUser,
  daily_quota: m.dailyQuota,
  weekly_quota: m.weeklyQuota,
  monthly_quota: m.monthlyQuota,
  total_amount: m.totalAmount,
  models: m.models,
  group: m.group,
  stripe_price_id: m.stripePriceId,
  creem_product_id: m.creemProductId,
});

/** gRPC handlers of SubscriptionService: thin, they only translate to the use cases. */
export function subscriptionHandlers(
  subs: SubscriptionService,
  payments: SubscriptionPayments,
): ServiceImpl<typeof SubscriptionServiceDesc> {
  return {
    async listPlans(req) {
      return { plans: (await subs.listPlans(req.enabledOnly)).map(toMessage) };
    },
    async savePlan(req) {
      return { plan: toMessage(await subs.savePlan(fromMessage(req.plan ?? ({} as PlanMessage)))) };
    },
    async setPlanEnabled(req) {
      return { plan: toMessage(await subs.setPlanEnabled(req.id, req.enabled)) };
    },
    async getUserSubscriptions(req) {
      return subs.ofUser(req.userId);
    },
    async setBillingPreference(req) {
      return { billingPreference: await subs.setPreference(req.userId, req.billingPreference) };
    },
    async purchaseWithBalance(req) {
      return subs.purchaseWithBalance(req);
    },
    async bindSubscription(req) {
      return {
        subscription: await subs.bind({ ...req, actorUserId: req.actor?.userId ?? 0 }),
      };
    },
    async invalidateSubscription(req) {
      await subs.invalidate(req);
      return {};
    },
    async createSubscriptionEpayOrder(req) {
      return payments.createEpayOrder(req);
    },
    async handleSubscriptionEpayNotify(req) {
      return payments.handleEpayNotify(req.params);
    },
    async createSubscriptionStripeOrder(req) {
      return payments.createStripeOrder(req);
    },
    async createSubscriptionCreemOrder(req) {
      return payments.createCreemOrder(req);
    },
  };
}
