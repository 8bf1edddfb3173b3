import { randomBytes } from 'node:crypto';
import type { TextOptionKey } from '@aigw/common';
import { precondition } from '@aigw/common/errors';
import { creemProducts, stripeForm, verifyCreemSignature, verifyStripeSignature } from './card-payments.ts';
import type { OptionReader } from './ports.ts';

const trimSlash = (s: string) => s.replace(/\/+$/, '');

/**
 * What a verified Stripe or Creem webhook says about one of our orders (`tradeNo`: Stripe's
 * client_reference_id, Creem's request_id). `paid` carries what the customer paid, in cents.
 */
export type CardEvent =
  | { kind: 'refused'; status: 400 | 404 }
  | { kind: 'paid'; tradeNo: string; paid: Paid }
  | { kind: 'failed' | 'expired' | 'ignored'; tradeNo: string };

/** An event that passed verification. */
export type VerifiedCardEvent = Exclude<CardEvent, { kind: 'refused' }>;

/** What an order is to be paid (from the provider's checkout, or the order's price): minor units and currency. */
export interface Quote {
  cents: number;
  currency: string;
}

/** What a paid event says was paid; `subtotal` (Stripe's `amount_subtotal`) is before discounts. */
export interface Paid extends Quote {
  subtotal?: number;
}

/** Where Stripe's and Creem's APIs are (tests point them at fakes); Creem's default follows CreemTestMode. */
export interface CardApi {
  stripeBase?: string;
  creemBase?: string;
  fetch?: typeof fetch;
}

const nowSec = () => Math.floor(Date.now() / 1000);
const cents = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : Number.NaN);

/**
 * Whether `paid` is what `quote` asked, in its currency. With `discounts` (Stripe promotion codes
 * the admin allows) a lower total is accepted when the amount before discounts is the quote's.
 */
export function paidAsQuoted(paid: Paid, quote: Quote, discounts = false): boolean {
  if (!Number.isInteger(paid.cents) || paid.currency.toUpperCase() !== quote.currency.toUpperCase()) return false;
  if (paid.cents === quote.cents) return true;
  return discounts && paid.subtotal === quote.cents && paid.cents >= 0 && paid.cents < quote.cents;
}

/** Whether `paid` is exactly `money` dollars (USD, as plans and top-ups are priced). */
export const paidExactly = (paid: Paid, money: number) =>
  paidAsQuoted(paid, { cents: Math.round(money * 100), currency: 'USD' });

/** Calls a provider's API; any failure is the user's "拉起支付失败". */
async function callProvider(http: typeof fetch, url: string, init: RequestInit): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await http(url, { ...init, signal: AbortSignal.timeout(15_000) });
  } catch {
    throw precondition('拉起支付失败');
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!res.ok || typeof parsed !== 'object' || parsed === null) throw precondition('拉起支付失败');
  return parsed as Record<string, unknown>;
}

/** What a Stripe webhook (its signature verified) says about a Checkout Session. */
export function readStripeEvent(payload: Buffer): CardEvent {
  let event: { type?: unknown; data?: { object?: Record<string, unknown> } };
  try {
    event = JSON.parse(payload.toString('utf8'));
  } catch {
    return { kind: 'refused', status: 400 };
  }
  const session = event.data?.object ?? {};
  const tradeNo = typeof session.client_reference_id === 'string' ? session.client_reference_id : '';
  const paid: Paid = {
    cents: cents(session.amount_total),
    currency: typeof session.currency === 'string' ? session.currency : '',
    ...(typeof session.amount_subtotal === 'number' ? { subtotal: cents(session.amount_subtotal) } : {}),
  };
  switch (event.type) {
    case 'checkout.session.completed':
      // Delayed methods (bank transfers) complete unpaid and succeed later (async_payment_succeeded).
      if (session.status !== 'complete' || session.payment_status !== 'paid') return { kind: 'ignored', tradeNo };
      return tradeNo ? { kind: 'paid', tradeNo, paid } : { kind: 'ignored', tradeNo };
    case 'checkout.session.async_payment_succeeded':
      return tradeNo ? { kind: 'paid', tradeNo, paid } : { kind: 'ignored', tradeNo };
    case 'checkout.session.async_payment_failed':
      return { kind: 'failed', tradeNo };
    case 'checkout.session.expired':
      return { kind: 'expired', tradeNo };
    default:
      return { kind: 'ignored', tradeNo };
  }
}

/** What a Creem webhook (its signature verified) says about a checkout. */
export function readCreemEvent(payload: Buffer): CardEvent {
  let event: { eventType?: unknown; object?: { request_id?: unknown; order?: Record<string, unknown> } };
  try {
    event = JSON.parse(payload.toString('utf8'));
  } catch {
    return { kind: 'refused', status: 400 };
  }
  if (event.eventType !== 'checkout.completed') return { kind: 'ignored', tradeNo: '' };
  const tradeNo = typeof event.object?.request_id === 'string' ? event.object.request_id : '';
  if (!tradeNo) return { kind: 'refused', status: 400 };
  const order = event.object?.order ?? {};
  if (order.status !== 'paid') return { kind: 'ignored', tradeNo };
  const currency = typeof order.currency === 'string' ? order.currency : '';
  return { kind: 'paid', tradeNo, paid: { cents: cents(order.amount), currency } };
}

/**
 * Stripe and Creem as both top-ups and plan purchases use them: whether each is on (the top-up's
 * rule), checkout creation, and the webhook's verification and reading. One place, so a plan
 * order and a top-up order are told apart only by which order the event names.
 */
export function cardGateway(deps: { options: OptionReader; api?: CardApi }) {
  const { options } = deps;
  const http = deps.api?.fetch ?? fetch;
  const stripeBase = () => trimSlash(deps.api?.stripeBase || 'https://api.stripe.com');
  const creemBase = () =>
    trimSlash(
      deps.api?.creemBase || (options.bool('CreemTestMode') ? 'https://test-api.creem.io' : 'https://api.creem.io'),
    );
  const has = (key: TextOptionKey) => options.text(key).trim() !== '';
  const stripeEnabled = () => has('StripeApiSecret') && has('StripeWebhookSecret') && has('StripePriceId');
  const creemEnabled = () =>
    has('CreemApiKey') && has('CreemWebhookSecret') && creemProducts(options.json<unknown>('CreemProducts')).length > 0;

  const call = (url: string, init: RequestInit) => callProvider(http, url, init);

  function stripeEvent(payload: Buffer, signature: string): CardEvent {
    if (!stripeEnabled()) return { kind: 'refused', status: 404 };
    const check = verifyStripeSignature(payload, signature, options.text('StripeWebhookSecret'), nowSec());
    if (check !== 'ok') return { kind: 'refused', status: 400 };
    return readStripeEvent(payload);
  }

  function creemEvent(payload: Buffer, signature: string): CardEvent {
    if (!creemEnabled()) return { kind: 'refused', status: 404 };
    if (!verifyCreemSignature(payload, signature, options.text('CreemWebhookSecret'))) {
      return { kind: 'refused', status: 400 };
    }
    return readCreemEvent(payload);
  }

  return {
    stripeEnabled,
    creemEnabled,
    tradeNoOf: (userId: number, prefix: string) =>
      `${prefix}${userId}NO${randomBytes(6).toString('hex')}${Date.now().toString(36)}`,

    /**
     * A Checkout Session (Stripe's form-encoded parameters): its URL, and what Stripe will charge
     * (the session's `amount_total` and `currency`), which its paid event must match.
     */
    async stripeCheckout(tradeNo: string, params: Record<string, unknown>): Promise<{ url: string; quote?: Quote }> {
      const secret = options.text('StripeApiSecret').trim();
      if (!secret.startsWith('sk_') && !secret.startsWith('rk_')) throw precondition('无效的Stripe API密钥');
      const session = await call(`${stripeBase()}/v1/checkout/sessions`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${secret}`,
          'Content-Type': 'application/x-www-form-urlencoded',
          'Idempotency-Key': tradeNo,
        },
        body: stripeForm({ client_reference_id: tradeNo, ...params }),
      });
      if (typeof session.url !== 'string' || !session.url) throw precondition('拉起支付失败');
      const total = cents(session.amount_total);
      const quote =
        Number.isInteger(total) && typeof session.currency === 'string' && session.currency
          ? { cents: total, currency: session.currency.toUpperCase() }
          : undefined;
      return { url: session.url, ...(quote ? { quote } : {}) };
    },

    /** A Creem checkout (JSON); its checkout_url. */
    async creemCheckout(tradeNo: string, body: Record<string, unknown>): Promise<string> {
      const checkout = await call(`${creemBase()}/v1/checkouts`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'x-api-key': options.text('CreemApiKey').trim() },
        body: JSON.stringify({ request_id: tradeNo, ...body }),
      });
      if (typeof checkout.checkout_url !== 'string' || !checkout.checkout_url) throw precondition('拉起支付失败');
      return checkout.checkout_url;
    },

    /** Verifies a webhook over its raw body and reads what it says (`refused`: answer its status). */
    event(provider: string, payload: Buffer, signature: string): CardEvent {
      if (provider === 'stripe') return stripeEvent(payload, signature);
      if (provider === 'creem') return creemEvent(payload, signature);
      return { kind: 'refused', status: 404 };
    },
  };
}

export type CardGateway = ReturnType<typeof cardGateway>;
