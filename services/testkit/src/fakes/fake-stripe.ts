/**
 * A fake Stripe that speaks Stripe's wire format: `POST /v1/checkout/sessions` takes the
 * form-encoded parameters Stripe's API takes (Bearer secret key) and answers a Checkout Session
 * object; `complete` pays a session and delivers `checkout.session.completed` to the webhook URL
 * signed as Stripe signs (`Stripe-Signature: t=<ts>,v1=<HMAC-SHA256 of "<t>.<body>">`).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StripeSession {
  id: string;
  object: 'checkout.session';
  client_reference_id: string | null;
  url: string | null;
  status: 'open' | 'complete' | 'expired';
  payment_status: 'unpaid' | 'paid';
  mode: string;
  amount_subtotal: number;
  amount_total: number;
  currency: string;
  customer: string | null;
  customer_email: string | null;
  success_url: string;
  cancel_url: string;
  metadata: Record<string, string>;
  livemode: false;
}

export interface Delivery {
  status: number;
  body: string;
  payload: string;
  signature: string;
}

const rid = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

export function stripeSignature(payload: string, secret: string, t: number): string {
  const v1 = createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex');
  return `t=${t},v1=${v1}`;
}

export class FakeStripe {
  readonly sessions = new Map<string, StripeSession>();
  /** The form parameters of every session creation, as Stripe received them. */
  readonly created: Record<string, string>[] = [];
  webhookUrl = '';
  private server: Server | undefined;
  baseUrl = '';

  constructor(
    readonly apiKey: string,
    readonly webhookSecret: string,
    /** What one unit of a price costs, in cents (prices not in `prices`). */
    readonly unitAmount = 800,
    /** Price id -> unit amount in cents, for prices created with their own amount. */
    readonly prices: Record<string, number> = {},
  ) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const send = (status: number, body: unknown) => {
          res.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': rid('req') });
          res.end(JSON.stringify(body));
        };
        const error = (status: number, message: string, param?: string) =>
          send(status, { error: { type: 'invalid_request_error', message, ...(param ? { param } : {}) } });
        if (req.headers.authorization !== `Bearer ${this.apiKey}`) {
          error(401, 'Invalid API Key provided');
          return;
        }
        if (req.method !== 'POST' || req.url !== '/v1/checkout/sessions') {
          error(404, `Unrecognized request URL (${req.method}: ${req.url}).`);
          return;
        }
        if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
          error(400, 'Invalid request: expected a form-encoded body');
          return;
        }
        const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
        for (const p of ['mode', 'success_url', 'line_items[0][price]', 'line_items[0][quantity]']) {
          if (!form[p]) {
            error(400, `Missing required param: ${p}.`, p);
            return;
          }
        }
        this.created.push(form);
        const id = rid('cs_test');
        const amount =
          Number(form['line_items[0][quantity]']) *
          (this.prices[form['line_items[0][price]'] as string] ?? this.unitAmount);
        const metadata = Object.fromEntries(
          Object.entries(form)
            .filter(([k]) => k.startsWith('metadata['))
            .map(([k, v]) => [k.slice(9, -1), v]),
        );
        const session: StripeSession = {
          id,
          object: 'checkout.session',
          client_reference_id: form.client_reference_id ?? null,
          url: `https://checkout.stripe.test/c/pay/${id}`,
          status: 'open',
          payment_status: 'unpaid',
          mode: form.mode as string,
          amount_subtotal: amount,
          amount_total: amount,
          currency: 'usd',
          customer: null,
          customer_email: form.customer_email ?? null,
          success_url: form.success_url as string,
          cancel_url: form.cancel_url ?? '',
          metadata,
          livemode: false,
        };
        this.sessions.set(id, session);
        send(200, session);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** The session whose client_reference_id is `tradeNo`. */
  sessionOf(tradeNo: string): StripeSession {
    const s = [...this.sessions.values()].find((x) => x.client_reference_id === tradeNo);
    if (!s) throw new Error(`no session for ${tradeNo}`);
    return s;
  }

  /** An event as Stripe builds it around a session. */
  event(type: string, session: StripeSession): string {
    return JSON.stringify({
      id: rid('evt'),
      object: 'event',
      api_version: '2024-06-20',
      created: Math.floor(Date.now() / 1000),
      data: { object: session },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    });
  }

  /** The customer pays: the session completes and Stripe delivers the signed event. */
  async complete(tradeNo: string): Promise<Delivery> {
    const session = this.sessionOf(tradeNo);
    session.status = 'complete';
    session.payment_status = 'paid';
    session.customer = rid('cus');
    return this.deliver(this.event('checkout.session.completed', session));
  }

  /** Delivers `payload` as Stripe does (signed now with the webhook secret unless told otherwise). */
  async deliver(payload: string, opts: { secret?: string; t?: number; signature?: string } = {}): Promise<Delivery> {
    const t = opts.t ?? Math.floor(Date.now() / 1000);
    const signature = opts.signature ?? stripeSignature(payload, opts.secret ?? this.webhookSecret, t);
    const res = await fetch(this.webhookUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'Stripe-Signature': signature },
      body: payload,
    });
    return { status: res.status, body: await res.text(), payload, signature };
  }
}
