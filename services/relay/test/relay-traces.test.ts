/**
 * One trace from a console call to the logs: the platform as separate processes, each exporting
 * spans over OTLP/HTTP to a receiver in this test. A playground chat (what the console sends,
 * session cookie and all) goes through the gateway, its proxy to the relay, the relay's gRPC calls,
 * the upstream call (a CLIENT span with gen_ai.* attributes, whose traceparent the fake provider
 * receives), the usage event in Kafka and the consumers of billing and logs: all in the trace the
 * upstream saw. Probes and background work start no traces.
 */
import { randomBytes } from 'node:crypto';
import { eventually } from '@aigw/testkit';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import { clientsFor, createChannel, modelName, type RelayStack, routable, userWithToken } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Platform, startPlatform } from '../../../bench/platform.ts';
import { KIND, type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './otlp-receiver.ts';

let otlp: OtlpReceiver;
let fake: FakeProvider;
let platform: Platform;
let s: RelayStack;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  fake = await startFakeProvider({ kind: 'openai', key: 'sk-up', reply: 'traced words arrive here', chunkDelayMs: 5 });
  platform = await startPlatform({
    tag: 'otl',
    run: randomBytes(3).toString('hex'),
    services: ['users', 'channels', 'billing', 'logs', 'relay', 'gateway'],
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      // Export within half a second (the SDK's default waits 5 s).
      OTEL_BSP_SCHEDULE_DELAY: '300',
      NODE_ENV: 'test',
    },
  });
  s = clientsFor(platform.stack);
}, 240_000);

afterAll(async () => {
  await platform?.stop();
  await fake?.close();
  await otlp?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Logs in through the gateway as the console does; returns the cookie header and the user id. */
async function login(username: string): Promise<{ cookie: string; userId: number }> {
  const res = await fetch(`${platform.stack.gatewayUrl}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password: 'password123' }),
  });
  const body = (await res.json()) as { success: boolean; data?: { id: number } };
  expect(body.success).toBe(true);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return { cookie, userId: body.data?.id ?? 0 };
}

describe('traces across the platform', () => {
  it(
    'when the console sends a playground chat, then one trace holds the gateway, gRPC, the relay, the upstream, Kafka and the logs consumer',
    { timeout: 180_000 },
    async () => {
      const model = modelName('gpt-4o-mini');
      const u = await userWithToken(s);
      await createChannel(s, { type: 1, baseUrl: fake.url, key: 'sk-up', models: model });
      await routable(platform.stack.relayUrl, u.key, model);
      const { cookie, userId } = await login(u.username);

      const res = await fetch(`${platform.stack.gatewayUrl}/pg/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, 'New-Api-User': String(userId) },
        body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hello' }] }),
      });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('traced');
      expect(text).toContain('data: [DONE]');

      // The provider saw a W3C traceparent: its trace is the console call's.
      const upstreamCall = fake.requests.find((r) => (r.body as { model?: string }).model === model);
      const traceparent = String(upstreamCall?.headers.traceparent ?? '');
      expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      const [, traceId, parentId] = traceparent.split('-');

      // Spans arrive as each service exports them (the logs consumer last).
      const inTrace = () => otlp.spans.filter((x) => x.traceId === traceId);
      const has = (service: string, kind: number, name?: RegExp) =>
        inTrace().some((x) => x.service === service && x.kind === kind && (!name || name.test(x.name)));
      await eventually(
        () =>
          has('aigw-logs', KIND.consumer, /^process .*usage/) &&
          has('aigw-billing', KIND.consumer, /^process .*usage/) &&
          has('aigw-gateway', KIND.server),
        (all) => all,
        {
          timeoutMs: 60_000,
          intervalMs: 300,
          what: 'the gateway, billing and logs spans of the trace exported',
        },
      );
      const spans = inTrace();
      const byId = new Map(spans.map((x) => [x.spanId, x]));
      const describeSpans = spans.map((x) => `${x.service} ${x.kind} ${x.name}`).join('\n');

      // The gateway: the root, a server span for the console's request, and its proxy call.
      const roots = spans.filter((x) => !x.parentSpanId);
      expect(
        roots.map((x) => `${x.service} ${x.kind}`),
        describeSpans,
      ).toEqual(['aigw-gateway 2']);
      expect(has('aigw-gateway', KIND.client), describeSpans).toBe(true);
      // The relay's server span is named after its route, not just the method.
      expect(has('aigw-relay', KIND.server, /^POST \/pg\/chat\/completions$/), describeSpans).toBe(true);
      // gRPC from the relay (user lookup, pre-consume) to the services that answer it.
      const grpcServer = spans.filter((x) => x.kind === KIND.server && x.attributes['rpc.system'] === 'grpc');
      expect(grpcServer.length, describeSpans).toBeGreaterThan(0);
      expect(
        spans.some(
          (x) => x.service === 'aigw-relay' && x.kind === KIND.client && x.attributes['rpc.system'] === 'grpc',
        ),
        describeSpans,
      ).toBe(true);

      // The upstream call: a CLIENT span named after what it did, parent of what the provider saw.
      const upstream = byId.get(parentId as string) as ReceivedSpan;
      expect(upstream, describeSpans).toBeDefined();
      expect(upstream.service).toBe('aigw-relay');
      expect(upstream.kind).toBe(KIND.client);
      expect(upstream.name).toBe(`chat ${model}`);
      expect(upstream.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': model,
        'gen_ai.response.model': model,
        // The fake reports 10 prompt tokens and one completion token per word.
        'gen_ai.usage.input_tokens': 10,
        'gen_ai.usage.output_tokens': 4,
        'gen_ai.response.finish_reasons': ['stop'],
      });
      expect(byId.get(upstream.parentSpanId)?.name).toBe('POST /pg/chat/completions');

      // Kafka: the usage event created in the request, processed by billing (settle) and logs.
      const created = spans.find((x) => x.kind === KIND.producer && /^create .*usage/.test(x.name));
      expect(created?.service, describeSpans).toBe('aigw-relay');
      for (const svc of ['aigw-logs', 'aigw-billing']) {
        const processed = spans.find((x) => x.service === svc && x.kind === KIND.consumer);
        expect(processed?.parentSpanId, `${svc}\n${describeSpans}`).toBe(created?.spanId);
      }

      // Every span hangs from the root: one connected trace.
      for (const x of spans) {
        let cur: ReceivedSpan | undefined = x;
        for (let hops = 0; cur?.parentSpanId && hops < 50; hops++) cur = byId.get(cur.parentSpanId);
        expect(cur && !cur.parentSpanId ? cur.service : `orphan ${x.service} ${x.name}`).toBe('aigw-gateway');
      }
    },
  );

  it('when services sit idle and are probed, then no probe, scrape or background poll starts a trace', async () => {
    const services = ['users', 'channels', 'billing', 'logs', 'relay', 'gateway'] as const;
    const before = otlp.spans.length;
    // Five seconds of idleness with probes is the scenario (background polls get to run).
    for (let i = 0; i < 10; i++) {
      for (const svc of services) {
        const port = platform.proc(svc).http;
        for (const path of ['/healthz', '/readyz', '/metrics']) await fetch(`http://127.0.0.1:${port}${path}`);
      }
      await sleep(500);
    }
    // Then a marker per service: a request to a path that is not a probe starts a trace. A
    // service exports its spans in the order they ended, so once its marker has arrived,
    // everything it did while idle before it has been exported too.
    const tag = `idle-marker-${randomBytes(3).toString('hex')}`;
    for (const svc of services) await fetch(`http://127.0.0.1:${platform.proc(svc).http}/${tag}`);
    const isMarker = (x: ReceivedSpan) => `${x.name} ${JSON.stringify(x.attributes)}`.includes(tag);
    await eventually(
      () => new Set(otlp.spans.filter(isMarker).map((x) => x.service)),
      (seen) => seen.size === services.length,
      { timeoutMs: 30_000, intervalMs: 200, what: 'the marker span of every service exported' },
    );
    const markerTraces = new Set(otlp.spans.filter(isMarker).map((x) => x.traceId));
    const idle = otlp.spans.slice(before).filter((x) => !markerTraces.has(x.traceId));
    const listed = idle.map((x) => `${x.service} ${x.kind} ${x.name}`).join('\n');
    expect(
      idle.filter((x) => !x.parentSpanId),
      listed,
    ).toEqual([]);
    expect(otlp.spans.some((x) => /healthz|readyz|metrics/.test(`${x.name} ${x.attributes['url.path'] ?? ''}`))).toBe(
      false,
    );
    expect(otlp.rejected).toBe(0);
  });
});
