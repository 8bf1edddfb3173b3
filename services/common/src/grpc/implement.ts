import { setMaxListeners } from 'node:events';
import { create, type DescMethod, type DescService } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { APP_ERROR_KEY, AppError, type ErrorCode, grpcStatusOf, RETRY_AFTER_KEY, toAppError } from '../errors.ts';
import { observeGrpc } from '../metrics.ts';
import { AUTH_METADATA_KEY, type CallVerifier, checkActor } from './auth.ts';
import { hasActorField } from './auth-policy.ts';
import { toGrpcService } from './service-definition.ts';
import { type CallContext, methodPath, type ServiceImpl } from './types.ts';

/** Called with the cause of every error that reaches the client as INTERNAL. */
export type ErrorHook = (err: unknown, info: { method: string }) => void;

/** Options of {@link implement}. */
export interface ImplementOptions {
  /**
   * Sees every thrown error that is not an AppError, and AppErrors with code INTERNAL, before
   * the client gets a generic message. Defaults to writing the error to stderr.
   */
  onError?: ErrorHook;
  /** Aborted when the server stops; every handler's `ctx.signal` follows it. */
  signal?: AbortSignal;
  /**
   * Checks every call's internal credentials before its handler runs (ADR 0006); `false` only for
   * the open health service and tests of the adapter itself.
   */
  auth: CallVerifier | false;
}

const defaultOnError: ErrorHook = (err, info) => {
  console.error(`gRPC ${info.method} failed`, err);
};

/**
 * Registers a typed implementation of a generated service on a grpc-js server.
 *
 * Handlers receive the decoded request and a {@link CallContext}; a unary handler resolves with
 * the response (plain object or message), a server-streaming handler yields responses. A thrown
 * `AppError` becomes its gRPC status with the message as details; anything else becomes INTERNAL
 * with a generic message, and its cause goes to `onError` only.
 *
 * @example
 * implement(server, RelayAdminService, {
 *   async testChannel(req, ctx) {
 *     return { success: true, timeMs: 12 };
 *   },
 * });
 */
export function implement<S extends DescService>(
  server: grpc.Server,
  desc: S,
  impl: ServiceImpl<S>,
  opts: ImplementOptions,
): void {
  const handlers: grpc.UntypedServiceImplementation = {};
  const table = impl as unknown as Record<string, unknown>;
  // Every call in flight listens to the server's stop signal until it ends (callContext's done):
  // under load that is many listeners at once, not a leak, and Node's warning past 10 was noise.
  if (opts.signal) setMaxListeners(0, opts.signal);
  for (const method of desc.methods) {
    const fn = table[method.localName];
    if (typeof fn !== 'function') continue; // grpc-js answers UNIMPLEMENTED
    const bound = guarded(method, fn.bind(impl) as AnyHandler, opts.auth);
    if (method.methodKind === 'unary') handlers[method.localName] = unaryHandler(method, bound, opts);
    else if (method.methodKind === 'server_streaming') handlers[method.localName] = streamHandler(method, bound, opts);
    else throw new Error(`${methodPath(method)}: ${method.methodKind} methods are not supported`);
  }
  server.addService(toGrpcService(desc), handlers);
}

type AnyHandler = (req: unknown, ctx: CallContext) => unknown;

/** Wraps a handler with the credential, allow-list and actor checks of its method. */
function guarded(method: DescMethod, fn: AnyHandler, auth: CallVerifier | false): AnyHandler {
  if (auth === false) return fn;
  const hasActor = hasActorField(method);
  return (req, ctx) => {
    const value = ctx.metadata.get(AUTH_METADATA_KEY)[0];
    const claims = auth.verify(typeof value === 'string' ? value : undefined, method);
    if (hasActor) checkActor(claims, (req as { actor?: { userId: number; role: number; username: string } }).actor);
    ctx.caller = claims.iss;
    ctx.metadata.remove(AUTH_METADATA_KEY); // handlers never see (or pass on) the bearer token
    return fn(req, ctx);
  };
}

function unaryHandler(
  method: DescMethod,
  fn: AnyHandler,
  opts: ImplementOptions,
): grpc.handleUnaryCall<unknown, unknown> {
  const path = methodPath(method);
  return (call, callback) => {
    const { ctx, done } = callContext(call, path, opts.signal);
    const started = performance.now();
    Promise.resolve()
      .then(() => fn(call.request, ctx))
      .then(
        (res) => {
          callback(null, create(method.output, res as never));
          observe(method, grpc.status.OK, started);
        },
        (err: unknown) => {
          const status = toStatus(err, path, opts.onError ?? defaultOnError);
          callback(status);
          observe(method, status.code, started);
        },
      )
      .finally(done);
  };
}

function streamHandler(
  method: DescMethod,
  fn: AnyHandler,
  opts: ImplementOptions,
): grpc.handleServerStreamingCall<unknown, unknown> {
  const path = methodPath(method);
  return (call) => {
    const { ctx, done } = callContext(call, path, opts.signal);
    const started = performance.now();
    (async () => {
      const items = fn(call.request, ctx) as AsyncIterable<unknown>;
      for await (const item of items) {
        if (ctx.signal.aborted) break;
        if (!call.write(create(method.output, item as never))) {
          await new Promise<void>((resolve) => {
            const finish = () => {
              call.off('drain', finish);
              ctx.signal.removeEventListener('abort', finish);
              resolve();
            };
            call.once('drain', finish);
            ctx.signal.addEventListener('abort', finish, { once: true });
          });
        }
      }
      call.end();
      observe(method, grpc.status.OK, started);
    })()
      .catch((err: unknown) => {
        const status = toStatus(err, path, opts.onError ?? defaultOnError);
        call.emit('error', status);
        observe(method, status.code, started);
      })
      .finally(done);
  };
}

/** Builds the handler context; `done` releases its timer and listeners. */
function callContext(
  call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>,
  method: string,
  serverSignal: AbortSignal | undefined,
): { ctx: CallContext; done: () => void } {
  const controller = new AbortController();
  const deadline = call.getDeadline();
  const abort = (code: ErrorCode, message: string) => () => {
    if (!controller.signal.aborted) controller.abort(new AppError(code, message));
  };
  const onCancel = abort('UNAVAILABLE', 'call cancelled by the client');
  const onServerStop = abort('UNAVAILABLE', 'server shutting down');
  call.once('cancelled', onCancel);
  serverSignal?.addEventListener('abort', onServerStop, { once: true });
  const ms =
    deadline instanceof Date
      ? deadline.getTime() - Date.now()
      : Number.isFinite(deadline)
        ? deadline - Date.now()
        : Infinity;
  // The server's own deadline timer cancels the call too; this one only makes sure the signal fires.
  const timer = Number.isFinite(ms)
    ? setTimeout(abort('DEADLINE_EXCEEDED', 'deadline exceeded'), Math.max(0, ms))
    : undefined;
  timer?.unref?.();
  const ctx: CallContext = {
    metadata: call.metadata,
    deadline,
    signal: controller.signal,
    method,
    peer: call.getPeer(),
  };
  const done = () => {
    if (timer) clearTimeout(timer);
    call.off('cancelled', onCancel);
    serverSignal?.removeEventListener('abort', onServerStop);
  };
  return { ctx, done };
}

/** Records the call in the RED metrics (grpc_server_handled_total, grpc_server_handling_seconds). */
function observe(method: DescMethod, code: grpc.status, started: number): void {
  observeGrpc(
    method.parent.typeName,
    method.name,
    grpc.status[code] ?? String(code),
    (performance.now() - started) / 1000,
  );
}

/** Maps a thrown value to the status sent to the client; never leaks a non-AppError message. */
function toStatus(
  err: unknown,
  method: string,
  onError: ErrorHook,
): { code: grpc.status; details: string; metadata: grpc.Metadata } {
  const appError = toAppError(err);
  if (!(err instanceof AppError) || appError.code === 'INTERNAL') {
    try {
      onError(err, { method });
    } catch {
      // a failing hook must not break the answer
    }
  }
  const metadata = new grpc.Metadata();
  metadata.set(APP_ERROR_KEY, '1');
  if (appError.retryAfterMs !== undefined) metadata.set(RETRY_AFTER_KEY, String(Math.round(appError.retryAfterMs)));
  return { code: grpcStatusOf[appError.code], details: appError.message, metadata };
}
