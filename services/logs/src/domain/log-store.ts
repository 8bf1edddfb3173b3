/**
 * The logs service's storage port: what the use cases, the consumers and the background work ask
 * of the store. Two adapters, chosen once by MONGO_FLAVOR (data/log-stores.ts):
 *
 * - `ferretdb` (data/log-repository.ts): the day partitions and the list read model (directories,
 *   blocks, segments, cubes), every read by `_id`, the only filter FerretDB v1 on SQLite answers
 *   from an index;
 * - `mongodb` (data/plain-log-store.ts): the rows alone in one collection, answered by ordinary
 *   queries (find + sort + skip/limit, countDocuments, `$group`) that MongoDB's indexes serve.
 *
 * Both answer the same rows in the same order (newest hour first, then arrival), the same totals
 * and the same sums (test/log-store-flavors.test.ts). The dashboard's day buckets are the same
 * code in both (quota_data, written exactly once per partition offset).
 */
import type { Logger } from '@aigw/common';
import type { CleanupResult } from '../data/log-cleanup.ts';
import type { LogQuery } from '../data/log-filter.ts';
import type { Indexable } from './log-index.ts';
import type { Retention } from './log-partitions.ts';
import type { Bucket, LogDoc, NewLog, PartitionLog } from './log-record.ts';

/**
 * A stored log to add to the lists, with the offset it was read at and its partition's watermark
 * key (`usage|p<n>`, `audit|p<n>`); `fresh`: stored just now.
 */
export interface ToIndex {
  log: Indexable & { hidden?: boolean };
  key: string;
  offset: number;
  fresh: boolean;
}

/** What a batch's insert did: event ids stored now, those a redelivery stored before, their ids. */
export interface StoredBatch {
  inserted: Set<string>;
  replayed: Set<string>;
  ids: Map<string, number>;
}

/** Quota over a filter; requests and tokens over the last 60 seconds. */
export interface LogStat {
  quota: number;
  rpm: number;
  tpm: number;
}

/** A pass of the history cut and the retention (one at a time per process; idempotent). */
export interface LogCleaner {
  run(now?: number): Promise<CleanupResult>;
}

/** The store's own background work (the read model's cubes; nothing for the plain store). */
export interface LogJobs {
  start(): void;
  stop(): Promise<void>;
}

export interface LogStore {
  readonly flavor: 'ferretdb' | 'mongodb';
  /** Creates the indexes the store's reads need (at start). */
  ensureIndexes(): Promise<void>;
  /** Stores a batch of logs keyed by event id (a duplicate is a log stored before). */
  insertBatch(docs: (NewLog & { src: string })[]): Promise<StoredBatch>;
  /**
   * Makes a batch's stored logs visible to the pages; `marks`: per watermark key (topic and
   * partition), the batch's last offset.
   */
  indexBatch(list: ToIndex[], marks: Map<string, number>): Promise<void>;
  /** Sums consumption logs (of one or more partitions) into the dashboard's buckets, exactly once. */
  applyBuckets(rows: PartitionLog[]): Promise<number>;
  /** Folds older versions' pending logs into their buckets, a batch at a time (0: none left). */
  applyPending(limit?: number): Promise<number>;
  /** Brings logs stored in the other shape (older versions, the other flavor) into this one, once. */
  adopt(): Promise<number>;
  find(q: LogQuery, page: number, pageSize: number): Promise<{ items: LogDoc[]; total: number }>;
  stat(q: LogQuery, now?: number): Promise<LogStat>;
  /** Every log `q` selects (its window bounded), in chunks, paced by the reader. */
  exportRows(q: LogQuery, opts?: { chunk?: number; now?: number }): AsyncGenerator<LogDoc[]>;
  /** Every query starts at `ts` from now on; returns the listed logs before it (deleted by cleanup). */
  deleteBefore(ts: number): Promise<number>;
  dashboard(q: { user_id?: number; username?: string; start: number; end: number }): Promise<Bucket[]>;
  cleaner(logger: Logger, retention: () => Retention): LogCleaner;
  jobs(logger: Logger, intervalMs: number): LogJobs;
}
