import { randomUUID } from 'node:crypto';
import { type Publisher, topicName } from '@aigw/common';
import {
  AuditEventSchema,
  EntityChangedEvent_Action,
  EntityChangedEvent_Kind,
  EntityChangedEventSchema,
} from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import type { BillingEvents } from '../../domain/ports.ts';

const ACTION = {
  created: EntityChangedEvent_Action.CREATED,
  updated: EntityChangedEvent_Action.UPDATED,
  deleted: EntityChangedEvent_Action.DELETED,
} as const;

/**
 * Audit events (key: user id), token cache invalidations (key: token:<id>) and wallet changes
 * (a USER event, key: user:<id>; relays drop the user's cached balance on it).
 */
export function billingEvents(publisher: Publisher): BillingEvents {
  return {
    audit: (r) =>
      publisher.publish(
        topicName(TOPICS.audit),
        AuditEventSchema,
        {
          eventId: r.eventId,
          occurredAtMs: Date.now(),
          userId: r.userId,
          username: r.username,
          type: r.type,
          content: r.content,
          quotaDelta: r.quotaDelta,
          actorUserId: r.actorUserId,
        },
        String(r.userId),
      ),
    tokenChanged: (c) =>
      publisher.publish(
        topicName(TOPICS.entityChanged),
        EntityChangedEventSchema,
        {
          eventId: randomUUID(),
          occurredAtMs: Date.now(),
          kind: EntityChangedEvent_Kind.TOKEN,
          id: c.id,
          action: ACTION[c.action],
          userId: c.userId,
        },
        `token:${c.id}`,
      ),
    walletChanged: (userId) =>
      publisher.publish(
        topicName(TOPICS.entityChanged),
        EntityChangedEventSchema,
        {
          eventId: randomUUID(),
          occurredAtMs: Date.now(),
          kind: EntityChangedEvent_Kind.USER,
          id: userId,
          action: EntityChangedEvent_Action.UPDATED,
          userId,
        },
        `user:${userId}`,
      ),
  };
}
