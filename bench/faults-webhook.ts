/**
 * The fault suite's card-payment check, run by the billing scenario (issue 26): Stripe webhooks
 * reach the gateway (`POST /api/stripe/webhook`, signed as Stripe signs) before, during and after
 * billing's kill -9. One order is paid before the kill; while billing is down the gateway refuses
 * both the second order's webhook and a replay of the first (not 2xx: Stripe retries); after the
 * restart both are replayed, the second twice. Each order must be credited exactly once: the wallet
 * grows by the two orders and the top-up history shows both paid, once.
 */
import { FakeStripe } from '@aigw/testkit/fakes';
import { Api, type RelayStack, setOption } from '@aigw/testkit/harness';

const API_KEY = 'sk_test_faults';
const WEBHOOK_SECRET = 'whsec_faults';
/** Units per order (one unit = QuotaPerUnit quota, 500,000 by default). */
const UNITS = 2;

type Order = { trade_no: string; status: string; amount: number };

export interface WebhookCheck {
  /** A user, two Stripe orders, the first paid (credited) before the fault. */
  prepare(): Promise<void>;
  /** While billing is down: the second order's webhook and a replay of the first, both refused. */
  whileDown(): Promise<void>;
  /** After billing's restart: both replayed (the second twice); the report lines and the verdict. */
  afterRestart(): Promise<{ pass: boolean; lines: string[] }>;
}

/** The fake Stripe API (started before the platform: billing's STRIPE_API_BASE names it). */
export async function startWebhookFake(): Promise<FakeStripe> {
  return new FakeStripe(API_KEY, WEBHOOK_SECRET).start();
}

export function webhookCheck(stripe: FakeStripe, s: RelayStack, gatewayUrl: string, username: string): WebhookCheck {
  stripe.webhookUrl = `${gatewayUrl}/api/stripe/webhook`;
  const api = new Api(gatewayUrl);
  const orders: string[] = [];
  const payloads: string[] = [];
  const during: number[] = [];
  let before = 0;
  let credit = 0;
  const balance = async () => (await api.get<{ quota: number }>('/user/self')).body.data?.quota ?? Number.NaN;
  return {
    async prepare() {
      for (const [key, value] of Object.entries({
        StripeUnitPrice: '8',
        StripeApiSecret: API_KEY,
        StripeWebhookSecret: WEBHOOK_SECRET,
        StripePriceId: 'price_faults',
      }))
        await setOption(s, key, value);
      await api.login(username, 'password123');
      // The options reach the gateway and billing through their caches.
      for (let i = 0; i < 100; i++) {
        const info = await api.get<{ enable_stripe_topup: boolean }>('/user/topup/info');
        if (info.body.data?.enable_stripe_topup) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      for (let i = 0; i < 2; i++) {
        const pay = await api.post<{ trade_no: string }>('/user/stripe/pay', {
          amount: UNITS,
          payment_method: 'stripe',
        });
        if (!pay.body.data?.trade_no) throw new Error(`stripe pay refused: ${pay.body.message}`);
        orders.push(pay.body.data.trade_no);
      }
      before = await balance();
      const first = await stripe.complete(orders[0] as string);
      if (first.status !== 200) throw new Error(`the first webhook was answered ${first.status}: ${first.body}`);
      credit = (await balance()) - before;
      payloads.push(first.payload);
      const session = stripe.sessionOf(orders[1] as string);
      session.status = 'complete';
      session.payment_status = 'paid';
      payloads.push(stripe.event('checkout.session.completed', session));
    },
    async whileDown() {
      const answers = await Promise.all([payloads[1], payloads[0]].map((p) => stripe.deliver(p as string)));
      during.push(...answers.map((a) => a.status));
    },
    async afterRestart() {
      const replays: number[] = [];
      for (const p of [payloads[1], payloads[1], payloads[0]]) {
        // Stripe retries with backoff until it gets a 2xx; the gateway may still be reconnecting.
        let status = 0;
        for (let i = 0; i < 50 && status !== 200; i++) {
          status = (await stripe.deliver(p as string)).status;
          if (status !== 200) await new Promise((r) => setTimeout(r, 200));
        }
        replays.push(status);
      }
      const after = await balance();
      const history = (await api.get<{ items: Order[] }>('/user/topup/self')).body.data?.items ?? [];
      const paid = orders.map((t) => history.filter((o) => o.trade_no === t && o.status === 'success').length);
      const pass =
        credit === UNITS * 500_000 &&
        after - before === 2 * credit &&
        paid.every((n) => n === 1) &&
        during.every((st) => st !== 200) &&
        replays.every((st) => st === 200);
      return {
        pass,
        lines: [
          `- Stripe webhooks (gateway \`/api/stripe/webhook\`): order 1 paid before the kill (+${credit}); while billing was down its replay and order 2's webhook were answered ${during.join(' and ')} (Stripe retries); after the restart order 2 delivered twice and order 1 again: ${replays.join(', ')}. Wallet change ${after - before} (expected ${2 * credit}: each order once); history: ${paid.map((n, i) => `order ${i + 1} paid ${n}x`).join(', ')}. ${pass ? 'Exactly once.' : 'FAILS.'}`,
        ],
      };
    },
  };
}
