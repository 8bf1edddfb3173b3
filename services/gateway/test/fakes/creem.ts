/**
 * A fake Creem that speaks Creem's wire format: `POST /v1/checkouts` (JSON, `x-api-key`) answers a
 * checkout with its `checkout_url`; `complete` pays it and delivers the `checkout.completed`
 * event to the webhook URL with `creem-signature` (hex HMAC-SHA256 of the raw body).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Delivery } from '@aigw/testkit/fakes';

interface Checkout {
  id: string;
  object: 'checkout';
  request_id: string;
  product: string;
  units: number;
  status: 'pending' | 'completed';
  checkout_url: string;
  metadata: Record<string, string>;
  customer_email: string;
  mode: 'test';
}

const rid = (prefix: string) => `${prefix}_${randomBytes(10).toString('hex')}`;

export const creemSignature = (payload: string, secret: string) =>
  createHmac('sha256', secret).update(payload).digest('hex');

export class FakeCreem {
  readonly checkouts = new Map<string, Checkout>();
  /** Every checkout request body, as Creem received it. */
  readonly created: Record<string, unknown>[] = [];
  webhookUrl = '';
  baseUrl = '';
  private server: Server | undefined;

  constructor(
    readonly apiKey: string,
    readonly webhookSecret: string,
    /** The products Creem knows: id -> price in cents. */
    readonly products: Record<string, number>,
  ) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const send = (status: number, body: unknown) => {
          res.writeHead(status, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        if (req.headers['x-api-key'] !== this.apiKey) {
          send(403, { status: 403, error: 'Forbidden', message: ['Invalid API key'] });
          return;
        }
        if (req.method !== 'POST' || req.url !== '/v1/checkouts') {
          send(404, { status: 404, error: 'Not Found', message: ['Not found'] });
          return;
        }
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          send(400, { status: 400, error: 'Bad Request', message: ['Invalid JSON'] });
          return;
        }
        const product = String(body.product_id ?? '');
        if (!(product in this.products)) {
          send(404, { status: 404, error: 'Not Found', message: ['Product not found'] });
          return;
        }
        this.created.push(body);
        const id = rid('ch');
        const checkout: Checkout = {
          id,
          object: 'checkout',
          request_id: String(body.request_id ?? ''),
          product,
          units: 1,
          status: 'pending',
          checkout_url: `https://checkout.creem.test/${id}`,
          metadata: (body.metadata ?? {}) as Record<string, string>,
          customer_email: String((body.customer as { email?: string } | undefined)?.email ?? ''),
          mode: 'test',
        };
        this.checkouts.set(id, checkout);
        send(200, checkout);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  checkoutOf(requestId: string): Checkout {
    const c = [...this.checkouts.values()].find((x) => x.request_id === requestId);
    if (!c) throw new Error(`no checkout for ${requestId}`);
    return c;
  }

  /** The customer pays: Creem delivers `checkout.completed` with the paid one-time order. */
  async complete(requestId: string): Promise<Delivery> {
    const c = this.checkoutOf(requestId);
    c.status = 'completed';
    const price = this.products[c.product] ?? 0;
    const now = new Date().toISOString();
    const payload = JSON.stringify({
      id: rid('evt'),
      eventType: 'checkout.completed',
      created_at: Date.now(),
      object: {
        id: c.id,
        object: 'checkout',
        request_id: c.request_id,
        order: {
          object: 'order',
          id: rid('ord'),
          customer: rid('cust'),
          product: c.product,
          amount: price,
          currency: 'USD',
          sub_total: price,
          tax_amount: 0,
          amount_due: price,
          amount_paid: price,
          status: 'paid',
          type: 'onetime',
          transaction: rid('tran'),
          created_at: now,
          updated_at: now,
          mode: 'test',
        },
        product: { id: c.product, object: 'product', price, currency: 'USD', billing_type: 'onetime', mode: 'test' },
        units: 1,
        customer: { id: rid('cust'), object: 'customer', email: c.customer_email, name: 'Test Buyer', mode: 'test' },
        status: 'completed',
        metadata: c.metadata,
        mode: 'test',
      },
    });
    return this.deliver(payload);
  }

  async deliver(payload: string, opts: { secret?: string; signature?: string } = {}): Promise<Delivery> {
    const signature = opts.signature ?? creemSignature(payload, opts.secret ?? this.webhookSecret);
    const res = await fetch(this.webhookUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'creem-signature': signature },
      body: payload,
    });
    return { status: res.status, body: await res.text(), payload, signature };
  }
}
