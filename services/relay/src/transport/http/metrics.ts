import { type CounterSeries, FastCounter, FastHistogram, type HistogramSeries, registry } from '@aigw/common';
import { Counter, Gauge } from 'prom-client';

let made: ReturnType<typeof create> | undefined;

/** Why a limit refused a request: the label values of relay_requests_refused_total. */
export type RefusalReason =
  | 'token_rpm'
  | 'token_tpm'
  | 'token_concurrency'
  | 'user_rpm'
  | 'user_tpm'
  | 'model_rate_limit';

/**
 * The provider of a channel type, as OpenTelemetry's gen_ai.provider.name names the well-known
 * ones (openai, azure.ai.openai, anthropic, gcp.gemini, cohere, mistral_ai); the others by their
 * own short name. A fixed list: bounded label values.
 */
const PROVIDERS: Readonly<Record<number, string>> = {
  1: 'openai',
  3: 'azure.ai.openai',
  4: 'ollama',
  8: 'openai_compatible',
  14: 'anthropic',
  16: 'zhipu',
  17: 'alibaba',
  19: '360',
  24: 'gcp.gemini',
  25: 'moonshot',
  26: 'zhipu',
  31: 'yi',
  34: 'cohere',
  38: 'jina',
  39: 'cloudflare',
  40: 'siliconflow',
  42: 'mistral_ai',
};

/** The provider label of a channel type ("none" when no channel answered). */
export function providerOf(type: number | undefined): string {
  if (type === undefined) return 'none';
  return PROVIDERS[type] ?? 'other';
}

const CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

/** The index in CLASSES of an HTTP status. */
function statusClass(status: number): number {
  return status >= 500 ? 3 : status >= 400 ? 2 : status >= 300 ? 1 : 0;
}

/** The map under `key` in `m` (made on first use). */
function child<K, V>(m: Map<K, V>, key: K, make: () => V): V {
  let v = m.get(key);
  if (v === undefined) {
    v = make();
    m.set(key, v);
  }
  return v;
}

/** The series of one model and provider, held together (one lookup per finished request). */
interface ModelSeries {
  firstToken: HistogramSeries;
  perToken: HistogramSeries;
  input: CounterSeries;
  output: CounterSeries;
  cached: CounterSeries;
}

/** relay_requests_total by mode and status, relay_quota_total by mode. */
function requestCounts() {
  const counts = new Map<string, { mode: string; status: string; n: number; reported: number }>();
  const quotas = new Map<string, { n: number; reported: number }>();
  const requests: Counter<'mode' | 'status'> = new Counter({
    name: 'relay_requests_total',
    help: 'Relayed requests, by mode and HTTP status returned to the client.',
    labelNames: ['mode', 'status'] as const,
    registers: [registry],
    collect() {
      for (const c of counts.values()) {
        if (c.n > c.reported) requests.inc({ mode: c.mode, status: c.status }, c.n - c.reported);
        c.reported = c.n;
      }
    },
  });
  const quota: Counter<'mode'> = new Counter({
    name: 'relay_quota_total',
    help: 'Quota charged for relayed requests, by mode.',
    labelNames: ['mode'] as const,
    registers: [registry],
    collect() {
      for (const [mode, q] of quotas) {
        if (q.n > q.reported) quota.inc({ mode }, q.n - q.reported);
        q.reported = q.n;
      }
    },
  });
  return {
    observe(mode: string, status: number, q: number) {
      const key = `${mode} ${status}`;
      const c = counts.get(key);
      if (c) c.n++;
      else counts.set(key, { mode, status: String(status), n: 1, reported: 0 });
      if (q) {
        const m = quotas.get(mode);
        if (m) m.n += q;
        else quotas.set(mode, { n: q, reported: 0 });
      }
    },
  };
}

/** relay_request_duration_seconds by route, model, provider and status class. */
function requestDurations() {
  const duration = new FastHistogram(
    'relay_request_duration_seconds',
    'Time from the request to the end of the answer (streams included), by route, model, provider and status class.',
    ['route', 'model', 'provider', 'status_class'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300],
  );
  // Series handles found through nested maps of label values: no key string is built per request.
  const byRoute = new Map<string, Map<string, Map<string, (HistogramSeries | undefined)[]>>>();
  return {
    /** One finished request: route pattern, model label (bounded), provider label, status. */
    request(route: string, model: string, provider: string, status: number, seconds: number) {
      const classes = child(
        child(
          child(byRoute, route, () => new Map()),
          model,
          () => new Map(),
        ),
        provider,
        () => [] as (HistogramSeries | undefined)[],
      );
      const i = statusClass(status);
      let series = classes[i];
      if (!series) {
        series = duration.handle([route, model, provider, CLASSES[i] as string]);
        classes[i] = series;
      }
      series.observe(seconds);
    },
  };
}

/** Tokens and stream timings by model and provider. */
function usageSeries() {
  const firstToken = new FastHistogram(
    'relay_time_to_first_token_seconds',
    'Time from the request to the first streamed token, by model and provider (streams only).',
    ['model', 'provider'],
    [0.05, 0.1, 0.25, 0.5, 0.75, 1, 2, 3, 5, 10, 20, 30, 60],
  );
  const perToken = new FastHistogram(
    'relay_time_per_output_token_seconds',
    'Time per output token after the first one, by model and provider (streams with two tokens or more).',
    ['model', 'provider'],
    [0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2.5],
  );
  const tokens = new FastCounter(
    'relay_tokens_total',
    'Tokens of relayed requests as billed, by model, provider and type (input, output, cached: part of input).',
    ['model', 'provider', 'type'],
  );
  const byModel = new Map<string, Map<string, ModelSeries>>();
  const modelSeries = (model: string, provider: string): ModelSeries =>
    child(
      child(byModel, model, () => new Map<string, ModelSeries>()),
      provider,
      () => ({
        firstToken: firstToken.handle([model, provider]),
        perToken: perToken.handle([model, provider]),
        input: tokens.handle([model, provider, 'input']),
        output: tokens.handle([model, provider, 'output']),
        cached: tokens.handle([model, provider, 'cached']),
      }),
    );
  return {
    /**
     * A finished request's usage: tokens by type, and for a stream its time to first token and
     * per output token after it.
     */
    usage(
      model: string,
      provider: string,
      input: number,
      output: number,
      cached: number,
      stream?: { firstTokenMs: number; totalMs: number },
    ) {
      const m = modelSeries(model, provider);
      if (input > 0) m.input.inc(input);
      if (output > 0) m.output.inc(output);
      if (cached > 0) m.cached.inc(cached);
      if (stream && stream.firstTokenMs > 0) {
        m.firstToken.observe(stream.firstTokenMs / 1000);
        if (output > 1 && stream.totalMs > stream.firstTokenMs)
          m.perToken.observe((stream.totalMs - stream.firstTokenMs) / 1000 / (output - 1));
      }
    },
  };
}

/** Upstream errors, retries, billing's pre-consume time and the refusals of the limits. */
function attemptSeries() {
  const upstreamErrors = new FastCounter(
    'relay_upstream_errors_total',
    'Failed upstream attempts, by channel id and upstream HTTP status (0: no HTTP answer: connection, timeout, broken stream).',
    ['channel', 'status'],
  );
  const retries = new FastCounter(
    'relay_retries_total',
    'Attempts on another channel after a failed one (retries and first-token timeouts).',
    [],
  );
  const preConsume = new FastHistogram(
    'relay_preconsume_duration_seconds',
    "Time of billing's pre-consume call (skipped while balances are ample).",
    [],
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  );
  const refused = new FastCounter(
    'relay_requests_refused_total',
    'Requests refused by a limit before any upstream call or charge, by reason (token_rpm, token_tpm, token_concurrency, user_rpm, user_tpm, model_rate_limit).',
    ['reason'],
  );
  const refusedBy = new Map<string, CounterSeries>();
  const errorsByChannel = new Map<number, Map<number, CounterSeries>>();
  const retried = retries.handle([]);
  const preConsumed = preConsume.handle([]);
  return {
    upstreamError(channelId: number, status: number) {
      child(
        child(errorsByChannel, channelId, () => new Map<number, CounterSeries>()),
        status,
        () => upstreamErrors.handle([String(channelId), String(status)]),
      ).inc();
    },
    /** A request refused by a rate or concurrency limit (REFUSAL_REASONS: bounded values). */
    refused(reason: RefusalReason) {
      child(refusedBy, reason, () => refused.handle([reason])).inc();
    },
    retries(n: number) {
      if (n > 0) retried.inc(n);
    },
    preConsume(seconds: number) {
      preConsumed.observe(seconds);
    },
  };
}

/** The lease fence's counters, and the in-flight requests and open streams (read when scraped). */
function processSeries() {
  const fences = new Counter({
    name: 'relay_lease_fenced_total',
    help: 'Times this relay could not renew its lease for half the lapse and ended the requests holding a reservation (billing may give their holds back once the lease lapses).',
    registers: [registry],
  });
  const fencedCut = new Counter({
    name: 'relay_lease_fenced_requests_total',
    help: 'Requests holding a reservation ended because the lease could not be renewed.',
    registers: [registry],
  });
  const inflight = new Set<() => number>();
  new Gauge({
    name: 'relay_in_flight_requests',
    help: 'Relay requests being handled (streams included): the autoscaling signal.',
    registers: [registry],
    collect() {
      let n = 0;
      for (const count of inflight) n += count();
      this.set(n);
    },
  });
  let streams = 0;
  new Gauge({
    name: 'relay_open_streams',
    help: 'Streamed answers (text/event-stream, ndjson) being written to clients.',
    registers: [registry],
    collect() {
      this.set(streams);
    },
  });
  return {
    /** The lease could not be renewed: `cut` requests holding a reservation were ended. */
    leaseFenced(cut: number) {
      fences.inc();
      fencedCut.inc(cut);
    },
    /** Adds a relay HTTP server's in-flight count (read when scraped); returns the removal. */
    inflightFrom(fn: () => number): () => void {
      inflight.add(fn);
      return () => inflight.delete(fn);
    },
    streamOpened() {
      streams++;
    },
    streamClosed() {
      streams--;
    },
  };
}

/**
 * Per-request counts are kept in plain maps and handed to prom-client when it is scraped
 * (collect(), FastHistogram): its inc() hashes and validates the label object on every call,
 * which showed up in the relay's per-request CPU. Label values are bounded by the callers: route
 * patterns, configured model names ("other" for the rest), channel ids and provider names.
 * Registered in this order (the order of /metrics).
 */
function create() {
  return {
    ...requestCounts(),
    ...requestDurations(),
    ...usageSeries(),
    ...attemptSeries(),
    ...processSeries(),
  };
}

/** The relay's domain metrics (one set per process). */
export function relayMetrics() {
  made ??= create();
  return made;
}

export type RelayMetrics = ReturnType<typeof relayMetrics>;
