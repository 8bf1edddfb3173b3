/**
 * The money path under concurrency (docs/security.md ("Overspend bound")): two relay processes (two relay apps
 * with their own memory, as two pods would be) share one billing; bursts from one user against a
 * small wallet, with and without max_tokens; a wallet large enough for the pre-consume skip; and
 * settles stalled (backpressure). After each: final balance >= -bound, and wallet change = sum of
 * logged charges = the fake upstream's usage priced.
 */
import { connectMongo, connectRedis, createKafka, createLogger, createPublisher, topicName } from '@aigw/common';
import { freePort, type Stack, startStack } from '@aigw/local-stack/stack';
import { UsageEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import { eventually } from '@aigw/testkit';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import { clientsFor, createChannel, modelName, type RelayStack, routable, userWithToken } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp as createBilling } from '../../billing/src/app.ts';
import { readConfig as billingConfig } from '../../billing/src/config.ts';
import { createApp as createRelay } from '../src/app.ts';
import { readConfig as relayConfig } from '../src/config.ts';
import { SETTLE_LAG_KEY } from '../src/data/settle-lag.ts';

/** Two relays of the test, and billing started by the test (so that its settling can stop). */
const FACTOR = 10;
const MAX_LAG_MS = 2_000;
const PROMPT = 20;
const REPLY = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');
/** gpt-4o: model ratio 1.25, completion ratio 4, output limit 16,384. */
const COST = Math.round((PROMPT + 30 * 4) * 1.25);
const RESERVE_WITH_MAX = Math.ceil((500 + 50 * 4) * 1.25);
const RESERVE_WITHOUT_MAX = Math.ceil((500 + 16_384 * 4) * 1.25);
const RELAYS = 2;

const BILLING = { readConfig: billingConfig, createApp: createBilling };
const RELAY = { readConfig: relayConfig, createApp: createRelay };

interface Started {
  stop(): Promise<void>;
  stopSettling?(): Promise<void>;
  /** What the app warned about so far (messages). */
  warnings: string[];
}

async function startApp(
  svc: 'billing' | 'relay',
  stack: Stack,
  ports: { http: number; grpc: number },
  env: Record<string, string> = {},
): Promise<Started> {
  const { readConfig, createApp } = (svc === 'billing' ? BILLING : RELAY) as unknown as {
    readConfig(env: Record<string, string | undefined>): unknown;
    createApp(
      config: unknown,
      logger: ReturnType<typeof createLogger>,
    ): Promise<Omit<Started, 'warnings'> & { start(): Promise<void> }>;
  };
  const config = readConfig({
    ...stack.env,
    SERVICE_NAME: svc,
    HTTP_PORT: String(ports.http),
    GRPC_PORT: String(ports.grpc),
    METRICS_PORT: '0',
    MONGO_DB: `aigw_${svc}_${stack.id}`,
    ...env,
  });
  const logger = createLogger(svc, stack.env.LOG_LEVEL);
  // The messages it warns with (whatever the log level): the test waits for what a relay says.
  const warnings: string[] = [];
  const warn = logger.warn.bind(logger);
  logger.warn = ((...args: unknown[]) => {
    const msg = args.find((a) => typeof a === 'string');
    if (msg) warnings.push(msg as string);
    return (warn as (...a: unknown[]) => void)(...args);
  }) as typeof logger.warn;
  const app = await createApp(config, logger);
  await app.start();
  return Object.assign(app, { warnings });
}

let stack: Stack;
let s: RelayStack;
let billing: Started;
const relays: { url: string; app?: Started }[] = [];
let fake: FakeProvider;
let billingDb: Awaited<ReturnType<typeof connectMongo>>;

beforeAll(async () => {
  stack = await startStack({
    services: ['users', 'channels', 'logs'],
    env: {
      RELAY_TRUST_FACTOR: String(FACTOR),
      RELAY_SETTLE_MAX_LAG_MS: String(MAX_LAG_MS),
      RELAY_BALANCE_TTL_MS: '2000',
    },
  });
  billing = await startApp('billing', stack, stack.ports.billing);
  for (let i = 0; i < RELAYS; i++) {
    const ports = i === 0 ? stack.ports.relay : { http: await freePort(), grpc: await freePort() };
    relays.push({ url: `http://127.0.0.1:${ports.http}`, app: await startApp('relay', stack, ports) });
  }
  s = clientsFor(stack);
  fake = await startFakeProvider({
    kind: 'openai',
    key: 'up',
    reply: REPLY,
    promptTokens: PROMPT,
    delayMs: 30,
    record: false,
  });
  billingDb = await connectMongo(stack.env.MONGO_URL as string, `aigw_billing_${stack.id}`);
}, 120_000);

afterAll(async () => {
  // Side by side: each waits for its Kafka consumers to leave (about a second).
  await Promise.all(relays.map((r) => r.app?.stop()));
  await billing?.stop();
  await s?.stop();
  await fake?.close();
  await billingDb?.close();
});

async function setup(quota: number) {
  const model = modelName('gpt-4o');
  const u = await userWithToken(s, { quota });
  await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up', models: model });
  for (const r of relays) await routable(r.url, u.key, model);
  return { model, u };
}

/** One chat through one relay: its status and request id. */
async function chatOnce(url: string, key: string, model: string, maxTokens?: number) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: [{ role: 'user', content: 'hello' }],
      ...(maxTokens ? { max_tokens: maxTokens } : {}),
    }),
  });
  await res.arrayBuffer();
  return { status: res.status, rid: res.headers.get('x-aigw-request-id') ?? '' };
}

/** Sends `n` chats, alternating between the relays, at most `concurrency` at once. */
async function burst(key: string, model: string, n: number, concurrency: number, maxTokens?: number) {
  const statuses: number[] = [];
  const rids: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const res = await chatOnce(relays[i % RELAYS]?.url as string, key, model, maxTokens);
      statuses.push(res.status);
      rids.push(res.rid);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { statuses, rids, ok: statuses.filter((x) => x === 200).length };
}

/** Waits until billing settled `ok` requests of the user, then checks the accounting identity. */
async function settledAndAccounted(userId: number, quota: number, ok: number) {
  const w = await eventually(
    async () => (await s.wallet.getWallet({ userId })).wallet,
    (v) => (v?.requestCount ?? 0) >= ok,
    60_000,
  );
  expect(w?.requestCount).toBe(ok);
  const logged = await eventually(
    async () => (await s.logs.getLogStat({ filter: { userId, type: 2 } })).quota,
    (v) => v >= ok * COST,
    30_000,
  );
  const change = quota - (w?.quota ?? 0);
  // Wallet change = sum of logged charges = upstream usage priced (no holds left open).
  expect(change).toBe(logged);
  expect(logged).toBe(ok * COST);
  expect(w?.usedQuota).toBe(ok * COST);
  return w?.quota ?? 0;
}

/** The stated bound: R x (largest balance seen) / factor + sum of (cost - reserve)+ (0 here). */
const bound = (largestBalance: number) => (RELAYS * largestBalance) / FACTOR;

describe('overspend across two relays', () => {
  it('when 200 concurrent chats with max_tokens hit a wallet worth 10 reservations, then no 500s and the balance stays within the bound', async () => {
    const quota = 10 * RESERVE_WITH_MAX + 100;
    const { model, u } = await setup(quota);
    // 200 at once: with billing's hold not checking the balance all 200 were served and the wallet
    // ended at -26,150 against a bound of -1,770 (61 past the wallet reach the bound). 500 cost
    // more than twice the time on a busy machine for the same check.
    const r = await burst(u.key, model, 200, 200, 50);
    expect(r.statuses.filter((x) => x !== 200 && x !== 403)).toEqual([]);
    expect(r.ok).toBeGreaterThanOrEqual(10);
    const final = await settledAndAccounted(u.userId, quota, r.ok);
    console.log(`with max_tokens: ${r.ok} served, final balance ${final} (bound -${bound(quota)})`);
    expect(final).toBeGreaterThanOrEqual(-bound(quota));
  }, 120_000);

  it('when 200 concurrent chats without max_tokens hit a wallet worth 10 reservations, then each reserves the model output limit and the balance stays within the bound', async () => {
    const quota = 10 * RESERVE_WITHOUT_MAX + 100;
    const { model, u } = await setup(quota);
    const r = await burst(u.key, model, 200, 200);
    expect(r.statuses.filter((x) => x !== 200 && x !== 403)).toEqual([]);
    expect(r.ok).toBeGreaterThanOrEqual(10);
    const final = await settledAndAccounted(u.userId, quota, r.ok);
    console.log(`without max_tokens: ${r.ok} served, final balance ${final} (bound -${bound(quota)})`);
    expect(final).toBeGreaterThanOrEqual(-bound(quota));
  }, 120_000);

  it('when a wallet is large enough to skip pre-consume and 300 chats drain it through two relays, then the balance stays within R x balance / factor', async () => {
    // Skipping needs (unsettled + need) x factor <= balance: need = 875 here, so 8,750+.
    const quota = 40_000;
    const { model, u } = await setup(quota);
    // Both relays on the skip path before the burst (each has seen the balance, and billing's
    // settles keep up): each serves a request that billing holds nothing for.
    let warm = 0;
    for (const relay of relays) {
      await eventually(
        async () => {
          const one = await chatOnce(relay.url, u.key, model, 50);
          expect(one.status).toBe(200);
          warm += 1;
          return holdsOf([one.rid]);
        },
        (held) => held === 0,
        { timeoutMs: 30_000, intervalMs: 500, what: `relay ${relay.url} serving a request without a pre-consume` },
      );
    }
    // 300 chats (52,500 of cost) drain the 40,000, 50 in flight: with the relays not counting
    // their unsettled skips, all 300 skipped the pre-consume and the wallet ended at -13,200
    // against the bound of -8,000.
    const r = await burst(u.key, model, 300, 50, 50);
    expect(r.statuses.filter((x) => x !== 200 && x !== 403)).toEqual([]);
    const held = await holdsOf(r.rids.filter((_, i) => r.statuses[i] === 200));
    const final = await settledAndAccounted(u.userId, quota, r.ok + warm);
    console.log(
      `skip path: ${r.ok} served (${r.ok - held} without pre-consume), final balance ${final} (bound -${bound(quota)})`,
    );
    expect(final).toBeGreaterThanOrEqual(-bound(quota));
  }, 120_000);
});

/** How many of these request ids pre-consumed (billing recorded a hold for them). */
async function holdsOf(rids: string[]): Promise<number> {
  const ops = billingDb.collection('ledger_ops');
  const found = await ops.find({ _id: { $in: rids.map((r) => `hold:${r}`) } as never }).toArray();
  return found.length;
}

describe('backpressure', () => {
  it('when settling stops, then within the lag bound every request pre-consumes and overspend stays within the bound; settles resume exactly once', async () => {
    const quota = 40_000;
    const { model, u } = await setup(quota);
    await burst(u.key, model, 2, 1, 50);
    // Both settled before settling stops.
    await eventually(
      async () => (await s.wallet.getWallet({ userId: u.userId })).wallet?.requestCount ?? 0,
      (n) => n >= 2,
      { timeoutMs: 30_000, what: 'the two first requests settled' },
    );
    await billing.stopSettling?.();
    // A stopped consumer stops refreshing the lag key (5 s TTL): once it is gone nothing writes it
    // again. Relays read it every second and say each change of mind ('settles behind: ...',
    // 'settles caught up'): when the last thing each said is 'behind' and the key is gone, both
    // pre-consume every request from now on.
    const redis = await connectRedis(stack.env.REDIS_URL as string, stack.env.REDIS_KEY_PREFIX);
    try {
      await eventually(
        async () => ({
          key: await redis.exists(SETTLE_LAG_KEY),
          said: relays.map((x) => (x.app?.warnings ?? []).filter((m) => m.startsWith('settles ')).at(-1)),
        }),
        (v) => v.key === 0 && v.said.every((m) => m === 'settles behind: pre-consuming every request'),
        { timeoutMs: 30_000, intervalMs: 200, what: 'the lag key gone and both relays counting settles as behind' },
      );
    } finally {
      await redis.quit();
    }
    const r = await burst(u.key, model, 60, 5, 50);
    const served = r.rids.filter((_, i) => r.statuses[i] === 200);
    expect(r.statuses.filter((x) => x !== 200 && x !== 403)).toEqual([]);
    // Every served request reserved in billing: nothing was trusted to a stalled pipeline.
    expect(await holdsOf(served)).toBe(served.length);
    // Billing comes back (a new process on the same database): the backlog settles once.
    await billing.stop();
    billing = await startApp('billing', stack, stack.ports.billing);
    const final = await settledAndAccounted(u.userId, quota, r.ok + 2);
    console.log(`backpressure: ${r.ok} served while stalled, all pre-consumed; final balance ${final}`);
    expect(final).toBeGreaterThanOrEqual(-bound(quota));
  }, 120_000);
});

describe('estimate gap', () => {
  it('when a prompt carries an image of unknown size that the upstream counts at 2,000 tokens, then the pre-consume held at least what the settle charged (no overspend beyond the hold)', async () => {
    const IMAGE_PROMPT = 2_000;
    const costly = await startFakeProvider({ kind: 'openai', key: 'up', reply: REPLY, promptTokens: IMAGE_PROMPT });
    try {
      const model = modelName('gpt-4o');
      // Small: every request pre-consumes.
      const u = await userWithToken(s, { quota: 20_000 });
      await createChannel(s, { type: 1, baseUrl: costly.url, key: 'up', models: model });
      const url = relays[0]?.url as string;
      await routable(url, u.key, model);
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model,
          max_tokens: 50,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'what is in this picture?' },
                { type: 'image_url', image_url: { url: 'https://example.com/photo.jpg', detail: 'high' } },
              ],
            },
          ],
        }),
      });
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      const rid = res.headers.get('x-aigw-request-id') ?? '';
      const charged = Math.round((IMAGE_PROMPT + 30 * 4) * 1.25);
      const w = await eventually(
        async () => (await s.wallet.getWallet({ userId: u.userId })).wallet,
        (v) => (v?.requestCount ?? 0) >= 1,
        30_000,
      );
      expect(20_000 - (w?.quota ?? 0)).toBe(charged);
      const hold = await billingDb.collection('ledger_ops').findOne({ _id: `hold:${rid}` as never });
      // The text estimate alone (a flat 85 for the image) reserved (500 + 50 x 4) x 1.25 = 875.
      expect(hold?.amount).toBeGreaterThanOrEqual(charged);
    } finally {
      await costly.close();
    }
  });
});

describe('wallet slices (RELAY_WALLET_SLICES=1)', () => {
  /** Two relays drawing reservations from wallet slices, released 200 ms after their last request. */
  const sliced: { url: string; app: Started }[] = [];
  const SLICES = { RELAY_WALLET_SLICES: '1', RELAY_WALLET_SLICE_IDLE_MS: '200' };

  const model = modelName('gpt-4o');
  beforeAll(async () => {
    const t0 = performance.now();
    // The channel first: the relays load it as they start (no wait for its event).
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up', models: model });
    await Promise.all(
      [0, 1].map(async () => {
        const ports = { http: await freePort(), grpc: await freePort() };
        sliced.push({ url: `http://127.0.0.1:${ports.http}`, app: await startApp('relay', stack, ports, SLICES) });
      }),
    );
    console.log(`wallet slices: two relays started in ${Math.round(performance.now() - t0)} ms`);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(sliced.map((r) => r.app.stop()));
  });

  /** The user's newest ledger state (holds open, balance). */
  const ledgerHead = async (userId: number) => {
    const [e] = await billingDb
      .collection('ledger_entries')
      .find({ user_id: userId })
      .sort({ seq: -1 })
      .limit(1)
      .toArray();
    return e?.state as { quota: number; holds: Record<string, { a: number }> } | undefined;
  };

  it('when four small-wallet users send 40 chats each (8 at a time) through two slicing relays, then requests draw from slices, refusals say 用户额度不足, wallet change = logged charges exactly, no wallet below 0, and every slice is released', async () => {
    const quota = 5_000;
    const users = await Promise.all([0, 1, 2, 3].map(() => userWithToken(s, { quota })));
    for (const r of sliced) await routable(r.url, users[0]?.key as string, model);
    const t0 = performance.now();
    // Per user 40 chats, 8 at a time, alternating between the relays; the four users at once.
    const sent = await Promise.all(
      users.map(async (u) => {
        const out: { status: number; rid: string; message: string }[] = [];
        let next = 0;
        const worker = async () => {
          while (next < 40) {
            const i = next++;
            const res = await fetch(`${sliced[i % 2]?.url}/v1/chat/completions`, {
              method: 'POST',
              headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
              body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 50 }),
            });
            const body = (await res.json()) as { error?: { message?: string } };
            out.push({
              status: res.status,
              rid: res.headers.get('x-aigw-request-id') ?? '',
              message: body.error?.message ?? '',
            });
          }
        };
        await Promise.all(Array.from({ length: 8 }, worker));
        return { u, out };
      }),
    );
    const loadMs = Math.round(performance.now() - t0);
    const finals = await Promise.all(
      sent.map(async ({ u, out }) => {
        const served = out.filter((x) => x.status === 200);
        expect(out.filter((x) => x.status !== 200 && x.status !== 403).map((x) => x.message)).toEqual([]);
        expect(new Set(out.filter((x) => x.status === 403).map((x) => x.message))).toEqual(
          out.length > served.length ? new Set(['用户额度不足']) : new Set(),
        );
        // Near the end of the wallet a request whose slice billing refused pre-consumes on its own;
        // the others drew from slices (no hold of their own).
        expect(served.length).toBeGreaterThanOrEqual(10);
        const own = await holdsOf(served.map((x) => x.rid));
        expect(served.length - own).toBeGreaterThanOrEqual(4);
        // Every slice released once idle: no hold left, the balance = start - charges.
        await eventually(
          () => ledgerHead(u.userId),
          (st) => Object.keys(st?.holds ?? { x: 1 }).length === 0,
          { timeoutMs: 20_000, what: `user ${u.userId}'s slices released` },
        );
        const final = await settledAndAccounted(u.userId, quota, served.length);
        expect((await ledgerHead(u.userId))?.quota).toBe(final);
        return `user ${u.userId}: ${served.length} served (${own} with a pre-consume of their own), final ${final}`;
      }),
    );
    console.log(`wallet slices: ${finals.join('; ')}; load ${loadMs} ms, all ${Math.round(performance.now() - t0)} ms`);
    for (const f of finals) expect(Number(f.split('final ')[1])).toBeGreaterThanOrEqual(0);
  }, 120_000);

  it('when two users send chats one at a time, alternating between the slicing relays, until the first refusal, then a relay refused while the other holds the balance in a slice gets it back (revoke): less than one reservation is left, and wallet change = logged charges', async () => {
    // Slices of 875 each (half the balance, then the rest; a reservation is 875, a chat 175): each
    // relay serves one, then the balance sits in the other's slice. Each chat waits for the last
    // one's settle, so a refusal counts only what slices hold (not a per-request hold whose usage
    // is on its way). Without the revoke the second chat is refused with 1,400 left.
    const quota = 2 * RESERVE_WITH_MAX;
    const users = await Promise.all([0, 1].map(() => userWithToken(s, { quota })));
    for (const r of sliced) await routable(r.url, users[0]?.key as string, model);
    const t0 = performance.now();
    const lines = await Promise.all(
      users.map(async (u) => {
        let served = 0;
        let refused = '';
        for (let i = 0; i < 16 && !refused; i++) {
          const res = await fetch(`${sliced[i % 2]?.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 50 }),
          });
          const body = (await res.json()) as { error?: { message?: string } };
          if (res.status !== 200) {
            refused = `${res.status} ${body.error?.message ?? ''}`;
            break;
          }
          served++;
          await eventually(
            async () => (await s.wallet.getWallet({ userId: u.userId })).wallet?.requestCount ?? 0,
            (n) => n >= served,
            { timeoutMs: 10_000, intervalMs: 20, what: `user ${u.userId}'s chat ${served} settled` },
          );
        }
        expect(refused).toBe('403 用户额度不足');
        await eventually(
          () => ledgerHead(u.userId),
          (st) => Object.keys(st?.holds ?? { x: 1 }).length === 0,
          { timeoutMs: 20_000, what: `user ${u.userId}'s slices released` },
        );
        const final = await settledAndAccounted(u.userId, quota, served);
        // Refused only once the balance, every slice given back, could not cover one reservation.
        expect(final).toBeGreaterThanOrEqual(0);
        expect(final).toBeLessThan(RESERVE_WITH_MAX);
        return `user ${u.userId}: ${served} served, ${final} left`;
      }),
    );
    console.log(`wallet slices, until refused: ${lines.join('; ')}; ${Math.round(performance.now() - t0)} ms`);
  }, 60_000);

  it('when a usage event drawn from a slice and the slice release are delivered again, then nothing changes', async () => {
    const quota = 5_000;
    const u = await userWithToken(s, { quota });
    const url = sliced[0]?.url as string;
    await routable(url, u.key, model);
    const first = await chatOnce(url, u.key, model, 50);
    const second = await chatOnce(url, u.key, model, 50);
    expect([first.status, second.status]).toEqual([200, 200]);
    await eventually(
      () => ledgerHead(u.userId),
      (st) => Object.keys(st?.holds ?? { x: 1 }).length === 0,
      {
        timeoutMs: 20_000,
        what: 'the slice released',
      },
    );
    const served = await settledAndAccounted(u.userId, quota, 2);
    // The slice's release is recorded as the refund of its id.
    const released = await billingDb.collection('ledger_ops').find({ user_id: u.userId, kind: 'refund' }).toArray();
    const sliceId = String(released.find((o) => String(o._id).endsWith('-slice'))?._id ?? '').slice('close:'.length);
    expect(sliceId).toMatch(/-slice$/);
    const kafka = createKafka(stack.env.KAFKA_BROKERS?.split(',') ?? [], 'slice-replay', createLogger('t', 'silent'));
    const publisher = await createPublisher(kafka);
    try {
      const topic = topicName(TOPICS.usage);
      const key = String(u.userId);
      const base = { userId: u.userId, occurredAtMs: Date.now(), type: 2, channelId: 0 };
      // The settle of a served request, drawn from the slice, and the slice's release, again.
      const replay = { ...base, eventId: second.rid, requestId: second.rid, quota: COST, walletSlice: sliceId };
      await publisher.publish(topic, UsageEventSchema, replay, key);
      const release = { userId: u.userId, eventId: `${sliceId}:release`, requestId: sliceId, sliceRelease: true };
      await publisher.publish(topic, UsageEventSchema, { ...release, walletSlice: sliceId }, key);
      // A new charge behind them on the same partition: once it is settled, the replays were read.
      await publisher.publish(
        topic,
        UsageEventSchema,
        { ...base, eventId: 'sentinel-' + u.userId, requestId: `sentinel-${u.userId}`, quota: 7 },
        key,
      );
    } finally {
      await publisher.disconnect();
    }
    const w = await eventually(
      async () => (await s.wallet.getWallet({ userId: u.userId })).wallet,
      (v) => (v?.requestCount ?? 0) >= 3,
      { timeoutMs: 30_000, what: 'the sentinel settled' },
    );
    expect(w?.requestCount).toBe(3);
    expect(w?.quota).toBe(served - 7);
  }, 60_000);
});
