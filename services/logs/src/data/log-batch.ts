/**
 * A batch's insert, the same on both stores (domain/log-store.ts): ids drawn from the `logs`
 * counter, rows keyed by event id, duplicates sorted into redeliveries (stored before from the same
 * partition offset, `src`) and second publishes (another offset: logged and summed once already).
 */
import { nextSequence } from '@aigw/common';
import type { Connection } from 'mongoose';
import type { NewLog } from '../domain/log-record.ts';
import type { StoredBatch } from '../domain/log-store.ts';
import type { Duplicate, StoredLog } from './log-rows.ts';

/**
 * Stores `docs` through `insert` (unordered: a duplicate fails alone). Returns the event ids stored
 * now, and those stored before from the same partition offset (`src`): a redelivery, whose
 * aggregation may not have finished; a second publish of an event (another offset) is neither.
 */
export async function storeBatch(
  conn: Connection,
  docs: (NewLog & { src: string })[],
  insert: (rows: (StoredLog & { src: string })[]) => Promise<Duplicate<StoredLog & { src: string }>[]>,
): Promise<StoredBatch> {
  const firstOf = new Set<string>();
  const unique = docs.filter((d) => !firstOf.has(d.event_id) && firstOf.add(d.event_id));
  const inserted = new Set<string>();
  const replayed = new Set<string>();
  const ids = new Map<string, number>();
  if (unique.length === 0) return { inserted, replayed, ids };
  const last = await nextSequence(conn, 'logs', unique.length);
  const stored = unique.map((d, i) => ({ ...d, _id: d.event_id, id: last - unique.length + 1 + i }));
  for (const r of stored) ids.set(r.event_id, r.id);
  const dups = await insert(stored);
  const dupIds = new Set(dups.map((d) => d.row.event_id));
  for (const d of unique) if (!dupIds.has(d.event_id)) inserted.add(d.event_id);
  for (const { row, stored: s } of dups) {
    if (s?.src !== row.src) continue;
    replayed.add(row.event_id);
    ids.set(row.event_id, s.id);
  }
  return { inserted, replayed, ids };
}
