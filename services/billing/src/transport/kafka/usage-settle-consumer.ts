import {
  type BatchItem,
  billingSettleDelay,
  type ConsumerHandle,
  type createKafka,
  type Logger,
  type Publisher,
  runBatchConsumer,
  topicName,
  usagePace,
} from '@aigw/common';
import { UsageEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import type { WalletService } from '../../domain/wallet-service.ts';

/** Log types (reference-behaviour step 10): 2 consumption, 5 error. */
const CONSUMPTION = 2;
const ERROR = 5;

/** The consumer group that settles usage (the lag monitor reads its committed offsets). */
export const settleGroupId = () => topicName('billing.settle');

/**
 * Settles relayed requests from their usage events instead of a gRPC call per request on the
 * relay's hot path, and refunds failed ones: a consumption event settles its request id (charges
 * its quota), an error event refunds whatever its pre-consume held. Both are closes of the request
 * id, so redelivery (or a refund the relay already made directly) changes nothing. A request drawn
 * from a relay's wallet slice is charged from that slice's hold; the slice's release event (same
 * key, so after every request drawn from it) gives back what is left. Because the
 * event is durable, neither is lost with a relay that dies after answering.
 *
 * Events come in batches (the partitions' batches of one fetch together, each in offset order):
 * all closes are submitted at once, so the ledger writes them in one round: one idempotency
 * lookup, one entry per user with all of the user's closes summed in it, one insert of markers.
 * Offsets move only after that round is durable.
 */
export async function runUsageSettleConsumer(opts: {
  kafka: ReturnType<typeof createKafka>;
  publisher: Publisher;
  logger: Logger;
  wallet: WalletService;
  maxBatchSize?: number;
}): Promise<ConsumerHandle> {
  return runBatchConsumer({
    kafka: opts.kafka,
    // Prefixed like the topics: stacks (or environments) sharing a cluster must not share a group.
    groupId: settleGroupId(),
    topic: topicName(TOPICS.usage),
    ...usagePace('billing'),
    mergePartitions: true,
    schema: UsageEventSchema,
    logger: opts.logger,
    publisher: opts.publisher,
    maxBatchSize: opts.maxBatchSize ?? 1_000,
    handleBatch: async (items: BatchItem<typeof UsageEventSchema>[]) => {
      const closes = [];
      const times: number[] = [];
      for (const { event } of items) {
        if (!event.requestId || !event.userId) continue;
        if (event.sliceRelease) {
          // The release of a wallet slice: what is left of its hold goes back (a refund of its id).
          closes.push({ requestId: event.requestId, userId: event.userId, tokenId: 0, release: true });
        } else if (event.type === CONSUMPTION) {
          closes.push({
            requestId: event.requestId,
            userId: event.userId,
            tokenId: event.tokenId,
            actual: event.quota,
            ...(event.walletSlice ? { slice: event.walletSlice } : {}),
          });
        } else if (event.type === ERROR) {
          closes.push({ requestId: event.requestId, userId: event.userId, tokenId: event.tokenId });
        }
      }
      for (const { event } of items) if (event.requestId && event.userId) times.push(Number(event.occurredAtMs));
      if (closes.length > 0) await opts.wallet.closeMany(closes);
      const now = Date.now();
      for (const at of times) if (at > 0) billingSettleDelay.observe(Math.max(0, now - at) / 1000);
    },
  });
}
