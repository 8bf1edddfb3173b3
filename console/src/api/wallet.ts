import { request } from './request.ts';

/** POST /api/user/topup: redeems a code; data is the quota added. */
export const redeemCode = (key: string) => request<number>('POST', '/api/user/topup', { body: { key }, toast: false });

/** POST /api/user/amount: data is the payable money as text ("73.00"). */
export const quoteTopup = (amount: number, topUpCode = '') =>
  request<string>('POST', '/api/user/amount', { body: { amount, top_up_code: topUpCode }, toast: false });

/** POST /api/user/pay: data holds the form fields the browser posts to `url`. */
export const payTopup = (amount: number, paymentMethod: 'zfb' | 'wx', topUpCode = '') =>
  request<Record<string, string>>('POST', '/api/user/pay', {
    body: { amount, payment_method: paymentMethod, top_up_code: topUpCode },
  }) as Promise<{ success: boolean; message: string; data?: Record<string, string>; url?: string }>;

/** GET /api/user/topup/info: which payment methods the operator enabled. */
export interface TopupInfo {
  enable_online_topup: boolean;
  enable_stripe_topup: boolean;
  enable_creem_topup: boolean;
  /** The CreemProducts option as JSON text: [{productId, name, price, currency, quota}]. */
  creem_products: string;
  min_topup: number;
  stripe_min_topup: number;
  stripe_unit_price: number;
}
export const getTopupInfo = () => request<TopupInfo>('GET', '/api/user/topup/info', { toast: false });

/** POST /api/user/stripe/pay: a Stripe Checkout Session; the browser goes to pay_link. */
export const payStripe = (amount: number) =>
  request<{ pay_link: string; trade_no: string }>('POST', '/api/user/stripe/pay', {
    body: { amount, payment_method: 'stripe' },
  });

/** POST /api/user/creem/pay: a Creem checkout for one product; the browser goes to checkout_url. */
export const payCreem = (productId: string) =>
  request<{ checkout_url: string; order_id: string }>('POST', '/api/user/creem/pay', {
    body: { product_id: productId, payment_method: 'creem' },
  });

/** One top-up order (new-api's TopUp fields). */
export interface TopupRecord {
  trade_no: string;
  user_id: number;
  username: string;
  amount: number;
  money: number;
  payment_method: string;
  payment_provider: string;
  create_time: number;
  complete_time: number;
  status: 'pending' | 'success' | 'failed' | 'expired' | string;
}

/** GET /api/user/topup/self: the caller's orders, newest first. */
export const listMyTopups = (page: number, pageSize: number) =>
  request<{ items: TopupRecord[]; total: number }>('GET', '/api/user/topup/self', {
    params: { p: page, page_size: pageSize },
    toast: false,
  });

/** GET /api/user/topup (admin): every user's orders, by trade number part and status. */
export const listAllTopups = (page: number, pageSize: number, keyword = '') =>
  request<{ items: TopupRecord[]; total: number }>('GET', '/api/user/topup', {
    params: { p: page, page_size: pageSize, keyword: keyword || undefined },
    toast: false,
  });

/** POST /api/user/topup/complete (admin): marks a pending order paid; credited once. */
export const completeTopup = (tradeNo: string) =>
  request<{ credited: boolean }>('POST', '/api/user/topup/complete', { body: { trade_no: tradeNo } });
