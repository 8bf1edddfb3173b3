import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Signature of Epay-compatible payment gateways: the parameters except `sign`, `sign_type` and
 * empty values, sorted by name, joined as `k=v` with `&`, the merchant key appended, MD5 in hex.
 */
export function epaySign(params: Record<string, string>, key: string): string {
  const text = Object.keys(params)
    .filter((k) => k !== 'sign' && k !== 'sign_type' && params[k] !== '' && params[k] !== undefined)
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
  return createHash('md5')
    .update(text + key, 'utf8')
    .digest('hex');
}

/** Whether `params.sign` is the right signature (constant-time compare). */
export function epayVerify(params: Record<string, string>, key: string): boolean {
  const given = Buffer.from((params.sign ?? '').toLowerCase());
  const want = Buffer.from(epaySign(params, key));
  return given.length === want.length && timingSafeEqual(given, want);
}

/** The gateway's payment type for the console's method names. */
export function epayType(method: string): string | undefined {
  return ({ zfb: 'alipay', wx: 'wxpay', alipay: 'alipay', wxpay: 'wxpay' } as Record<string, string>)[method];
}

/**
 * The `money` of a notification in cents (NaN when absent or not a plain decimal number): what
 * the gateway says was paid, compared with the order's before anything is credited.
 */
export function epayCents(money: string | undefined): number {
  const text = (money ?? '').trim();
  return /^\d{1,12}(\.\d{1,8})?$/.test(text) ? Math.round(Number(text) * 100) : Number.NaN;
}
