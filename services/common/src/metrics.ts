import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** One registry per process; every service's /metrics serves it. */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** RED metrics for HTTP: rate and errors by status, duration by route. */
export const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests handled, by method, route and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration in seconds, by method and route.',
  labelNames: ['method', 'route'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/** RED metrics for gRPC servers, by service, method and status code name. */
export const grpcHandled = new Counter({
  name: 'grpc_server_handled_total',
  help: 'gRPC calls completed on the server, by service, method and code.',
  labelNames: ['service', 'method', 'code'] as const,
  registers: [registry],
});

export const grpcDuration = new Histogram({
  name: 'grpc_server_handling_seconds',
  help: 'gRPC server handling time in seconds.',
  labelNames: ['service', 'method'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
  registers: [registry],
});

/** Kafka consumer outcomes, by topic and result (ok, retried, dead_lettered). */
export const kafkaConsumed = new Counter({
  name: 'kafka_messages_consumed_total',
  help: 'Kafka messages processed by consumers, by topic and result.',
  labelNames: ['topic', 'result'] as const,
  registers: [registry],
});

/** Records one finished gRPC call (used by the gRPC adapter). */
export function observeGrpc(service: string, method: string, code: string, seconds: number): void {
  grpcHandled.inc({ service, method, code });
  grpcDuration.observe({ service, method }, seconds);
}
