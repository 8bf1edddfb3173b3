import mongoose, { type Connection } from 'mongoose';

/**
 * Opens a connection to the service's own database. Each service owns one database and never reads
 * another's. Index builds run at start-up (`syncIndexes` by the caller's models).
 */
export async function connectMongo(url: string, dbName: string): Promise<Connection> {
  const conn = mongoose.createConnection(url, {
    dbName,
    serverSelectionTimeoutMS: 10_000,
    maxPoolSize: 20,
    autoIndex: true,
  });
  await conn.asPromise();
  return conn;
}

/** Readiness probe for a connection. */
export async function pingMongo(conn: Connection): Promise<void> {
  if (!conn.db) throw new Error('mongo not connected');
  await conn.db.admin().command({ ping: 1 });
}
