import type { DescMessage, DescMethod, DescService, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import type * as grpc from '@grpc/grpc-js';

/** What a server handler learns about its call besides the request. */
export interface CallContext {
  /** Request metadata (headers) sent by the client. */
  metadata: grpc.Metadata;
  /** The call's deadline (a Date), or Infinity when the client set none. */
  deadline: grpc.Deadline;
  /** Aborted when the client cancels, the deadline passes or the server shuts down. */
  signal: AbortSignal;
  /** Full method path, e.g. `/aigw.relay.v1.RelayAdminService/TestChannel`. */
  method: string;
  /** The client's address. */
  peer: string;
  /** The calling service, as its internal token proves (unset on unauthenticated services). */
  caller?: string;
}

/** Handler of a unary method: resolves with the response (a message or its init shape). */
export type UnaryImpl<I extends DescMessage, O extends DescMessage> = (
  req: MessageShape<I>,
  ctx: CallContext,
) => Promise<MessageInitShape<O>>;

/** Handler of a server-streaming method: yields the responses. */
export type ServerStreamingImpl<I extends DescMessage, O extends DescMessage> = (
  req: MessageShape<I>,
  ctx: CallContext,
) => AsyncIterable<MessageInitShape<O>>;

/** The handler type for one method descriptor (client and bidi streaming are not supported). */
export type MethodImpl<M> = M extends { methodKind: 'unary'; input: infer I; output: infer O }
  ? I extends DescMessage
    ? O extends DescMessage
      ? UnaryImpl<I, O>
      : never
    : never
  : M extends { methodKind: 'server_streaming'; input: infer I; output: infer O }
    ? I extends DescMessage
      ? O extends DescMessage
        ? ServerStreamingImpl<I, O>
        : never
      : never
    : never;

/**
 * A full implementation of a generated service: one handler per method, keyed by the method's
 * local (camelCase) name, e.g. `{ testChannel: async (req, ctx) => ({ success: true }) }`.
 */
export type ServiceImpl<S extends DescService> = {
  [K in keyof S['method']]: MethodImpl<S['method'][K]>;
};

/** Per-call options of a client method. */
export interface CallOptions {
  /** Overrides the client's default deadline for this call (milliseconds from now). */
  deadlineMs?: number;
  /** Request metadata: a grpc Metadata or plain string pairs. */
  metadata?: grpc.Metadata | Record<string, string>;
  /** Cancels the call when aborted (the promise rejects). */
  signal?: AbortSignal;
}

/** Client side of a unary method. */
export type UnaryClientMethod<I extends DescMessage, O extends DescMessage> = (
  req: MessageInitShape<I>,
  opts?: CallOptions,
) => Promise<MessageShape<O>>;

/** Client side of a server-streaming method. */
export type ServerStreamingClientMethod<I extends DescMessage, O extends DescMessage> = (
  req: MessageInitShape<I>,
  opts?: CallOptions,
) => AsyncIterable<MessageShape<O>>;

/** The client method type for one method descriptor. */
export type ClientMethod<M> = M extends { methodKind: 'unary'; input: infer I; output: infer O }
  ? I extends DescMessage
    ? O extends DescMessage
      ? UnaryClientMethod<I, O>
      : never
    : never
  : M extends { methodKind: 'server_streaming'; input: infer I; output: infer O }
    ? I extends DescMessage
      ? O extends DescMessage
        ? ServerStreamingClientMethod<I, O>
        : never
      : never
    : never;

/** A typed, promisified client of a generated service, plus `close()`. */
export type ServiceClient<S extends DescService> = {
  [K in keyof S['method']]: ClientMethod<S['method'][K]>;
} & {
  /** Releases the client's hold on the shared channel (closed when its last client closes). */
  close(): void;
};

/** The gRPC path of a method: `/<package>.<Service>/<Method>`. */
export function methodPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}
