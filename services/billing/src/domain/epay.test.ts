import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { epayCents, epaySign, epayVerify } from './epay.ts';

describe('epay signature', () => {
  it('when parameters are signed, then it is MD5 over sorted non-empty pairs plus the key', () => {
    const params = { pid: '1001', type: 'alipay', money: '7.30', out_trade_no: 'T1', name: '', sign_type: 'MD5' };
    const want = createHash('md5').update('money=7.30&out_trade_no=T1&pid=1001&type=alipaySECRET').digest('hex');
    expect(epaySign(params, 'SECRET')).toBe(want);
    expect(epayVerify({ ...params, sign: want }, 'SECRET')).toBe(true);
    expect(epayVerify({ ...params, sign: want }, 'OTHER')).toBe(false);
    expect(epayVerify({ ...params, money: '8.00', sign: want }, 'SECRET')).toBe(false);
  });
});

describe('epay money', () => {
  it('when a notification says what was paid, then it is read in cents; absent or not a number is NaN (never credited)', () => {
    expect(epayCents('14.60')).toBe(1460);
    expect(epayCents('14.6')).toBe(1460);
    expect(epayCents(' 3 ')).toBe(300);
    for (const bad of [undefined, '', 'abc', '-1.00', '1e3', '0x10', 'Infinity']) expect(epayCents(bad)).toBeNaN();
  });
});
