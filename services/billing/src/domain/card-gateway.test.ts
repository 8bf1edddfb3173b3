import { describe, expect, it } from 'vitest';
import { cardGateway, paidAsQuoted, paidExactly } from './card-gateway.ts';
import { creemSignature, stripeSignatureHeader } from './card-payments.ts';
import type { OptionReader } from './ports.ts';

const values: Record<string, string> = {
  StripeApiSecret: 'sk_test_x',
  StripeWebhookSecret: 'whsec_x',
  StripePriceId: 'price_x',
  CreemApiKey: 'creem_x',
  CreemWebhookSecret: 'creem_whsec',
  CreemProducts: '[{"productId":"prod_a","price":10,"quota":100}]',
};
const options = {
  text: (k: string) => values[k] ?? '',
  bool: () => false,
  number: () => 0,
  json: (k: string) => JSON.parse(values[k] ?? 'null'),
} as unknown as OptionReader;
const card = cardGateway({ options });

const stripe = (type: string, session: Record<string, unknown>) => {
  const body = Buffer.from(JSON.stringify({ id: 'evt_1', type, data: { object: session } }));
  return card.event('stripe', body, stripeSignatureHeader(body, 'whsec_x', Math.floor(Date.now() / 1000)));
};

describe('card webhooks read once for top-ups and plans', () => {
  it('when Stripe reports a paid session, then the event names the order and what was paid', () => {
    const paid = { client_reference_id: 'T1', status: 'complete', payment_status: 'paid', amount_total: 1250 };
    expect(stripe('checkout.session.completed', { ...paid, currency: 'usd' })).toEqual({
      kind: 'paid',
      tradeNo: 'T1',
      paid: { cents: 1250, currency: 'usd' },
    });
    // Completed but not yet paid (a bank transfer): nothing to grant yet.
    expect(stripe('checkout.session.completed', { ...paid, payment_status: 'unpaid' }).kind).toBe('ignored');
    expect(stripe('checkout.session.expired', { client_reference_id: 'T1' })).toEqual({
      kind: 'expired',
      tradeNo: 'T1',
    });
  });

  it('when a signature is wrong or the provider is off, then the event is refused with 400 or 404', () => {
    const body = Buffer.from('{"type":"checkout.session.completed"}');
    expect(card.event('stripe', body, 't=1,v1=00')).toEqual({ kind: 'refused', status: 400 });
    expect(card.event('creem', body, creemSignature(body, 'wrong'))).toEqual({ kind: 'refused', status: 400 });
    expect(card.event('paypal', body, '')).toEqual({ kind: 'refused', status: 404 });
    const off = cardGateway({ options: { ...options, text: () => '' } as OptionReader });
    expect(off.event('stripe', body, '')).toEqual({ kind: 'refused', status: 404 });
  });

  it('when Creem reports a paid order, then the amount is its order amount in cents', () => {
    const body = Buffer.from(
      JSON.stringify({
        eventType: 'checkout.completed',
        object: { request_id: 'C1', order: { status: 'paid', amount: 1250, currency: 'USD' } },
      }),
    );
    expect(card.event('creem', body, creemSignature(body, 'creem_whsec'))).toEqual({
      kind: 'paid',
      tradeNo: 'C1',
      paid: { cents: 1250, currency: 'USD' },
    });
  });

  it('when an amount is compared with a price, then only the exact USD amount matches', () => {
    expect(paidExactly({ cents: 1250, currency: 'usd' }, 12.5)).toBe(true);
    expect(paidExactly({ cents: 1249, currency: 'usd' }, 12.5)).toBe(false);
    expect(paidExactly({ cents: 1250, currency: 'eur' }, 12.5)).toBe(false);
    expect(paidExactly({ cents: Number.NaN, currency: 'usd' }, 12.5)).toBe(false);
    expect(paidExactly({ cents: 1999, currency: 'USD' }, 19.99)).toBe(true);
  });

  it('when a paid amount is compared with a provider quote, then currency must match and a discount counts only when allowed', () => {
    const quote = { cents: 2400, currency: 'USD' };
    expect(paidAsQuoted({ cents: 2400, currency: 'usd', subtotal: 2400 }, quote)).toBe(true);
    expect(paidAsQuoted({ cents: 100, currency: 'usd', subtotal: 100 }, quote)).toBe(false);
    expect(paidAsQuoted({ cents: 2400, currency: 'eur' }, quote)).toBe(false);
    expect(paidAsQuoted({ cents: 1200, currency: 'usd', subtotal: 2400 }, quote)).toBe(false);
    expect(paidAsQuoted({ cents: 1200, currency: 'usd', subtotal: 2400 }, quote, true)).toBe(true);
    // A discount on another subtotal, or a total above the quote, is not the order's.
    expect(paidAsQuoted({ cents: 100, currency: 'usd', subtotal: 100 }, quote, true)).toBe(false);
    expect(paidAsQuoted({ cents: 2500, currency: 'usd', subtotal: 2400 }, quote, true)).toBe(false);
    expect(paidAsQuoted({ cents: Number.NaN, currency: 'usd' }, quote, true)).toBe(false);
  });
});
