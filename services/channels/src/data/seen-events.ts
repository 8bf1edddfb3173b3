import { isDuplicateKey } from '@aigw/common';
import type { Collection, Connection } from 'mongoose';

interface SeenEvent {
  _id: string;
  at: number;
}

/** Event ids already handled by a consumer (at-least-once delivery made idempotent). */
export function seenEvents(conn: Connection, name: string) {
  const coll = conn.collection<SeenEvent>(`seen_${name}`) as unknown as Collection<SeenEvent>;
  return {
    async has(eventId: string) {
      return (await coll.findOne({ _id: eventId }, { projection: { _id: 1 } })) !== null;
    },
    /** Records a batch of event ids at once; resolves with those not seen before (one insert). */
    async claim(eventIds: string[]): Promise<Set<string>> {
      const ids = [...new Set(eventIds)];
      const fresh = new Set(ids);
      if (ids.length === 0) return fresh;
      const at = Date.now();
      try {
        await coll.insertMany(
          ids.map((_id) => ({ _id, at })),
          { ordered: false },
        );
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        const list = (err as { writeErrors?: { index: number }[] | { index: number } }).writeErrors;
        for (const e of Array.isArray(list) ? list : list ? [list] : []) fresh.delete(ids[e.index] as string);
      }
      return fresh;
    },
    /** Forgets claimed ids (their effect could not be written), one `_id` delete each. */
    async release(eventIds: string[]): Promise<void> {
      await Promise.all(eventIds.map((_id) => coll.deleteOne({ _id })));
    },
    async add(eventId: string) {
      try {
        await coll.insertOne({ _id: eventId, at: Date.now() });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    },
  };
}
