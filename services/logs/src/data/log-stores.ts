/** The logs store of the configured flavor (MONGO_FLAVOR; the port is domain/log-store.ts). */
import type { MongoFlavor } from '@aigw/common';
import type { Connection } from 'mongoose';
import type { LogStore } from '../domain/log-store.ts';
import { logRepository } from './log-repository.ts';
import { plainLogStore } from './plain-log-store.ts';

/** `ferretdb`: the day partitions and the list read model; `mongodb`: the rows and MongoDB's indexes. */
export function openLogStore(conn: Connection, flavor: MongoFlavor): LogStore {
  return flavor === 'mongodb' ? plainLogStore(conn) : logRepository(conn);
}
