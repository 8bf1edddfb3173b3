import { randomUUID } from 'node:crypto';
import { type Logger, type Publisher, topicName } from '@aigw/common';
import {
  EntityChangedEvent_Action,
  EntityChangedEvent_Kind,
  EntityChangedEventSchema,
} from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import type { UserChanges, UserStore } from '../../domain/ports.ts';

/** The user fields other services cache (the relay: status, group, role, deletion, name). */
const CACHED_FIELDS: readonly (keyof UserChanges)[] = ['status', 'group', 'role', 'deleted_at', 'username'];

/**
 * A UserStore that announces changes of cached fields as EntityChangedEvent{kind: USER} (key
 * user:<id>), so that relays drop the user at once instead of serving a disabled, deleted or
 * regrouped user from cache until its TTL ends. The event follows the write; a failed publish is
 * logged and the TTL bounds the staleness.
 */
export function announcingUserStore(store: UserStore, publisher: Publisher, logger: Logger): UserStore {
  const announce = async (id: number, deleted: boolean) => {
    try {
      await publisher.publish(
        topicName(TOPICS.entityChanged),
        EntityChangedEventSchema,
        {
          eventId: randomUUID(),
          occurredAtMs: Date.now(),
          kind: EntityChangedEvent_Kind.USER,
          id,
          userId: id,
          action: deleted ? EntityChangedEvent_Action.DELETED : EntityChangedEvent_Action.UPDATED,
        },
        `user:${id}`,
      );
    } catch (err) {
      logger.warn({ err, userId: id }, 'user change not announced (caches expire on their own)');
    }
  };
  return {
    ...store,
    async update(id, changes) {
      const updated = await store.update(id, changes);
      if (updated && CACHED_FIELDS.some((f) => changes[f] !== undefined))
        await announce(id, Boolean(changes.deleted_at));
      return updated;
    },
  };
}
