import type { ConsumerHealth } from '../consumer-health.ts';

/**
 * Where a batch consumer stands in its group and how far it got: what health() and the watchdog
 * read. Plain data and pure functions, so each rule is testable without a broker.
 */
export interface Membership {
  stopping: boolean;
  stoppedAt: number;
  /** In the group now (joined, not rebalancing). */
  member: boolean;
  everJoined: boolean;
  leftAt: number;
  leftFor: string;
  joinedAt: number;
  /** When a chunk was last resolved, or the lag sample last found nothing to do. */
  lastProgressMs: number;
  assigned: number[];
  /** Lag summed over the assigned partitions (last sample). */
  assignedLag: number;
  /** Batches being handled now. */
  inFlight: number;
  /** Producer timestamp of the oldest fetched, unhandled event, per partition. */
  pendingSince: Map<number, number>;
}

export const newMembership = (now: number): Membership => ({
  stopping: false,
  stoppedAt: 0,
  member: false,
  everJoined: false,
  leftAt: now,
  leftFor: 'start',
  joinedAt: 0,
  lastProgressMs: 0,
  assigned: [],
  assignedLag: 0,
  inFlight: 0,
  pendingSince: new Map(),
});

/** Out of the group (rebalance, crash, replaced); the first reason counts. */
export function leaveGroup(m: Membership, reason: string, now: number): void {
  if (!m.member) return;
  m.member = false;
  m.leftAt = now;
  m.leftFor = reason;
}

/** In the group with these partitions; true when it is a rejoin (not the first join). */
export function joinGroup(m: Membership, partitions: number[], now: number): boolean {
  const rejoin = m.everJoined;
  // Joined again without leaving first: kafkajs rejoined after "not aware of this member".
  if (m.member) {
    m.leftFor = 'unknown member';
    m.leftAt = now;
  }
  m.member = true;
  m.everJoined = true;
  m.joinedAt = now;
  m.assigned = partitions;
  for (const p of m.pendingSince.keys()) if (!partitions.includes(p)) m.pendingSince.delete(p);
  return rejoin;
}

/**
 * starting / rejoining / stalled while out of the group (stalled past `stallMs`); consuming, or
 * stalled when there is work (lag or a batch in flight) and no progress for `stallMs`.
 */
export function healthState(m: Membership, stallMs: number, now: number): Pick<ConsumerHealth, 'state' | 'sinceMs'> {
  if (m.stopping) return { state: 'stopped', sinceMs: m.stoppedAt };
  if (!m.member) {
    if (now - m.leftAt > stallMs) return { state: 'stalled', sinceMs: m.leftAt + stallMs };
    return { state: m.everJoined ? 'rejoining' : 'starting', sinceMs: m.leftAt };
  }
  const clock = Math.max(m.lastProgressMs, m.joinedAt);
  const busy = m.assignedLag > 0 || m.inFlight > 0;
  if (busy && now - clock > stallMs) return { state: 'stalled', sinceMs: clock + stallMs };
  return { state: 'consuming', sinceMs: now };
}

/** Why a consumer is stalled, for the log line that says so. */
export function stallReason(m: Membership): string {
  if (!m.member) return `out of its group (${m.leftFor || 'never joined'})`;
  return m.inFlight > 0 ? 'handler busy' : 'lag, no fetch';
}

/**
 * The watchdog: out of the group longer than `rejoinMs` (a join that never finishes), or a member
 * stalled that long with nothing in flight (its fetch loop died): the reason to start over.
 */
export function watchdogReason(
  m: Membership,
  health: Pick<ConsumerHealth, 'state' | 'sinceMs'>,
  rejoinMs: number,
  now: number,
): string | undefined {
  if (!m.member && now - m.leftAt > rejoinMs) return 'not a member';
  if (health.state === 'stalled' && m.inFlight === 0 && now - health.sinceMs > rejoinMs) return 'stalled';
  return undefined;
}
