/** Task charges and refunds as UsageEvents (the logs service writes one log per event id). */
import { type Publisher, topicName } from '@aigw/common';
import { LogType } from '@aigw/proto/common/v1/common';
import { UsageEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import type { TaskUsage, UsagePort } from '../../domain/ports.ts';

export function usagePublisher(publisher: Publisher): UsagePort {
  return {
    publish: (u: TaskUsage) =>
      publisher.publish(
        topicName(TOPICS.usage),
        UsageEventSchema,
        {
          eventId: u.eventId,
          occurredAtMs: Date.now(),
          // Billing settles type-2 usage events that carry a request id (usage-settle-consumer):
          // a task's charge stays a reservation until the task succeeds, so its event carries none.
          requestId: u.type === LogType.CONSUME ? '' : u.requestId,
          userId: u.userId,
          username: u.username,
          tokenId: u.tokenId,
          tokenName: u.tokenName,
          modelName: u.model,
          upstreamModelName: u.model,
          channelId: u.channelId,
          channelsTried: [u.channelId],
          quota: u.quota,
          type: u.type,
          content: u.content,
          group: u.group,
          ratios: { modelPrice: u.modelPrice, groupRatio: u.groupRatio },
          ip: u.ip,
          statusCode: 200,
          other: JSON.stringify({ ...u.other, task_request_id: u.requestId }),
        },
        String(u.userId),
      ),
  };
}
