import { registry } from '@aigw/common';
import { Counter, Histogram } from 'prom-client';

let made: ReturnType<typeof create> | undefined;

/**
 * Per-request counts are kept in plain maps and handed to prom-client when it is scraped
 * (collect()): its inc() hashes and validates the label object on every call, which showed up in
 * the relay's per-request CPU.
 */
function create() {
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
  const firstToken = new Histogram({
    name: 'relay_first_token_seconds',
    help: 'Time from the request to the first streamed token.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30],
    registers: [registry],
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
    firstToken(ms: number) {
      firstToken.observe(ms / 1000);
    },
  };
}

/** The relay's domain metrics (one set per process). */
export function relayMetrics() {
  made ??= create();
  return made;
}
