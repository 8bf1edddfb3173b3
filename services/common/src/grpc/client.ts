import { create, type DescMethod, type DescService } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { APP_ERROR_KEY, AppError, RETRY_AFTER_KEY } from '../errors.ts';
import { AUTH_METADATA_KEY, type CallSigner, defaultInternalAuth, scopedInternalAuth } from './auth.ts';
import { hasActorField } from './auth-policy.ts';
import type { ActorClaim } from './auth-token.ts';
import { deserializer, serializer } from './service-definition.ts';
import { type CallOptions, methodPath, type ServiceClient } from './types.ts';

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** Default deadline of every call in milliseconds (5000 unless set). */
  deadlineMs?: number;
  /** Channel credentials; insecure (plain HTTP/2 inside the cluster) unless set. */
  credentials?: grpc.ChannelCredentials;
  /** grpc-js channel options (keepalive, message sizes, ...); clients that share a channel share these. */
  channelOptions?: grpc.ChannelOptions;
  /**
   * Signs every call's internal token (ADR 0006). Defaults to the credentials of the
   * {@link runWithInternalAuth} scope the client is created in, else the process's
   * (GRPC_AUTH_DIR); `false` sends none (tests that expect a refusal).
   */
  auth?: CallSigner | false;
}

/** The deadline applied when neither the client nor the call sets one. */
export const DEFAULT_DEADLINE_MS = 5000;

interface SharedChannel {
  channel: grpc.Channel;
  refs: number;
}

/**
 * Reconnect quickly: peers restart during deploys and start in any order, and grpc-js' default
 * backoff grows to two minutes, which would leave a caller failing long after its peer is back.
 */
const DEFAULT_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 250,
  // A restarted peer is used within 2 s of listening again (docs/reliability.md, scenario 2).
  'grpc.max_reconnect_backoff_ms': 2_000,
  'grpc.keepalive_time_ms': 30_000,
};

// One channel (one HTTP/2 connection pool) per address and options, shared by every client of
// every service at that address; closed when its last client closes.
const channels = new Map<string, SharedChannel>();

function acquireChannel(address: string, opts: ClientOptions): { channel: grpc.Channel; release: () => void } {
  const shareable = !opts.credentials;
  const channelOptions = { ...DEFAULT_CHANNEL_OPTIONS, ...opts.channelOptions };
  const key = `${address}|${JSON.stringify(channelOptions)}`;
  let entry = shareable ? channels.get(key) : undefined;
  if (!entry) {
    const credentials = opts.credentials ?? grpc.credentials.createInsecure();
    entry = { channel: new grpc.Channel(address, credentials, channelOptions), refs: 0 };
    if (shareable) channels.set(key, entry);
  }
  const held = entry;
  held.refs += 1;
  let released = false;
  return {
    channel: held.channel,
    release: () => {
      if (released) return;
      released = true;
      held.refs -= 1;
      if (held.refs > 0) return;
      if (channels.get(key) === held) channels.delete(key);
      held.channel.close();
    },
  };
}

/**
 * Creates a typed, promisified client of a generated service.
 *
 * Every call carries a deadline (the call's `deadlineMs`, else the client's, else 5000 ms).
 * A failed call rejects with `AppError.fromGrpc(status, details)`, so a server's
 * `AppError('NOT_FOUND', ...)` arrives as an AppError with code NOT_FOUND and the same message.
 * Clients at the same address share one channel; `close()` releases this client's share.
 *
 * @example
 * const relay = createClient(RelayAdminService, '127.0.0.1:50054', { deadlineMs: 30_000 });
 * const res = await relay.testChannel({ channelId: 7, model: 'gpt-4o-mini' });
 * relay.close();
 */
export function createClient<S extends DescService>(
  desc: S,
  address: string,
  opts: ClientOptions = {},
): ServiceClient<S> {
  const { channel, release } = acquireChannel(address, opts);
  const client = new grpc.Client(address, opts.credentials ?? grpc.credentials.createInsecure(), {
    channelOverride: channel,
  });
  const state: ClientState = {
    client,
    defaultDeadlineMs: opts.deadlineMs ?? DEFAULT_DEADLINE_MS,
    closed: false,
    auth: opts.auth ?? scopedInternalAuth(),
  };
  const methods: Record<string, unknown> = {};
  for (const method of desc.methods) {
    if (method.localName === 'close') throw new Error(`${desc.typeName}: a method named close hides client.close()`);
    if (method.methodKind === 'unary') methods[method.localName] = unaryCall(state, method);
    else if (method.methodKind === 'server_streaming') methods[method.localName] = serverStreamCall(state, method);
  }
  // Not client.close(): that would close the shared channel under the other clients.
  methods.close = () => {
    state.closed = true;
    release();
  };
  return methods as ServiceClient<S>;
}

interface ClientState {
  client: grpc.Client;
  defaultDeadlineMs: number;
  closed: boolean;
  /** undefined: the process's credentials, looked up at the first call. */
  auth: CallSigner | false | undefined;
}

function callSetup(state: ClientState, method: DescMethod, req: unknown, opts: CallOptions | undefined) {
  const path = methodPath(method);
  if (state.closed) throw new AppError('UNAVAILABLE', `${path}: client closed`);
  const deadlineMs = opts?.deadlineMs ?? state.defaultDeadlineMs;
  const metadata = toMetadata(opts?.metadata);
  state.auth ??= defaultInternalAuth();
  if (state.auth) metadata.set(AUTH_METADATA_KEY, state.auth.tokenFor(method, actorOf(method, req)));
  return { metadata, options: { deadline: Date.now() + deadlineMs } satisfies grpc.CallOptions };
}

/** The request's actor (aigw.common.v1.Actor field `actor`), which the gateway's token signs. */
function actorOf(method: DescMethod, req: unknown): ActorClaim | undefined {
  if (!hasActorField(method)) return undefined;
  const actor = (req as { actor?: { userId?: number; role?: number; username?: string } } | undefined)?.actor;
  if (!actor) return undefined;
  return { u: actor.userId ?? 0, r: actor.role ?? 0, n: actor.username ?? '' };
}

function unaryCall(state: ClientState, method: DescMethod) {
  const path = methodPath(method);
  const serialize = serializer(method.input);
  const deserialize = deserializer(method.output);
  return (req: unknown, opts?: CallOptions): Promise<unknown> => {
    let setup: ReturnType<typeof callSetup>;
    try {
      setup = callSetup(state, method, req, opts);
    } catch (err) {
      return Promise.reject(err);
    }
    const { metadata, options } = setup;
    const signal = opts?.signal;
    if (signal?.aborted) return Promise.reject(cancelledError(path));
    return new Promise((resolve, reject) => {
      const call = state.client.makeUnaryRequest(
        path,
        serialize,
        deserialize,
        create(method.input, req as never),
        metadata,
        options,
        (err, res) => {
          signal?.removeEventListener('abort', onAbort);
          if (err) reject(fromServiceError(err));
          else resolve(res);
        },
      );
      const onAbort = () => call.cancel();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  };
}

function serverStreamCall(state: ClientState, method: DescMethod) {
  const path = methodPath(method);
  const serialize = serializer(method.input);
  const deserialize = deserializer(method.output);
  return (req: unknown, opts?: CallOptions): AsyncIterable<unknown> => ({
    async *[Symbol.asyncIterator]() {
      const { metadata, options } = callSetup(state, method, req, opts);
      const signal = opts?.signal;
      if (signal?.aborted) throw cancelledError(path);
      const call = state.client.makeServerStreamRequest(
        path,
        serialize,
        deserialize,
        create(method.input, req as never),
        metadata,
        options,
      );
      const onAbort = () => call.cancel();
      signal?.addEventListener('abort', onAbort, { once: true });
      let finished = false;
      try {
        for await (const item of call) yield item;
        finished = true;
      } catch (err) {
        finished = true;
        throw isServiceError(err) ? fromServiceError(err) : err;
      } finally {
        signal?.removeEventListener('abort', onAbort);
        if (!finished) call.cancel(); // the consumer stopped early
      }
    },
  });
}

function toMetadata(input: CallOptions['metadata']): grpc.Metadata {
  if (input instanceof grpc.Metadata) return input.clone(); // the token is added: leave the caller's alone
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(input ?? {})) metadata.set(key, value);
  return metadata;
}

function isServiceError(err: unknown): err is grpc.ServiceError {
  return err instanceof Error && typeof (err as Partial<grpc.ServiceError>).code === 'number';
}

function fromServiceError(err: grpc.ServiceError): AppError {
  const fromServer = err.metadata?.get(APP_ERROR_KEY).length > 0;
  const appError = AppError.fromGrpc(err.code, err.details, err, fromServer);
  const retryAfter = fromServer ? Number(err.metadata.get(RETRY_AFTER_KEY)[0]) : Number.NaN;
  if (!Number.isFinite(retryAfter) || retryAfter < 0) return appError;
  return new AppError(appError.code, appError.message, { cause: err, retryAfterMs: retryAfter });
}

function cancelledError(path: string): AppError {
  return AppError.fromGrpc(grpc.status.CANCELLED, `${path} cancelled before it started`);
}
