import { type createKafka, type Logger, outageLog, type Redis } from '@aigw/common';

/** The Redis key relays read to decide whether settles keep up (see docs/security.md ("Overspend bound")). */
export const SETTLE_LAG_KEY = 'billing:settle-lag';

/** What billing publishes about its settle backlog. */
export interface SettleLag {
  /** Usage events not yet settled (high watermarks minus the group's committed offsets). */
  events: number;
  /** How long the oldest unsettled event has been waiting, in ms (0 when caught up). */
  ms: number;
  /** When this was measured (Unix ms). */
  at: number;
}

/**
 * Measures the settle consumer group's backlog every `everyMs` from the topic's high watermarks
 * and the group's committed offsets (so a consumer that stalled, or left its group, shows as a
 * growing backlog), and writes it to Redis with a short TTL. A relay that finds the key missing
 * or old treats settles as behind: a billing that stopped measuring, or whose consumer is not
 * consuming, fails safe.
 */
export function watchSettleLag(opts: {
  kafka: ReturnType<typeof createKafka>;
  redis: Redis;
  topic: string;
  groupId: string;
  logger: Logger;
  /** Whether this replica's settle consumer is in its group and consuming; if not, nothing is written. */
  consuming(): boolean;
  everyMs?: number;
  ttlMs?: number;
}): { stop(): Promise<void>; current(): SettleLag | undefined } {
  const everyMs = opts.everyMs ?? 1_000;
  const ttlMs = opts.ttlMs ?? 5_000;
  const admin = opts.kafka.admin();
  let connected = false;
  let stopped = false;
  let last: SettleLag | undefined;
  // Per partition: recent (time, high watermark) samples, to date the oldest unsettled event.
  const history = new Map<number, { t: number; hw: number }[]>();

  async function measure(): Promise<SettleLag> {
    if (!connected) {
      await admin.connect();
      connected = true;
    }
    const [ends, groups] = await Promise.all([
      admin.fetchTopicOffsets(opts.topic),
      admin.fetchOffsets({ groupId: opts.groupId, topics: [opts.topic] }),
    ]);
    const committed = new Map<number, number>();
    for (const p of groups[0]?.partitions ?? []) committed.set(p.partition, Number(p.offset));
    const now = Date.now();
    let events = 0;
    let ms = 0;
    for (const p of ends) {
      const hw = Number(p.high);
      const low = Number(p.low);
      // -1: the group never committed on this partition; it owes everything since the low watermark.
      const done = Math.max(committed.get(p.partition) ?? -1, low);
      const samples = history.get(p.partition) ?? [];
      samples.push({ t: now, hw });
      while (samples.length > 600) samples.shift();
      history.set(p.partition, samples);
      const owed = Math.max(0, hw - done);
      events += owed;
      if (owed === 0) continue;
      // The newest sample whose high watermark the group had already passed: everything written
      // after it is unsettled, so the oldest unsettled event is at most (now - its time) old.
      let since = samples[0]?.t ?? now;
      for (const s of samples) if (s.hw <= done) since = s.t;
      ms = Math.max(ms, now - since);
    }
    return { events, ms, at: now };
  }

  // Tried every second: an outage (Redis, Kafka) is told once, and its end once.
  const outage = outageLog(opts.logger, {
    down: 'could not measure the settle lag: relays pre-consume every request until it is written (logged once per outage)',
    back: 'settle lag measured again',
  });
  const tick = async () => {
    try {
      last = await measure();
      // A consumer that stopped or left its group lets the key expire: relays then fail safe
      // at once instead of after the backlog has grown past the bound.
      if (!opts.consuming()) return;
      await opts.redis.set(SETTLE_LAG_KEY, JSON.stringify(last), 'PX', ttlMs);
      outage.ok();
    } catch (err) {
      outage.failed(err);
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const loop = async () => {
    await tick();
    if (!stopped) timer = setTimeout(() => void loop(), everyMs);
  };
  void loop();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (connected) await admin.disconnect().catch(() => undefined);
    },
    current: () => last,
  };
}
