import { nextSequence } from '@aigw/common';
import type { Connection } from 'mongoose';

/** Whether a driver error is a unique-index violation (also inside a bulk write error). */
export function isDuplicateKey(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; writeErrors?: { code?: unknown }[] };
  if (e.code === 11000) return true;
  return Array.isArray(e.writeErrors) && e.writeErrors.length > 0 && e.writeErrors.every((w) => w.code === 11000);
}

/**
 * Inserts under the next id of a counter. Concurrent `$inc`s are not atomic on the local stack's
 * MongoDB-compatible server (FerretDB 1.x), so two callers may draw the same id: the unique
 * `_id` catches it and we draw again.
 */
export async function insertWithNextId(
  conn: Connection,
  counter: string,
  insert: (id: number) => Promise<void>,
): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const id = await nextSequence(conn, counter);
    try {
      await insert(id);
      return id;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }
  throw new Error(`could not allocate an id from counter ${counter}`);
}
