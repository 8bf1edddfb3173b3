/**
 * The fault suite's settings (command-line flags with their defaults), its scenarios and the
 * records its parts pass to one another: the users, the requests the client sent and what it saw,
 * the consumer-lag samples, the side probes and each scenario's result.
 */

import type { ServiceName } from '../deploy/local/stack/in-process.ts';

export const arg = (name: string, dflt: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
export const ONLY = arg('only', 'billing,logs,relay,kafka,redis,mongo,stall').split(',');
/** Requests per second, open loop. */
export const RATE = Number(arg('rate', '100'));
/**
 * Seconds of load per scenario: past the end of the longest outage (5 + 12 s) with a few seconds
 * of traffic after it. A killed consumer's rejoin (one Kafka session, 30 s) happens during the
 * drain that follows, which waits for it; a longer load only made every scenario longer (the
 * suite took 6.8 min with 30 s of load, 20 s outages and the fault at 8 s).
 */
export const LOAD_S = Number(arg('load', '20'));
/** How long Kafka, Redis and the relay-billing network stay down or stalled. */
export const OUTAGE_S = Number(arg('outage', '12'));
/** The fault comes this many seconds into the load. */
export const KILL_AT_S = Number(arg('kill-at', '5'));
export const STREAM_SHARE = Number(arg('stream', '0.25'));
/** Delay between streamed chunks: a stream lasts about 13 chunks x this. */
export const CHUNK_MS = Number(arg('chunk-ms', '250'));
/** Users with a large balance (the relay skips their pre-consume) and with a modest one (never skipped). */
export const RICH_USERS = 10;
export const MODEST_USERS = 3;
export const RICH_QUOTA = 1_000_000_000;
/** Below RELAY_TRUST_FACTOR (100) x one reservation (66,036 for a model without max_tokens). */
export const MODEST_QUOTA = 5_000_000;
/**
 * A request the client gives up on: long, so that on a slow machine the client does not give up on
 * requests the relay still answers (and bills): the checks count what the client saw answered.
 */
export const REQUEST_TIMEOUT_MS = 120_000;
/** Deadline of one of the checks' reads: they check amounts, not latency (the probes measure that). */
export const CHECK_READ_MS = Number(arg('check-read-ms', '20000'));
/** How long the usage pipeline may take to drain after the load. */
export const DRAIN_LIMIT_S = Number(arg('drain', '90'));
/** The whole suite, start to end (the README's test command allows it 10 minutes). */
export const SUITE_LIMIT_S = Number(arg('limit', '590'));
/** Per-user and per-token limits high enough never to refuse the load, so that the limiter runs (and fails open). */
export const RPM = 1_000_000;
/**
 * The relay's usage buffer (RELAY_USAGE_BUFFER_MAX; 100,000 by default): small here, so that the
 * Kafka outage fills it and the refusal beyond it is exercised too.
 */
export const BUFFER_MAX = Number(arg('buffer', '1000'));
export const KEEP = process.argv.includes('--keep');
/** The relay's usage batching window (RELAY_USAGE_LINGER_MS, default). */
export const LINGER_MS = 100;
/** Allowed for the send in flight when the relay died and for the client's delay in seeing an answer. */
export const SEND_ALLOWANCE_MS = 500;

export type FaultKind = 'kill' | 'infra' | 'stall';

export interface Scenario {
  name: string;
  /** What happens, for the report's headings. */
  title: string;
  kind: FaultKind;
  /** The service killed (kind kill) or the server stopped (kind infra). */
  target: ServiceName | 'kafka' | 'redis' | 'mongo' | 'network';
  /** Time between the fault and the restart (or the end of the stall). */
  downMs: number;
  /** The consumer group whose catch-up is the recovery (none for the relay). */
  group?: 'billing' | 'logs';
  /** Exact identity (every scenario but the relay's) or under-charge within the bound (relay). */
  exact: boolean;
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'billing',
    title: 'kill -9 of billing',
    kind: 'kill',
    target: 'billing',
    // Longer than the settle-lag key's 5 s, so that pre-consumes fail closed for a while.
    downMs: 7_000,
    group: 'billing',
    exact: true,
  },
  { name: 'logs', title: 'kill -9 of logs', kind: 'kill', target: 'logs', downMs: 5_000, group: 'logs', exact: true },
  // Exact since the relay spools its usage events (RELAY_USAGE_SPOOL_DIR): its restart sends what
  // the kill cut off.
  { name: 'relay', title: 'kill -9 of the relay', kind: 'kill', target: 'relay', downMs: 1_000, exact: true },
  {
    name: 'kafka',
    title: 'Kafka broker stopped',
    kind: 'infra',
    target: 'kafka',
    downMs: OUTAGE_S * 1000,
    group: 'billing',
    exact: true,
  },
  { name: 'redis', title: 'Redis stopped', kind: 'infra', target: 'redis', downMs: OUTAGE_S * 1000, exact: true },
  {
    name: 'mongo',
    title: 'MongoDB-compatible server restarted',
    kind: 'infra',
    target: 'mongo',
    downMs: 5_000,
    exact: true,
  },
  {
    name: 'stall',
    title: 'relay-billing network stalled',
    kind: 'stall',
    target: 'network',
    downMs: OUTAGE_S * 1000,
    exact: true,
  },
];

export const now = () => performance.timeOrigin + performance.now();
export const f = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');
export const s1 = (ms: number) => `${f(ms / 1000)} s`;

export interface UserRec {
  userId: number;
  keys: string[];
  rich: boolean;
  before: { quota: number; used: number; count: number };
}

export interface Req {
  user: UserRec;
  stream: boolean;
  /** A playground request (console session) instead of a token's. */
  pg: boolean;
  /** The load, or each user's one request after the drain. */
  phase: 'load' | 'next';
  sentAt: number;
  doneAt: number;
  status: number;
  rid: string;
  ok: boolean;
  /** Why it failed, as the client saw it (HTTP status and message, or the socket error). */
  err: string;
}

export interface LagSample {
  t: number;
  billing: number;
  logs: number;
}

export interface Result {
  scenario: Scenario;
  pass: boolean;
  lines: string[];
  summary: {
    served: number;
    sent: number;
    errors: number;
    errorKinds: string;
    outage: string;
    ready: string;
    caughtUp: string;
    drained: string;
    invariant: string;
    bound: string;
    /** Why the invariant failed (printed again under the summary, where a CI log's tail shows it). */
    why?: string[];
  };
}

/** When the fault came, when the server or service was stopped, restarted, listening and ready (ms, `now()`). */
export interface Times {
  kill: number;
  stopped: number;
  restart: number;
  listening: number;
  ready: number;
}

/** One sample of the side probes (every 250 ms during the load). */
export interface Probe {
  t: number;
  /** The relay's usage events waiting for Kafka (NaN when its /metrics did not answer). */
  buffered: number;
  rssMb: number;
  /** Whether billing answered a wallet read within 1 s (straight to billing). */
  billingOk: boolean;
  /** The rate-limit counter of one user (NaN when Redis did not answer). */
  rl: number;
}

/** A pre-consume (hold op) of the ledger: when it was written, for whom, for which request. */
export interface HoldAt {
  at: number;
  rich: boolean;
  rid: string;
}
