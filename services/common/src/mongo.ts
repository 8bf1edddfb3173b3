import mongoose, { type Connection } from 'mongoose';
import type { Logger } from 'pino';
import { watchMonitor } from './mongo-monitor.ts';

/**
 * Opens a connection to the service's own database. Each service owns one database and never reads
 * another's. Index builds run at start-up (`syncIndexes` by the caller's models). A watchdog
 * restarts the driver's server monitor if it goes silent while the server is unknown
 * (mongo-monitor.ts).
 */
export async function connectMongo(url: string, dbName: string, logger?: Logger): Promise<Connection> {
  const conn = mongoose.createConnection(url, {
    dbName,
    serverSelectionTimeoutMS: 10_000,
    maxPoolSize: 20,
    autoIndex: true,
  });
  await conn.asPromise();
  const watchdog = watchMonitor(conn.getClient(), { db: dbName, logger });
  conn.once('close', () => watchdog.stop());
  return conn;
}

/** Readiness probe for a connection. */
export async function pingMongo(conn: Connection): Promise<void> {
  if (!conn.db) throw new Error('mongo not connected');
  await conn.db.admin().command({ ping: 1 });
}

/**
 * A number for an `$inc` of a sum that may pass 2^31 (quota, ids), sent as a double. The driver
 * sends an integer that fits as a 32-bit one, and FerretDB keeps the `$inc` of a 32-bit field in
 * 32 bits, wrapping past 2^31 (2,000,000,000 + 500,000,000 read back -1,794,967,296); MongoDB
 * would widen it to 64 bits. A double is exact up to 2^53, and a field stored as a 32-bit integer
 * becomes a double at its next `$inc` by one.
 */
export const wideSum = (n: number): mongoose.mongo.Double => new mongoose.mongo.Double(n);

/**
 * Next value of a named counter (numeric ids like the spec's). Atomic through findOneAndUpdate
 * with $inc and upsert, which the MongoDB-compatible server supports without transactions.
 */
export async function nextSequence(conn: Connection, name: string, by = 1): Promise<number> {
  const doc = await conn
    .collection<{ _id: string; seq: number }>('counters')
    .findOneAndUpdate({ _id: name }, { $inc: { seq: wideSum(by) } }, { upsert: true, returnDocument: 'after' });
  if (!doc) throw new Error(`counter ${name} not returned`);
  return doc.seq;
}

/**
 * Whether a driver error is a unique-index violation (E11000), also when a bulk write reports it
 * for each of its failed documents and nothing else failed.
 */
export function isDuplicateKey(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown; writeErrors?: { code?: unknown }[] };
  if (e.code === DUPLICATE_KEY) return true;
  // FerretDB (SQLite) reports a unique violation by an update as InternalError, code 1, with
  // SQLite's words (docs/adr/0001): "UNIQUE constraint failed: index '...'".
  if (e.code === 1 && /duplicate|UNIQUE constraint failed/i.test(String(e.message))) return true;
  return (
    Array.isArray(e.writeErrors) && e.writeErrors.length > 0 && e.writeErrors.every((w) => w.code === DUPLICATE_KEY)
  );
}

/** MongoDB's error code of a unique-index violation. */
export const DUPLICATE_KEY = 11000;

/**
 * Inserts under the next id of a counter. Concurrent `$inc`s are not atomic on the local stack's
 * MongoDB-compatible server (FerretDB 1.x), so two callers may draw the same id: the unique `_id`
 * catches it and we draw again.
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

/** Escapes text for use inside a RegExp (a search box's keyword matched literally). */
export const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Normalises a gRPC page request: 1-based page, size default 10, capped at 100. */
export function pageOf(page?: { page: number; pageSize: number }): { page: number; pageSize: number; skip: number } {
  const p = Math.max(1, Math.floor(page?.page || 1));
  const size = Math.min(100, Math.max(1, Math.floor(page?.pageSize || 10)));
  return { page: p, pageSize: size, skip: (p - 1) * size };
}

/**
 * The positions of the documents an unordered insertMany refused as duplicates, when those are
 * all it refused (undefined otherwise: the caller rethrows). The driver gives one write error
 * as an object and several as an array.
 */
export function duplicateIndexes(err: unknown): number[] | undefined {
  const raw = (err as { writeErrors?: unknown } | undefined)?.writeErrors;
  const list = (Array.isArray(raw) ? raw : raw ? [raw] : []) as { index: number; code?: number }[];
  if (list.length === 0 || list.some((w) => w.code !== DUPLICATE_KEY)) return undefined;
  return list.map((w) => w.index);
}
