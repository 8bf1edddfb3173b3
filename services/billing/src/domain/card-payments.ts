import { createHmac, timingSafeEqual } from 'node:crypto';

/** How old a Stripe signature's timestamp may be (Stripe's libraries default to 300 s). */
export const STRIPE_TOLERANCE_SEC = 300;

const hmacHex = (secret: string, text: string | Buffer) => createHmac('sha256', secret).update(text).digest('hex');

function sameHex(a: string, b: string): boolean {
  if (a.length !== b.length || !/^[0-9a-f]+$/i.test(a)) return false;
  return timingSafeEqual(Buffer.from(a.toLowerCase(), 'hex'), Buffer.from(b.toLowerCase(), 'hex'));
}

/** The `Stripe-Signature` header Stripe sends: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export function stripeSignatureHeader(payload: string | Buffer, secret: string, t: number): string {
  return `t=${t},v1=${hmacHex(secret, Buffer.concat([Buffer.from(`${t}.`), Buffer.from(payload)]))}`;
}

/**
 * Verifies a `Stripe-Signature` header over the raw body as Stripe's libraries do: any of the v1
 * signatures may match (several during a secret roll), and the timestamp must be within
 * `tolerance` seconds of now, so a captured request cannot be replayed later.
 */
export function verifyStripeSignature(
  payload: Buffer,
  header: string,
  secret: string,
  nowSec: number,
  tolerance = STRIPE_TOLERANCE_SEC,
): 'ok' | 'bad_header' | 'bad_signature' | 'stale' {
  if (!secret) return 'bad_signature';
  let t = Number.NaN;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't' && /^\d{1,12}$/.test(v)) t = Number(v);
    else if (k === 'v1') v1.push(v);
  }
  if (!Number.isFinite(t) || v1.length === 0) return 'bad_header';
  const expected = hmacHex(secret, Buffer.concat([Buffer.from(`${t}.`), payload]));
  if (!v1.some((s) => sameHex(s, expected))) return 'bad_signature';
  if (Math.abs(nowSec - t) > tolerance) return 'stale';
  return 'ok';
}

/** Creem's `creem-signature`: hex HMAC-SHA256 of the raw body with the webhook secret. */
export function creemSignature(payload: string | Buffer, secret: string): string {
  return hmacHex(secret, payload);
}

export function verifyCreemSignature(payload: Buffer, signature: string, secret: string): boolean {
  if (!secret || !signature) return false;
  return sameHex(signature.trim(), creemSignature(payload, secret));
}

/** Stripe's form encoding of nested parameters: `line_items[0][price]=...`, `metadata[k]=...`. */
export function stripeForm(params: Record<string, unknown>): string {
  const out = new URLSearchParams();
  const walk = (prefix: string, v: unknown) => {
    if (v === undefined || v === null) return;
    if (Array.isArray(v)) {
      for (const [i, item] of v.entries()) walk(`${prefix}[${i}]`, item);
    } else if (typeof v === 'object') {
      for (const [k, inner] of Object.entries(v as Record<string, unknown>)) walk(`${prefix}[${k}]`, inner);
    } else out.append(prefix, String(v));
  };
  for (const [k, v] of Object.entries(params)) walk(k, v);
  return out.toString();
}

/** One entry of the CreemProducts option (new-api's shape). */
export interface CreemProduct {
  productId: string;
  name: string;
  price: number;
  currency: string;
  /** Quota credited when paid. */
  quota: number;
}

/** The valid entries of CreemProducts (a product with no id or a non-positive quota is skipped). */
export function creemProducts(raw: unknown): CreemProduct[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((p) => {
    if (typeof p !== 'object' || p === null) return [];
    const o = p as Record<string, unknown>;
    const quota = Number(o.quota);
    if (typeof o.productId !== 'string' || !o.productId || !Number.isInteger(quota) || quota <= 0) return [];
    return [
      {
        productId: o.productId,
        name: typeof o.name === 'string' ? o.name : o.productId,
        price: Number(o.price) || 0,
        currency: typeof o.currency === 'string' ? o.currency : 'USD',
        quota,
      },
    ];
  });
}
