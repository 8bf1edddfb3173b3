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
