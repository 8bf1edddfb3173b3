import type { Collection, Connection } from 'mongoose';
import { isDuplicateKey } from './mongo-util.ts';

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
    async add(eventId: string) {
      try {
        await coll.insertOne({ _id: eventId, at: Date.now() });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    },
  };
}
