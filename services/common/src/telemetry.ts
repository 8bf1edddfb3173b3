import { register } from 'node:module';
import type { NodeSDK } from '@opentelemetry/sdk-node';

let sdk: NodeSDK | undefined;

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
  const [{ NodeSDK }, { resourceFromAttributes }, { ATTR_SERVICE_NAME }, instr] = await Promise.all([
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
    instrumentations: instr,
  });
  sdk.start();
}

async function loadInstrumentations() {
  const [http, express, grpc, kafkajs, ioredis, mongoose] = await Promise.all([
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-express'),
    import('@opentelemetry/instrumentation-grpc'),
    import('@opentelemetry/instrumentation-kafkajs'),
    import('@opentelemetry/instrumentation-ioredis'),
    import('@opentelemetry/instrumentation-mongoose'),
  ]);
  return [
    new http.HttpInstrumentation({ ignoreIncomingRequestHook: (req) => req.url === '/metrics' }),
    new express.ExpressInstrumentation(),
    new grpc.GrpcInstrumentation(),
    new kafkajs.KafkaJsInstrumentation(),
    new ioredis.IORedisInstrumentation(),
    new mongoose.MongooseInstrumentation(),
  ];
}

/** Flushes and stops the SDK (graceful shutdown). */
export async function stopTelemetry(): Promise<void> {
  await sdk?.shutdown().catch(() => undefined);
  sdk = undefined;
}
