/**
 * The gRPC adapter: protobuf-es v2 service descriptors on @grpc/grpc-js.
 *
 * - Servers: `startGrpcServer({ port, services: [service(Desc, impl)] })`, or `implement()` on a
 *   server of your own. Thrown AppErrors become gRPC statuses.
 * - Clients: `createClient(Desc, address)`; every call has a deadline and failures reject with
 *   AppError.
 * - Health: grpc.health.v1.Health is registered by default (open: probes send no credentials).
 * - Internal authentication (ADR 0006): clients sign a short-lived per-service token on every call
 *   and servers check it, the per-method allow-list and the gateway-signed actor before any
 *   handler runs. Credentials come from the `runWithInternalAuth` scope or GRPC_AUTH_DIR.
 */

export {
  AUTH_METADATA_KEY,
  type CallSigner,
  type CallVerifier,
  createInternalAuth,
  createPlatformAuth,
  defaultInternalAuth,
  type InternalAuth,
  runWithInternalAuth,
  setDefaultInternalAuth,
} from './auth.ts';
export type { AuthKeys } from './auth-keys.ts';
export { ensureKeyDir, generateKeySet, type KeySet, keysOf, loadAuthKeys, PLATFORM_SERVICES } from './auth-keys.ts';
export { ACTOR_ISSUERS, audienceOf, CALLERS, callersOf } from './auth-policy.ts';
export { type ActorClaim, signToken, TOKEN_TTL_S, type TokenClaims } from './auth-token.ts';
export { type ClientOptions, createClient, DEFAULT_DEADLINE_MS } from './client.ts';
export { createHealthService, type HealthReporter, ServingStatus } from './health.ts';
export { type ErrorHook, type ImplementOptions, implement } from './implement.ts';
export {
  type GrpcServerOptions,
  type RunningGrpcServer,
  type ServiceBinding,
  service,
  startGrpcServer,
} from './server.ts';
export { deserializer, serializer, toGrpcService } from './service-definition.ts';
export type {
  CallContext,
  CallOptions,
  ClientMethod,
  MethodImpl,
  ServerStreamingClientMethod,
  ServerStreamingImpl,
  ServiceClient,
  ServiceImpl,
  UnaryClientMethod,
  UnaryImpl,
} from './types.ts';
export { methodPath } from './types.ts';
