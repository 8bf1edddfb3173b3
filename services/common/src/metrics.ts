import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

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

/** Consumer lag from committed offsets vs high watermarks, sampled every few seconds. */
export const kafkaConsumerLag = new Gauge({
  name: 'kafka_consumer_lag',
  help: 'Events not yet committed by the consumer group, by group, topic and partition.',
  labelNames: ['group', 'topic', 'partition'] as const,
  registers: [registry],
});

/** Times a consumer fell out of its group (crash, rebalance failure, unknown member) and came back. */
export const kafkaConsumerRejoins = new Counter({
  name: 'kafka_consumer_rejoins_total',
  help: 'Consumer restarts and rejoins after a crash or after falling out of the group, by group and reason.',
  labelNames: ['group', 'reason'] as const,
  registers: [registry],
});

export const kafkaBatchSize = new Histogram({
  name: 'kafka_consumer_batch_size',
  help: 'Events handed to a batch handler at once, by group and topic.',
  labelNames: ['group', 'topic'] as const,
  buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500],
  registers: [registry],
});

export const kafkaBatchDuration = new Histogram({
  name: 'kafka_consumer_batch_duration_seconds',
  help: 'Time to handle one batch (retries included), by group and topic.',
  labelNames: ['group', 'topic'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

/** Age of the oldest event fetched but not yet handled (0 when caught up). */
export const kafkaOldestUnhandled = new Gauge({
  name: 'kafka_consumer_oldest_unhandled_seconds',
  help: 'Age in seconds of the oldest fetched event not yet handled, by group and topic.',
  labelNames: ['group', 'topic'] as const,
  registers: [registry],
});

/** 1 while the consumer consumes (or is joining), 0 when stalled or stopped. */
export const kafkaConsumerUp = new Gauge({
  name: 'kafka_consumer_up',
  help: 'Whether the consumer is consuming (1) or stalled/stopped (0), by group.',
  labelNames: ['group'] as const,
  registers: [registry],
});
