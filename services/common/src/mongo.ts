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
 * Next value of a named counter (numeric ids like the spec's). Atomic through findOneAndUpdate
 * with $inc and upsert, which the MongoDB-compatible server supports without transactions.
 */
export async function nextSequence(conn: Connection, name: string, by = 1): Promise<number> {
  const doc = await conn
    .collection<{ _id: string; seq: number }>('counters')
    .findOneAndUpdate({ _id: name }, { $inc: { seq: by } }, { upsert: true, returnDocument: 'after' });
  if (!doc) throw new Error(`counter ${name} not returned`);
  return doc.seq;
}
