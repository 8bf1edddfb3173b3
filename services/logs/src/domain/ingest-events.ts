/**
 * Usage and audit events -> logs and hourly buckets, a batch at a time (the usage consumer's
 * batch holds the partitions' batches of one fetch), exactly once: logs are keyed by event id (a
 * replay inserts nothing), and a bucket and the lists only take the logs above the offset they
 * recorded for the log's partition (a replay, or a batch cut differently after a crash, adds
 * nothing).
 */
import type { AuditEvent, UsageEvent } from '@aigw/proto/events/v1/events';
import { logFromAudit, logFromUsage, type NewLog, type PartitionLog } from './log-record.ts';
import type { LogStore, ToIndex } from './log-store.ts';

/** An event with where it was read (a batch holds each partition's events in offset order). */
export interface ReadEvent<E> {
  event: E;
  partition: number;
  offset: string;
}

export type IngestRepo = Pick<LogStore, 'insertBatch' | 'applyBuckets' | 'indexBatch'>;

/** The batch's stored logs (first copy of an event id) for the lists, with their ids. */
function listed<E>(
  topic: string,
  docs: NewLog[],
  batch: ReadEvent<E>[],
  r: { inserted: Set<string>; replayed: Set<string>; ids: Map<string, number> },
): ToIndex[] {
  const out: ToIndex[] = [];
  const taken = new Set<string>();
  docs.forEach((d, i) => {
    const b = batch[i];
    const id = r.ids.get(d.event_id);
    if (!b || id === undefined || taken.has(d.event_id)) return;
    if (!r.inserted.has(d.event_id) && !r.replayed.has(d.event_id)) return;
    taken.add(d.event_id);
    out.push({
      log: { ...d, id },
      key: `${topic}|p${b.partition}`,
      offset: Number(b.offset),
      fresh: r.inserted.has(d.event_id),
    });
  });
  return out;
}

/** Per partition's watermark key (`<topic>|p<n>`): the batch's last offset of that partition. */
function lastOffsets<E>(topic: string, batch: ReadEvent<E>[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const b of batch) {
    const key = `${topic}|p${b.partition}`;
    out.set(key, Math.max(out.get(key) ?? -1, Number(b.offset)));
  }
  return out;
}

/** Logs a batch of usage events and sums its consumption logs into their buckets. */
export async function ingestUsage(
  repo: IngestRepo,
  batch: ReadEvent<UsageEvent>[],
  flags: { logConsume: boolean; aggregate: boolean },
): Promise<{ inserted: number; summed: number }> {
  // A wallet slice's release is billing's alone: no request, no log row.
  const events = batch.filter((b) => !b.event.sliceRelease);
  const first = events[0];
  if (!first) return { inserted: 0, summed: 0 };
  const docs = events.map((b) => ({ ...logFromUsage(b.event, flags), src: `${b.partition}:${b.offset}` }));
  const stored = await repo.insertBatch(docs);
  const { inserted, replayed } = stored;
  await repo.indexBatch(listed('usage', docs, events, stored), lastOffsets('usage', batch));
  const rows: PartitionLog[] = [];
  // One event id twice in a batch: the first copy is the one stored, and the one summed.
  const taken = new Set<string>();
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i];
    const b = events[i];
    if (!d || !b || d.agg !== 'inline' || taken.has(d.event_id)) continue;
    taken.add(d.event_id);
    if (inserted.has(d.event_id) || replayed.has(d.event_id))
      rows.push({ log: d, offset: Number(b.offset), partition: b.partition });
  }
  const summed = await repo.applyBuckets(rows);
  return { inserted: inserted.size, summed };
}

/** Logs a batch of audit events (top-up, admin, system). */
export async function ingestAudit(repo: IngestRepo, batch: ReadEvent<AuditEvent>[]): Promise<{ inserted: number }> {
  const first = batch[0];
  if (!first) return { inserted: 0 };
  const docs = batch.map((b) => ({ ...logFromAudit(b.event), src: `${b.partition}:${b.offset}` }));
  const stored = await repo.insertBatch(docs);
  await repo.indexBatch(listed('audit', docs, batch, stored), lastOffsets('audit', batch));
  return { inserted: stored.inserted.size };
}
