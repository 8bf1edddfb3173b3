import { request } from './request.ts';

/** new-api's subscription plan, plus the quota windows and the model/group binding. */
export interface SubscriptionPlan {
  id: number;
  title: string;
  subtitle: string;
  price_amount: number;
  currency: string;
  duration_unit: 'year' | 'month' | 'day' | 'hour' | 'custom';
  duration_value: number;
  custom_seconds: number;
  enabled: boolean;
  sort_order: number;
  allow_balance_pay: boolean;
  max_purchase_per_user: number;
  daily_quota: number;
  weekly_quota: number;
  monthly_quota: number;
  total_amount: number;
  models: string[];
  group: string;
  /** new-api's card payment ids: the plan is sold by Stripe / Creem when set. */
  stripe_price_id?: string;
  creem_product_id?: string;
}

export interface SubscriptionWindow {
  period: 'daily' | 'weekly' | 'monthly' | 'total';
  limit: number;
  used: number;
  start_time: number;
  next_reset_time: number;
}

export interface UserSubscription {
  id: string;
  user_id: number;
  plan_id: number;
  plan_title: string;
  start_time: number;
  end_time: number;
  status: 'active' | 'expired' | 'cancelled';
  source: string;
  windows: SubscriptionWindow[];
  models: string[];
  group: string;
}

export type BillingPreference = 'subscription_first' | 'wallet_first' | 'subscription_only' | 'wallet_only';

export interface MySubscriptions {
  billing_preference: BillingPreference;
  subscriptions: { subscription: UserSubscription }[];
  all_subscriptions: { subscription: UserSubscription }[];
}

/** GET /api/subscription/plans: the enabled plans. */
export const listPlans = () =>
  request<{ plan: SubscriptionPlan }[]>('GET', '/api/subscription/plans', { toast: false });

/** GET /api/subscription/self: the preference and the caller's subscriptions with their windows. */
export const getMySubscriptions = () => request<MySubscriptions>('GET', '/api/subscription/self', { toast: false });

/** PUT /api/subscription/self/preference. */
export const setBillingPreference = (pref: BillingPreference) =>
  request<{ billing_preference: BillingPreference }>('PUT', '/api/subscription/self/preference', {
    body: { billing_preference: pref },
  });

/** POST /api/subscription/balance/pay; `requestId` makes a repeated click buy once. */
export const buyWithBalance = (planId: number, requestId: string) =>
  request('POST', '/api/subscription/balance/pay', { body: { plan_id: planId, request_id: requestId } });

/** POST /api/subscription/epay/pay: data holds the form fields the browser posts to `url`. */
export const payPlanEpay = (planId: number, paymentMethod: 'zfb' | 'wx') =>
  request<Record<string, string>>('POST', '/api/subscription/epay/pay', {
    body: { plan_id: planId, payment_method: paymentMethod },
  }) as Promise<{ success: boolean; message: string; data?: Record<string, string>; url?: string }>;

/** POST /api/subscription/stripe/pay: a Stripe Checkout Session; the browser goes to pay_link. */
export const payPlanStripe = (planId: number) =>
  request<{ pay_link: string; trade_no: string }>('POST', '/api/subscription/stripe/pay', {
    body: { plan_id: planId },
  });

/** POST /api/subscription/creem/pay: a Creem checkout; the browser goes to checkout_url. */
export const payPlanCreem = (planId: number) =>
  request<{ checkout_url: string; order_id: string }>('POST', '/api/subscription/creem/pay', {
    body: { plan_id: planId },
  });

/** GET /api/subscription/admin/plans: every plan (admin). */
export const listAllPlans = () => request<{ plan: SubscriptionPlan }[]>('GET', '/api/subscription/admin/plans');

/** POST (id 0) or PUT /api/subscription/admin/plans[/:id]. */
export const savePlan = (plan: Partial<SubscriptionPlan>) =>
  plan.id
    ? request<SubscriptionPlan>('PUT', `/api/subscription/admin/plans/${plan.id}`, { body: { plan } })
    : request<SubscriptionPlan>('POST', '/api/subscription/admin/plans', { body: { plan } });

/** PATCH /api/subscription/admin/plans/:id: enables or disables a plan. */
export const setPlanEnabled = (id: number, enabled: boolean) =>
  request('PATCH', `/api/subscription/admin/plans/${id}`, { body: { enabled } });

/** GET /api/subscription/admin/users/:id/subscriptions (admin). */
export const getUserSubscriptions = (userId: number) =>
  request<MySubscriptions>('GET', `/api/subscription/admin/users/${userId}/subscriptions`);

/** POST /api/subscription/admin/users/:id/subscriptions: gives the user a plan without payment. */
export const bindSubscription = (userId: number, planId: number) =>
  request('POST', `/api/subscription/admin/users/${userId}/subscriptions`, { body: { plan_id: planId } });

/** POST /api/subscription/admin/user_subscriptions/:id/invalidate. */
export const invalidateSubscription = (id: string) =>
  request('POST', `/api/subscription/admin/user_subscriptions/${id}/invalidate`);
