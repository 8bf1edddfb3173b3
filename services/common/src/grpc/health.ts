import { type Health, HealthCheckResponse_ServingStatus as ServingStatus } from '@aigw/proto/grpc/health/v1/health';
import { AppError } from '../errors.ts';
import type { ServiceImpl } from './types.ts';

export { ServingStatus };

/** Serving status of the server ('' ) and of each service by full name; read by grpc.health.v1.Health. */
export interface HealthReporter {
  /** Sets the status of a service ('' is the whole server) and notifies watchers. */
  setStatus(service: string, status: ServingStatus): void;
  /** The status of a service, or undefined when unknown. */
  getStatus(service: string): ServingStatus | undefined;
  /** Sets every known service (and the server) to `status`, e.g. NOT_SERVING before a shutdown. */
  setAll(status: ServingStatus): void;
}

/**
 * Creates the standard gRPC health service (Check and Watch) with its status table.
 * Unknown services answer NOT_FOUND on Check and SERVICE_UNKNOWN on Watch, as the protocol says.
 * Watches end when `closing` aborts (a shutdown should not wait for them).
 */
export function createHealthService(closing?: AbortSignal): {
  reporter: HealthReporter;
  impl: ServiceImpl<typeof Health>;
} {
  const statuses = new Map<string, ServingStatus>();
  const watchers = new Set<() => void>();
  const notify = () => {
    for (const wake of watchers) wake();
  };
  const reporter: HealthReporter = {
    setStatus(service, status) {
      statuses.set(service, status);
      notify();
    },
    getStatus: (service) => statuses.get(service),
    setAll(status) {
      for (const key of statuses.keys()) statuses.set(key, status);
      if (!statuses.has('')) statuses.set('', status);
      notify();
    },
  };
  const impl: ServiceImpl<typeof Health> = {
    async check(req) {
      const status = statuses.get(req.service);
      if (status === undefined) throw new AppError('NOT_FOUND', `unknown service ${req.service}`);
      return { status };
    },
    async *watch(req, ctx) {
      let last: ServingStatus | undefined;
      for (;;) {
        const status = statuses.get(req.service) ?? ServingStatus.SERVICE_UNKNOWN;
        if (status !== last) {
          last = status;
          yield { status };
        }
        // Checked after the yield so that a closing server still reports NOT_SERVING.
        if (ctx.signal.aborted || closing?.aborted) return;
        await new Promise<void>((resolve) => {
          const wake = () => {
            watchers.delete(wake);
            ctx.signal.removeEventListener('abort', wake);
            closing?.removeEventListener('abort', wake);
            resolve();
          };
          watchers.add(wake);
          ctx.signal.addEventListener('abort', wake, { once: true });
          closing?.addEventListener('abort', wake, { once: true });
        });
      }
    },
  };
  return { reporter, impl };
}
