import { Health } from '@aigw/proto/grpc/health/v1/health';
import type { DescService } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { type CallVerifier, defaultInternalAuth, scopedInternalAuth } from './auth.ts';
import { createHealthService, type HealthReporter, ServingStatus } from './health.ts';
import { type ErrorHook, implement } from './implement.ts';
import type { ServiceImpl } from './types.ts';

/** A service descriptor with its implementation, as made by {@link service}. */
export interface ServiceBinding {
  desc: DescService;
  impl: unknown;
}

/**
 * Pairs a generated service with its implementation, type-checking the implementation.
 *
 * @example service(RelayAdminService, { testChannel: async (req) => ({ success: true }) })
 */
export function service<S extends DescService>(desc: S, impl: ServiceImpl<S>): ServiceBinding {
  return { desc, impl };
}

/** Options of {@link startGrpcServer}. */
export interface GrpcServerOptions {
  /** Port to listen on; 0 picks a free one (see the returned `port`). */
  port: number;
  /** Interface to bind; 0.0.0.0 unless set (tests use 127.0.0.1). */
  host?: string;
  services: ServiceBinding[];
  /** Registers grpc.health.v1.Health, SERVING for '' and every service (default true). */
  health?: boolean;
  /** Sees the cause of every error answered as INTERNAL (see implement()). */
  onError?: ErrorHook;
  /** grpc-js server options (message sizes, keepalive, ...). */
  serverOptions?: grpc.ServerOptions;
  /** Server credentials (transport); insecure unless set. */
  credentials?: grpc.ServerCredentials;
  /**
   * Checks the internal token of every call but health checks (ADR 0006). Defaults to the
   * credentials of the current {@link runWithInternalAuth} scope, else the process's
   * (GRPC_AUTH_DIR); `false` turns the check off (tests of the adapter only).
   */
  auth?: CallVerifier | false;
}

/** A running server. */
export interface RunningGrpcServer {
  server: grpc.Server;
  /** The bound port (useful with port 0). */
  port: number;
  /** The health status table (present unless health was false). */
  health: HealthReporter;
  /**
   * Sets every health status to NOT_SERVING, aborts handler signals after `graceMs`, lets
   * in-flight calls finish for at most `graceMs` (default 10 s), then forces the shutdown.
   */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts a gRPC server with the given services and the standard health service.
 *
 * @example
 * const grpcServer = await startGrpcServer({
 *   port: 50054,
 *   services: [service(RelayAdminService, relayAdmin)],
 *   onError: (err, { method }) => logger.error({ err, method }, 'grpc handler failed'),
 * });
 * grpcServer.health.setStatus('', ServingStatus.NOT_SERVING); // e.g. lost the database
 * await grpcServer.stop(5000);
 */
export async function startGrpcServer(opts: GrpcServerOptions): Promise<RunningGrpcServer> {
  // Connections are recycled every few minutes so that clients spread over new replicas (a
  // Kubernetes Service balances connections, not calls); in-flight calls get a grace period.
  const server = new grpc.Server({
    'grpc.max_connection_age_ms': 5 * 60_000,
    'grpc.max_connection_age_grace_ms': 30_000,
    ...opts.serverOptions,
  });
  const auth = opts.auth ?? scopedInternalAuth() ?? defaultInternalAuth();
  const stopping = new AbortController();
  const implementOptions = { signal: stopping.signal, auth, ...(opts.onError ? { onError: opts.onError } : {}) };
  for (const binding of opts.services) {
    implement(server, binding.desc, binding.impl as ServiceImpl<DescService>, implementOptions);
  }
  const closing = new AbortController();
  const { reporter, impl } = createHealthService(closing.signal);
  if (opts.health !== false) {
    // Open: kubelet's grpc probes send no credentials, and the answer is only a serving status.
    implement(server, Health, impl, { ...implementOptions, auth: false });
    reporter.setStatus('', ServingStatus.SERVING);
    for (const binding of opts.services) reporter.setStatus(binding.desc.typeName, ServingStatus.SERVING);
  }
  const address = `${opts.host ?? '0.0.0.0'}:${opts.port}`;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, opts.credentials ?? grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });

  let stopped: Promise<void> | undefined;
  const stop = (graceMs = 10_000): Promise<void> => {
    stopped ??= new Promise<void>((resolve) => {
      reporter.setAll(ServingStatus.NOT_SERVING);
      closing.abort(); // end health watches now; other calls get the grace period
      const force = setTimeout(() => {
        stopping.abort();
        server.forceShutdown();
        resolve();
      }, graceMs);
      force.unref();
      server.tryShutdown(() => {
        clearTimeout(force);
        stopping.abort();
        resolve();
      });
    });
    return stopped;
  };

  return { server, port, health: reporter, stop };
}
