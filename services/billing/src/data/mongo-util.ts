import { nextSequence } from '@aigw/common';
import type { Connection } from 'mongoose';

/** Whether a driver error is a unique-index violation. */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}

/**
 * Inserts a document under the next id of a counter. The MongoDB-compatible server of the local
 * stack (FerretDB 1.x) does not apply concurrent `$inc`s atomically, so two callers can receive
 * the same id: the unique `_id` catches it and we draw again.
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

/** Escapes text for use inside a RegExp. */
export const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Normalises a page request: 1-based page, size default 10, capped at 100. */
export function pageOf(page?: { page: number; pageSize: number }): { page: number; pageSize: number; skip: number } {
  const p = Math.max(1, Math.floor(page?.page || 1));
  const size = Math.min(100, Math.max(1, Math.floor(page?.pageSize || 10)));
  return { page: p, pageSize: size, skip: (p - 1) * size };
}
