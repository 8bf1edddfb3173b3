import { randomUUID } from 'node:crypto';
import { type Publisher, topicName } from '@aigw/common';
import { AuditEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';

/** A log-worthy action taken through /api (the logs service turns it into a log entry). */
export interface GatewayAudit {
  userId: number;
  username: string;
  /** 3 admin, 4 system (a user's own security change: 2FA on or off). */
  type: 3 | 4;
  content: string;
  actorUserId: number;
  ip: string;
}

export type AuditSink = (record: GatewayAudit) => Promise<void>;

/** Audit events to aigw.audit.v1 (key: user id), like the owners' own audit events. */
export function auditSink(publisher: Publisher): AuditSink {
  return (r) =>
    publisher.publish(
      topicName(TOPICS.audit),
      AuditEventSchema,
      {
        eventId: `gateway:${randomUUID()}`,
        occurredAtMs: Date.now(),
        userId: r.userId,
        username: r.username,
        type: r.type,
        content: r.content,
        quotaDelta: 0,
        actorUserId: r.actorUserId,
        ip: r.ip,
      },
      String(r.userId),
    );
}
