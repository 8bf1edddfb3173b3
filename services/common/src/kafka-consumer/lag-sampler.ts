import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from '../logger.ts';
import { kafkaConsumerLag, kafkaOldestUnhandled } from '../metrics.ts';
import type { Membership } from './membership.ts';

export interface LagSampler {
  /** Stops sampling and lets go of the admin client. */
  stop(): Promise<void>;
  /** Removes the lag and oldest-event gauges this consumer set. */
  removeGauges(): void;
}

/** A partition's lag from its committed offset; without one, all of it when reading from the beginning. */
export function partitionLag(committed: number, high: number, low: number, fromBeginning: boolean): number {
  if (committed >= 0) return Math.max(0, high - committed);
  return fromBeginning ? high - low : 0;
}

/**
 * Every `everyMs`: the group's lag from its committed offsets (the `kafka_consumer_lag` gauge and
 * the assigned partitions' sum in `m.assignedLag`), progress when there is nothing to do, and the
 * oldest unhandled event's age; then `afterSample` (health and the watchdog).
 */
export function startLagSampler(o: {
  kafka: Kafka;
  groupId: string;
  topic: string;
  fromBeginning: boolean;
  membership: Membership;
  everyMs: number;
  log: Logger;
  afterSample(): void;
}): LagSampler {
  const m = o.membership;
  const labels = { group: o.groupId, topic: o.topic };
  const partitions = new Set<string>();
  let admin: Admin | undefined;
  let sampling = false;

  const sample = async () => {
    admin ??= o.kafka.admin();
    await admin.connect();
    const [committed, ends] = await Promise.all([
      admin.fetchOffsets({ groupId: o.groupId, topics: [o.topic] }),
      admin.fetchTopicOffsets(o.topic),
    ]);
    const byPartition = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)] as const));
    let mine = 0;
    for (const e of ends) {
      const lag = partitionLag(byPartition.get(e.partition) ?? -1, Number(e.high), Number(e.low), o.fromBeginning);
      kafkaConsumerLag.set({ ...labels, partition: String(e.partition) }, lag);
      partitions.add(String(e.partition));
      if (m.assigned.includes(e.partition)) mine += lag;
    }
    m.assignedLag = m.member ? mine : 0;
    if (m.member && mine === 0 && m.inFlight === 0) m.lastProgressMs = Date.now();
  };

  const tick = async () => {
    if (sampling || m.stopping) return;
    sampling = true;
    try {
      await sample();
    } catch (err) {
      o.log.debug({ err }, 'lag sample failed');
    } finally {
      sampling = false;
    }
    const oldest = Math.min(...m.pendingSince.values());
    kafkaOldestUnhandled.set(labels, Number.isFinite(oldest) ? Math.max(0, (Date.now() - oldest) / 1000) : 0);
    o.afterSample();
  };
  const timer = setInterval(() => void tick(), o.everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await admin?.disconnect().catch(() => undefined);
    },
    removeGauges() {
      kafkaOldestUnhandled.remove(labels);
      for (const partition of partitions) kafkaConsumerLag.remove({ group: o.groupId, topic: o.topic, partition });
    },
  };
}
