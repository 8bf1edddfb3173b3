import { type DescMessage, type DescService, fromBinary, type MessageShape, toBinary } from '@bufbuild/protobuf';
import type * as grpc from '@grpc/grpc-js';
import { methodPath } from './types.ts';

/**
 * Turns a protobuf-es service descriptor into a grpc-js `ServiceDefinition`, keyed by the
 * methods' local (camelCase) names. Messages travel in the protobuf binary encoding
 * (`toBinary` / `fromBinary`), so any gRPC peer speaking the same .proto understands them.
 */
export function toGrpcService(desc: DescService): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const method of desc.methods) {
    definition[method.localName] = {
      path: methodPath(method),
      originalName: method.name,
      requestStream: method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming',
      responseStream: method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming',
      requestSerialize: serializer(method.input) as (msg: unknown) => Buffer,
      requestDeserialize: deserializer(method.input),
      responseSerialize: serializer(method.output) as (msg: unknown) => Buffer,
      responseDeserialize: deserializer(method.output),
    };
  }
  return definition;
}

/** Binary serializer of one message type, as grpc-js wants it. */
export function serializer<D extends DescMessage>(schema: D): (msg: MessageShape<D>) => Buffer {
  return (msg) => {
    const bytes = toBinary(schema, msg);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

/** Binary deserializer of one message type, as grpc-js wants it. */
export function deserializer<D extends DescMessage>(schema: D): (buf: Buffer) => MessageShape<D> {
  return (buf) => fromBinary(schema, buf);
}
