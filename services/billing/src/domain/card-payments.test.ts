import { describe, expect, it } from 'vitest';
import {
  creemProducts,
  creemSignature,
  stripeForm,
  stripeSignatureHeader,
  verifyCreemSignature,
  verifyStripeSignature,
} from './card-payments.ts';

const SECRET = 'whsec_test';
const body = Buffer.from('{"id":"evt_1","type":"checkout.session.completed"}');

describe('Stripe-Signature', () => {
  const now = 1_800_000_000;
  it('when the body is signed with the secret at t, then it verifies; a changed body does not', () => {
    const header = stripeSignatureHeader(body, SECRET, now);
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(verifyStripeSignature(body, header, SECRET, now)).toBe('ok');
    expect(verifyStripeSignature(Buffer.from(`${body} `), header, SECRET, now)).toBe('bad_signature');
    expect(verifyStripeSignature(body, header, 'whsec_other', now)).toBe('bad_signature');
  });

  it('when several v1 signatures are sent, then any one matching is enough', () => {
    const good = stripeSignatureHeader(body, SECRET, now).split(',')[1];
    expect(verifyStripeSignature(body, `t=${now},v1=${'0'.repeat(64)},${good},v0=abc`, SECRET, now)).toBe('ok');
  });

  it('when the timestamp is older than 300 s, then it is stale; within, it passes', () => {
    const header = stripeSignatureHeader(body, SECRET, now - 301);
    expect(verifyStripeSignature(body, header, SECRET, now)).toBe('stale');
    expect(verifyStripeSignature(body, stripeSignatureHeader(body, SECRET, now - 299), SECRET, now)).toBe('ok');
  });

  it('when the header is malformed or the secret is unset, then it is refused', () => {
    expect(verifyStripeSignature(body, '', SECRET, now)).toBe('bad_header');
    expect(verifyStripeSignature(body, `t=${now}`, SECRET, now)).toBe('bad_header');
    expect(verifyStripeSignature(body, 'v1=abc', SECRET, now)).toBe('bad_header');
    expect(verifyStripeSignature(body, stripeSignatureHeader(body, '', now), '', now)).toBe('bad_signature');
  });
});

describe('creem-signature', () => {
  it('is the hex HMAC-SHA256 of the raw body', () => {
    const sig = creemSignature(body, SECRET);
    expect(verifyCreemSignature(body, sig, SECRET)).toBe(true);
    expect(verifyCreemSignature(body, sig.toUpperCase(), SECRET)).toBe(true);
    expect(verifyCreemSignature(body, sig, 'other')).toBe(false);
    expect(verifyCreemSignature(body, 'zz', SECRET)).toBe(false);
    expect(verifyCreemSignature(body, sig, '')).toBe(false);
  });
});

describe('Stripe form encoding', () => {
  it('encodes nested line items and metadata with brackets', () => {
    const form = new URLSearchParams(
      stripeForm({ mode: 'payment', line_items: [{ price: 'price_1', quantity: 3 }], metadata: { trade_no: 'T1' } }),
    );
    expect(Object.fromEntries(form)).toEqual({
      mode: 'payment',
      'line_items[0][price]': 'price_1',
      'line_items[0][quantity]': '3',
      'metadata[trade_no]': 'T1',
    });
  });
});

describe('CreemProducts', () => {
  it('keeps entries with an id and a positive whole quota', () => {
    expect(
      creemProducts([
        { productId: 'prod_1', name: 'Ten', price: 10, currency: 'USD', quota: 5000000 },
        { productId: '', quota: 1 },
        { productId: 'prod_2', quota: -1 },
        'junk',
      ]),
    ).toEqual([{ productId: 'prod_1', name: 'Ten', price: 10, currency: 'USD', quota: 5000000 }]);
    expect(creemProducts({})).toEqual([]);
  });
});
