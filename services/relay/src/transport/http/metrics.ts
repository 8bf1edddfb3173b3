import { registry } from '@aigw/common';
import { Counter, Histogram } from 'prom-client';

let made: ReturnType<typeof create> | undefined;

function create() {
  const requests = new Counter({
    name: 'relay_requests_total',
    help: 'Relayed requests, by mode and HTTP status returned to the client.',
    labelNames: ['mode', 'status'] as const,
    registers: [registry],
  });
  const quota = new Counter({
    name: 'relay_quota_total',
    help: 'Quota charged for relayed requests, by mode.',
    labelNames: ['mode'] as const,
    registers: [registry],
  });
  const firstToken = new Histogram({
    name: 'relay_first_token_seconds',
    help: 'Time from the request to the first streamed token.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30],
    registers: [registry],
  });
  return {
    observe(mode: string, status: number, q: number) {
      requests.inc({ mode, status: String(status) });
      if (q) quota.inc({ mode }, q);
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
