import { type DescMessage, fromBinary } from '@bufbuild/protobuf';
import type { KafkaMessage } from 'kafkajs';
import type { BatchItem, Publisher } from '../kafka.ts';
import type { Logger } from '../logger.ts';
import { kafkaBatchesAbandoned, kafkaConsumed, kafkaDeadLetters } from '../metrics.ts';
import { HeartbeatFailed, OverBudget, sleepWithHeartbeats, withBudget, withHeartbeats } from './budget.ts';

/** An event decoded for the handler, with the message it came from (for the dead-letter topic). */
export interface RawItem<D extends DescMessage> {
  item: BatchItem<D>;
  raw: KafkaMessage;
}

/** What a chunk needs from the batch it runs in. */
export interface ChunkContext {
  heartbeat(): Promise<void>;
  /** False once the consumer stopped or lost the partition. */
  alive(): boolean;
}

/** Network errors, timeouts and unavailable peers: worth retrying for as long as they last. */
export function isTransient(err: unknown): boolean {
  const e = err as { name?: string; code?: string | number; message?: string } | undefined;
  if (!e) return false;
  if (/^Mongo(Network|ServerSelection|NotConnected|PoolClosed|NetworkTimeout)/.test(e.name ?? '')) return true;
  if (typeof e.code === 'string' && TRANSIENT_CODES.has(e.code)) return true;
  return /ECONNREFUSED|ECONNRESET|ETIMEDOUT|Deadline exceeded|connection .*closed/i.test(e.message ?? '');
}
const TRANSIENT_CODES = new Set([
  'UNAVAILABLE',
  'DEADLINE_EXCEEDED',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
]);

const errorText = (err: unknown) => String(err instanceof Error ? err.message : err);

export type DeadLetter = (m: KafkaMessage, err: unknown, why: string) => Promise<void>;

/** Publishes a message as it came to the dead-letter topic, with why in its headers. */
export function deadLetterer(o: {
  publisher: Publisher;
  dlq: string;
  topic: string;
  groupId: string;
  log: Logger;
}): DeadLetter {
  return async (m, err, why) => {
    const offset = m.offset;
    o.log.error({ err, offset, why }, 'event dead-lettered');
    await o.publisher.publishRaw(o.dlq, [
      {
        key: m.key?.toString() ?? '',
        value: m.value ?? Buffer.alloc(0),
        headers: { 'x-error': errorText(err), 'x-source-topic': o.topic, 'x-source-offset': offset },
      },
    ]);
    kafkaConsumed.inc({ topic: o.topic, result: 'dead_lettered' });
    kafkaDeadLetters.inc({ group: o.groupId });
  };
}

/** A chunk's events decoded; an undecodable one goes to the dead-letter topic at once. */
export async function decodeChunk<D extends DescMessage>(
  schema: D,
  partition: number,
  chunk: KafkaMessage[],
  deadLetter: DeadLetter,
): Promise<RawItem<D>[]> {
  const items: RawItem<D>[] = [];
  for (const m of chunk) {
    try {
      const event = fromBinary(schema, m.value ?? new Uint8Array());
      items.push({ item: { event, key: m.key?.toString() ?? '', partition, offset: m.offset }, raw: m });
    } catch (err) {
      await deadLetter(m, err, 'undecodable');
    }
  }
  return items;
}

export interface ChunkDeps<D extends DescMessage> {
  handleBatch(items: BatchItem<D>[]): Promise<void>;
  topic: string;
  groupId: string;
  log: Logger;
  maxAttempts: number;
  budgetMs: number;
  heartbeatMs: number;
  deadLetter: DeadLetter;
  /** The handler ran over its budget: drop the consumer, a new one fetches the batch again. */
  abandon(reason: string): void;
}

type Outcome = { kind: 'handled' } | { kind: 'gone' } | { kind: 'failed'; err: unknown };

/**
 * Hands a chunk over: retried with backoff (transient errors for as long as they last, others
 * `maxAttempts` times), then halved until the poison events are alone, which are dead-lettered.
 * Resolves false when the consumer stopped or lost the partition meanwhile (nothing may be
 * resolved then); a failed heartbeat (the group moved on) is thrown.
 */
export function chunkHandler<D extends DescMessage>(
  deps: ChunkDeps<D>,
): (items: RawItem<D>[], ctx: ChunkContext) => Promise<boolean> {
  const attempts = async (items: RawItem<D>[], ctx: ChunkContext): Promise<Outcome> => {
    for (let attempt = 1; ; attempt++) {
      if (!ctx.alive()) return { kind: 'gone' };
      try {
        await withHeartbeats(
          () => withBudget(deps.handleBatch(items.map((x) => x.item)), deps.budgetMs),
          ctx.heartbeat,
          deps.heartbeatMs,
        );
        kafkaConsumed.inc({ topic: deps.topic, result: attempt === 1 ? 'ok' : 'retried' }, items.length);
        return { kind: 'handled' };
      } catch (err) {
        // The group moved on (rebalance, forgotten member): kafkajs rejoins; nothing is resolved.
        if (err instanceof HeartbeatFailed) throw err.cause;
        if (err instanceof OverBudget) {
          abandon(items);
          return { kind: 'gone' };
        }
        const transient = isTransient(err);
        if (!transient && attempt >= deps.maxAttempts) return { kind: 'failed', err };
        if (attempt === 1 || attempt % 10 === 0)
          deps.log.warn({ err, attempt, events: items.length, transient }, 'batch failed; retrying');
        await sleepWithHeartbeats(Math.min(100 * 2 ** attempt, 5_000), ctx.heartbeat, deps.heartbeatMs);
      }
    }
  };

  // The call may never return: leave it, and let a new consumer fetch the batch again.
  const abandon = (items: RawItem<D>[]) => {
    deps.log.error(
      { events: items.length, budgetMs: deps.budgetMs, offset: items[0]?.item.offset },
      'batch exceeded its budget; abandoned, the consumer is replaced and the batch fetched again',
    );
    kafkaBatchesAbandoned.inc({ group: deps.groupId });
    deps.abandon('batch over budget');
  };

  const handle = async (items: RawItem<D>[], ctx: ChunkContext): Promise<boolean> => {
    if (items.length === 0) return true;
    const outcome = await attempts(items, ctx);
    if (outcome.kind !== 'failed') return outcome.kind === 'handled';
    if (items.length > 1) {
      const half = Math.ceil(items.length / 2);
      return (await handle(items.slice(0, half), ctx)) && (await handle(items.slice(half), ctx));
    }
    const only = items[0];
    if (only) await deps.deadLetter(only.raw, outcome.err, 'handler kept failing');
    return true;
  };
  return handle;
}
