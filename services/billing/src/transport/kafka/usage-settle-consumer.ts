import { AppError, type createKafka, type Logger, type Publisher, runConsumer, topicName } from '@aigw/common';
import { UsageEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import type { WalletService } from '../../domain/wallet-service.ts';

/** Log type of a consumption (reference-behaviour step 10). */
const CONSUMPTION = 2;

/**
 * Settles relayed requests from their usage events instead of a gRPC call per request on the
 * relay's hot path: the event carries the request id, the user, the token and the final quota,
 * and the settle is idempotent by request id, so redelivery changes nothing. Because the event is
 * durable, a settle is never lost with a relay that dies after answering.
 */
export async function runUsageSettleConsumer(opts: {
  kafka: ReturnType<typeof createKafka>;
  publisher: Publisher;
  logger: Logger;
  wallet: WalletService;
}): Promise<{ stop(): Promise<void> }> {
  return runConsumer({
    kafka: opts.kafka,
    // Prefixed like the topics: stacks (or environments) sharing a cluster must not share a group.
    groupId: topicName('billing.settle'),
    topic: topicName(TOPICS.usage),
    schema: UsageEventSchema,
    logger: opts.logger,
    publisher: opts.publisher,
    handle: async (event) => {
      if (event.type !== CONSUMPTION || !event.requestId || !event.userId) return;
      try {
        await opts.wallet.settle({
          requestId: event.requestId,
          actual: event.quota,
          userId: event.userId,
          tokenId: event.tokenId,
        });
      } catch (err) {
        // Already refunded (a failed attempt): nothing to settle.
        if (err instanceof AppError && err.code === 'FAILED_PRECONDITION') return;
        throw err;
      }
    },
  });
}
