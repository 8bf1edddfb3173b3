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

/**
 * RED metrics for gRPC servers, by gRPC service, method and status code name. The label is
 * `grpc_service` (as OpenTelemetry's rpc.service), not `service`: Prometheus' own target label
 * `service` would rename ours to `exported_service` under a ServiceMonitor.
 */
export const grpcHandled = new Counter({
  name: 'grpc_server_handled_total',
  help: 'gRPC calls completed on the server, by gRPC service, method and code.',
  labelNames: ['grpc_service', 'method', 'code'] as const,
  registers: [registry],
});

export const grpcDuration = new Histogram({
  name: 'grpc_server_handling_seconds',
  help: 'gRPC server handling time in seconds, by gRPC service and method.',
  labelNames: ['grpc_service', 'method'] as const,
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
  grpcHandled.inc({ grpc_service: service, method, code });
  grpcDuration.observe({ grpc_service: service, method }, seconds);
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

/** Events moved to a dead-letter topic, by consumer group. */
export const kafkaDeadLetters = new Counter({
  name: 'kafka_consumer_dead_letters_total',
  help: 'Events a consumer gave up on and moved to its dead-letter topic, by group.',
  labelNames: ['group'] as const,
  registers: [registry],
});

/** Handler calls abandoned after KAFKA_CONSUMER_BATCH_BUDGET_MS (the batch is fetched again), by group. */
export const kafkaBatchesAbandoned = new Counter({
  name: 'kafka_consumer_batches_abandoned_total',
  help: 'Handler calls that ran past their budget and were abandoned (the batch is fetched again by a new consumer), by group.',
  labelNames: ['group'] as const,
  registers: [registry],
});

/** Sends the producer gave up on (after kafkajs' own retries), by topic. */
export const kafkaProducerErrors = new Counter({
  name: 'kafka_producer_errors_total',
  help: 'Kafka sends that failed after the client retries, by topic (the caller may retry the events).',
  labelNames: ['topic'] as const,
  registers: [registry],
});

let producerInFlight = 0;
const producerQueues = new Set<() => number>();

/** Events handed to a producer and not acknowledged yet, plus what services batch before sending. */
export const kafkaProducerQueue = new Gauge({
  name: 'kafka_producer_queue_size',
  help: 'Events not yet acknowledged by Kafka: batched by the service and not sent yet, or sent and unacknowledged.',
  registers: [registry],
  collect() {
    let n = producerInFlight;
    for (const queued of producerQueues) n += queued();
    this.set(n);
  },
});

/** Counts events sent and not yet acknowledged (kafka.ts). */
export function producerInFlightAdd(n: number): void {
  producerInFlight += n;
}

/** Adds a service's own send queue (read when scraped) to kafka_producer_queue_size; returns the removal. */
export function reportProducerQueue(queued: () => number): () => void {
  producerQueues.add(queued);
  return () => producerQueues.delete(queued);
}

/** Billing: from the relay's usage event (the request's end) to its settle or refund being durable. */
export const billingSettleDelay = new Histogram({
  name: 'billing_settle_delay_seconds',
  help: 'Time from a usage event (the end of a relayed request) to its settle or refund being written.',
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900],
  registers: [registry],
});

/** Channels: channels set to status 3 by the automatic rules, by channel id. */
export const channelsAutoDisabled = new Counter({
  name: 'channels_auto_disabled_total',
  help: 'Channels disabled automatically (failed relays or tests, slow tests), by channel id.',
  labelNames: ['channel'] as const,
  registers: [registry],
});

/** The running build, one series per service in the process (value 1). */
export const buildInfo = new Gauge({
  name: 'build_info',
  help: 'Build of the running service: service name, version and Node.js version (value 1).',
  labelNames: ['service', 'version', 'node_version'] as const,
  registers: [registry],
});

/** The platform's version: AIGW_VERSION (set by the image build), else the package version. */
export function platformVersion(): string {
  return process.env.AIGW_VERSION || process.env.npm_package_version || '0.1.0';
}

/** Records this service in build_info (called when a service reads its configuration). */
export function recordBuildInfo(service: string): void {
  buildInfo.set({ service, version: platformVersion(), node_version: process.version }, 1);
}

/** One series of a FastHistogram: observe() is a bucket search and two additions. */
export class HistogramSeries {
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Record<string, string>,
    private readonly buckets: readonly number[],
  ) {
    this.counts = new Array(buckets.length).fill(0);
  }

  observe(value: number): void {
    const b = this.buckets;
    for (let i = 0; i < b.length; i++) {
      if (value <= (b[i] as number)) {
        (this.counts[i] as number)++;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }
}

/** One series of a FastCounter. */
export class CounterSeries {
  value = 0;
  constructor(readonly labels: Record<string, string>) {}
  inc(by = 1): void {
    this.value += by;
  }
}

function labelObject(names: readonly string[], values: readonly string[]): Record<string, string> {
  const l: Record<string, string> = {};
  names.forEach((n, i) => {
    l[n] = values[i] ?? '';
  });
  return l;
}

/**
 * A histogram for hot paths: callers keep the series they observe (handle()), so an observation
 * hashes or validates no label object; series are handed to the registry when scraped. Label
 * values must come from bounded sets (the caller's job).
 */
export class FastHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[],
    registers = [registry],
  ) {
    for (const r of registers) r.registerMetric(this as never);
  }

  /** The series of these label values (made on first use). */
  handle(values: readonly string[]): HistogramSeries {
    const key = values.join('\u0001');
    let s = this.series.get(key);
    if (!s) {
      s = new HistogramSeries(labelObject(this.labelNames, values), this.buckets);
      this.series.set(key, s);
    }
    return s;
  }

  /** Zeroes every series (handles held by callers stay valid). */
  reset(): void {
    for (const s of this.series.values()) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }

  get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const s of this.series.values()) {
      let acc = 0;
      this.buckets.forEach((le, i) => {
        acc += s.counts[i] as number;
        values.push({ labels: { ...s.labels, le }, value: acc, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

/** A counter for hot paths, with series handles like FastHistogram. */
export class FastCounter {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, CounterSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    registers = [registry],
  ) {
    for (const r of registers) r.registerMetric(this as never);
  }

  handle(values: readonly string[]): CounterSeries {
    const key = values.join('\u0001');
    let s = this.series.get(key);
    if (!s) {
      s = new CounterSeries(labelObject(this.labelNames, values));
      this.series.set(key, s);
    }
    return s;
  }

  reset(): void {
    for (const s of this.series.values()) s.value = 0;
  }

  get() {
    const values = [...this.series.values()].map((s) => ({ labels: s.labels, value: s.value }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}
