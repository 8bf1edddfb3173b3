import { register } from 'node:module';
import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { NodeSDK, tracing } from '@opentelemetry/sdk-node';

export { context, propagation, type Span, SpanKind, SpanStatusCode, trace };

let sdk: NodeSDK | undefined;

/** True once this process exports spans (startTelemetry ran with an exporter): the hooks below cost nothing otherwise. */
export function tracingActive(): boolean {
  return sdk !== undefined;
}

/** Paths of probes and scrapes: never traced (they were most of an idle service's traces). */
const PROBES = new Set(['/healthz', '/readyz', '/metrics', '/livez']);

/** Whether an incoming request is a probe or a scrape (query string ignored). */
export function isProbe(url: string | undefined): boolean {
  if (!url) return false;
  const q = url.indexOf('?');
  return PROBES.has(q < 0 ? url : url.slice(0, q));
}

/** Whether spans have somewhere to go: an OTLP endpoint, or an exporter chosen explicitly. */
export function tracingConfigured(env: Record<string, string | undefined> = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER;
  if (exporter) return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Starts OpenTelemetry before anything else is imported (call it first in main.ts, then import the
 * app dynamically). Instruments HTTP, Express, gRPC, kafkajs, ioredis and mongoose and exports
 * spans over OTLP/HTTP, sampled as OTEL_TRACES_SAMPLER says (the SDK reads it).
 *
 * Nothing starts when no exporter is configured: an SDK without one would still wrap every
 * request, promise hop and Kafka message in spans that go nowhere (in the relay that cost about
 * 40 % of its throughput; docs/benchmarks.md). Metrics (prom-client) do not depend on it.
 */
export async function startTelemetry(serviceName: string): Promise<void> {
  if (sdk || !tracingConfigured()) return;
  // ESM modules are only patched through import-in-the-middle's loader hook.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const [{ NodeSDK, tracing: sdkTracing }, { resourceFromAttributes }, { ATTR_SERVICE_NAME }, instr] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/semantic-conventions'),
      loadInstrumentations(),
    ]);
  const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const traceExporter =
    endpoint && !process.env.OTEL_TRACES_EXPORTER
      ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter({
          url: `${endpoint.replace(/\/$/, '')}/v1/traces`,
        })
      : undefined;
  sdk = new NodeSDK({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    ...(traceExporter ? { traceExporter } : {}),
    sampler: requestSampler(sdkTracing),
    instrumentations: instr,
  });
  sdk.start();
}

/**
 * Traces start at requests only: a span without a parent is kept when it is a server span (an
 * HTTP request or a gRPC call from outside) and dropped otherwise, so background work (snapshot
 * reloads, lag sampling, Redis polls, consumer polls) makes no root traces. Children follow their
 * parent's decision (remote parents included). OTEL_TRACES_SAMPLER=traceidratio or
 * parentbased_traceidratio with OTEL_TRACES_SAMPLER_ARG samples a share of those requests.
 */
function requestSampler(t: typeof tracing): tracing.Sampler {
  const name = process.env.OTEL_TRACES_SAMPLER ?? '';
  const ratio = Number(process.env.OTEL_TRACES_SAMPLER_ARG ?? '1');
  const requests: tracing.Sampler = name.endsWith('traceidratio')
    ? new t.TraceIdRatioBasedSampler(Number.isFinite(ratio) ? ratio : 1)
    : name.endsWith('always_off')
      ? new t.AlwaysOffSampler()
      : new t.AlwaysOnSampler();
  const root: tracing.Sampler = {
    shouldSample(ctx, traceId, spanName, kind, attributes, links) {
      if (kind !== SpanKind.SERVER) return { decision: t.SamplingDecision.NOT_RECORD };
      return requests.shouldSample(ctx, traceId, spanName, kind, attributes, links);
    },
    toString: () => `RequestsOnly{${requests.toString()}}`,
  };
  return new t.ParentBasedSampler({ root });
}

async function loadInstrumentations() {
  const [http, express, grpc, ioredis, mongoose] = await Promise.all([
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-express'),
    import('@opentelemetry/instrumentation-grpc'),
    import('@opentelemetry/instrumentation-ioredis'),
    import('@opentelemetry/instrumentation-mongoose'),
  ]);
  // Kafka is traced by kafka.ts itself (messageTraceHeaders, consumeSpans): kafkajs'
  // instrumentation parents a whole batch's sends to whichever request queued first, and makes
  // every consumer poll a root trace with its events only linked to their requests.
  return [
    new http.HttpInstrumentation({ ignoreIncomingRequestHook: (req) => isProbe(req.url) }),
    new express.ExpressInstrumentation(),
    new grpc.GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch'] }),
    new ioredis.IORedisInstrumentation({ requireParentSpan: true }),
    new mongoose.MongooseInstrumentation({ requireParentSpan: true }),
  ];
}

/** Names the active (server) span after what the request is, e.g. `POST /v1/chat/completions`. */
export function nameActiveSpan(name: string, attributes?: Attributes): void {
  if (!sdk) return;
  const span = trace.getActiveSpan();
  if (!span) return;
  span.updateName(name);
  if (attributes) span.setAttributes(attributes);
}

/**
 * Headers carrying the current trace into a Kafka message (W3C traceparent), with a PRODUCER
 * span `create <topic>` for the message (it is sent later, in a batch). Undefined when no trace.
 */
export function messageTraceHeaders(topic: string): Record<string, string> | undefined {
  if (!sdk) return undefined;
  const parent = context.active();
  if (!trace.getSpan(parent)?.spanContext().traceFlags) return undefined;
  const span = trace.getTracer('aigw-kafka').startSpan(
    `create ${topic}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'create',
        'messaging.operation.name': 'create',
        'messaging.destination.name': topic,
      },
    },
    parent,
  );
  const headers: Record<string, string> = {};
  propagation.inject(trace.setSpan(parent, span), headers);
  span.end();
  return headers;
}

/** The trace context of a Kafka message's headers (ROOT_CONTEXT when it carries none). */
function messageContext(headers: Record<string, unknown> | undefined): Context | undefined {
  const tp = headers?.traceparent;
  if (tp === undefined) return undefined;
  const carrier: Record<string, string> = { traceparent: String(tp) };
  if (headers?.tracestate !== undefined) carrier.tracestate = String(headers.tracestate);
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/**
 * A CONSUMER span `process <topic>` for each message that carries a trace (children of the
 * request that produced them), open while their batch is handled; returns the function that ends
 * them (with the error, if the batch failed). Messages without a trace get none.
 */
export function consumeSpans(
  topic: string,
  group: string,
  partition: number,
  messages: { headers?: Record<string, unknown>; offset: string }[],
): (err?: unknown) => void {
  if (!sdk) return noop;
  const spans: Span[] = [];
  const tracer = trace.getTracer('aigw-kafka');
  for (const m of messages) {
    const parent = messageContext(m.headers);
    if (!parent) continue;
    spans.push(
      tracer.startSpan(
        `process ${topic}`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            'messaging.system': 'kafka',
            'messaging.operation.type': 'process',
            'messaging.operation.name': 'process',
            'messaging.destination.name': topic,
            'messaging.consumer.group.name': group,
            'messaging.destination.partition.id': String(partition),
            'messaging.kafka.offset': Number(m.offset),
            'messaging.batch.message_count': messages.length,
          },
        },
        parent,
      ),
    );
  }
  if (spans.length === 0) return noop;
  return (err) => {
    for (const span of spans) {
      if (err) {
        span.recordException(err instanceof Error ? err : String(err));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    }
  };
}

const noop = () => undefined;

/** Flushes and stops the SDK (graceful shutdown). */
export async function stopTelemetry(): Promise<void> {
  await sdk?.shutdown().catch(() => undefined);
  sdk = undefined;
}
