/** Encodes usage events for benchmarks that publish them directly (bench/e2e.ts's backlog). */

import { UsageEventSchema } from '@aigw/proto/events/v1/events';
import { create, type MessageInitShape, toBinary } from '@bufbuild/protobuf';

export function encodeUsage(init: MessageInitShape<typeof UsageEventSchema>): Buffer {
  return Buffer.from(toBinary(UsageEventSchema, create(UsageEventSchema, init)));
}
