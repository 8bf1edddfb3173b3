import type { Redis } from 'ioredis';

/**
 * Relay process leases (docs/reliability.md, scenario 1; docs/security.md, "Lease lapse"): each
 * relay process renews its instance id (the prefix of its request ids) in this sorted set every
 * RELAY_LEASE_RENEW_MS, itself or, when its own write fails, through billing; billing gives back
 * the holds of a process whose lease lapsed instead of keeping them for an hour.
 */
export const RELAY_LEASES_KEY = 'relay:leases';
export const RELAY_LEASE_RENEW_MS = 2_000;
/** A lease not renewed for this long (as billing sees it) has lapsed: its process is gone. */
export const RELAY_LEASE_LAPSE_MS = 10_000;
/** Leases are forgotten this long after their last renewal (then holds fall back to their TTL). */
const LEASE_KEEP_MS = 2 * 60 * 60 * 1000;

/**
 * The longest fence a relay may set (RELAY_LEASE_FENCE_MS, the relay's default): half the lapse.
 * Billing counts on it: a hold sent with a lease age past this came from a relay that was still
 * alive then (fenced, or renewing in vain) and is not given back by the lapse.
 */
export const RELAY_LEASE_FENCE_MS = RELAY_LEASE_LAPSE_MS / 2;

/** A lease renewal: the process's id and the score to write (see {@link relayLeaseScore}). */
export interface RelayLeaseRenewal {
  instance: string;
  score: number;
}

/**
 * A renewal's score: the writer's clock in microseconds plus a counter, so two renewals in one
 * millisecond still differ. Only a change matters (billing times leases on its own clock); the
 * clock part lets leases not renewed for hours be forgotten.
 */
export function relayLeaseScore(beat: number, now = Date.now()): number {
  return now * 1000 + (beat % 1000);
}

/** Whether a renewal is well formed: an id of 1 to 32 letters or digits, a whole positive score up to 2^53. */
export function validRelayLeaseRenewal(r: RelayLeaseRenewal): boolean {
  return /^[A-Za-z0-9]{1,32}$/.test(r.instance) && Number.isSafeInteger(r.score) && r.score > 0;
}

/** Whether the client's connection is known to be down (lost and not back, or closed). */
const connectionDown = (client: Redis) =>
  client.status === 'reconnecting' || client.status === 'close' || client.status === 'end';

/**
 * Runs one Redis command for the leases: true once Redis answered, false when it failed, did not
 * answer within `timeoutMs`, or the connection is known to be down (no wait in ioredis's offline
 * queue while it reconnects: an outage is known at once). Never rejects.
 */
function answered(client: Redis, command: () => Promise<unknown>, timeoutMs: number): Promise<boolean> {
  if (connectionDown(client)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      resolve(ok);
    };
    command().then(
      () => done(true),
      () => done(false),
    );
  });
}

/**
 * Writes one renewal (ZADD; the same renewal twice is one). Resolves true once Redis confirmed it,
 * false when Redis failed, was not connected or did not answer within `timeoutMs` (a write that
 * lands later does no harm: the process was alive when it sent it). Never rejects.
 */
export function writeRelayLease(client: Redis, renewal: RelayLeaseRenewal, timeoutMs: number): Promise<boolean> {
  return answered(client, () => client.zadd(RELAY_LEASES_KEY, renewal.score, renewal.instance), timeoutMs);
}

/**
 * What a peer (billing) did with a renewal sent through it: `renewed`, written to Redis;
 * `unreachable`, it could neither write nor read the lease set (so it cannot lapse anything);
 * `readable`, it could not write but could still read (Redis refusing writes while serving reads:
 * a read-only replica, out of memory), so leases can lapse.
 */
export type PeerRenewal = 'renewed' | 'unreachable' | 'readable';

/**
 * The peer's side of a renewal through it (billing's RenewRelayLease): writes it as the relay
 * would; when that fails, reads the lease set once to tell an outage from a Redis that still
 * serves reads. Half of `timeoutMs` for each. Never rejects.
 */
export async function renewRelayLeaseFor(
  client: Redis,
  renewal: RelayLeaseRenewal,
  timeoutMs: number,
): Promise<PeerRenewal> {
  if (await writeRelayLease(client, renewal, timeoutMs / 2)) return 'renewed';
  const read = await answered(client, () => client.zscore(RELAY_LEASES_KEY, renewal.instance), timeoutMs / 2);
  return read ? 'readable' : 'unreachable';
}

/**
 * Renews through a peer (billing) that writes the renewal to Redis for this process; rejects when
 * the peer itself could not be reached within `deadlineMs`.
 */
export type RenewThroughPeer = (renewal: RelayLeaseRenewal, deadlineMs: number) => Promise<PeerRenewal>;

/**
 * How the lease is renewed: `redis`, by this process; `peer`, through the peer; `peer-without-redis`,
 * the peer cannot reach Redis either (the fence waits); `peer-redis-read-only`, the peer can read
 * the leases but not write them (the fence goes on).
 */
export type LeasePath = 'redis' | 'peer' | 'peer-without-redis' | 'peer-redis-read-only';

const PATH_OF: Record<PeerRenewal, LeasePath> = {
  renewed: 'peer',
  unreachable: 'peer-without-redis',
  readable: 'peer-redis-read-only',
};

/**
 * The relay's lease clock: `okAt`, the send time of the last renewal Redis confirmed (its own or
 * the peer's write), and `excusedAt`, that of the last "Redis is out of the peer's reach too".
 * Fenced once neither moved for `fenceMs` (0: never).
 */
function leaseClock(clock: () => number, fenceMs: number, onFence?: (fenced: boolean) => void) {
  let okAt = clock();
  let excusedAt = Number.NEGATIVE_INFINITY;
  let fenced = false;
  const check = () => {
    if (fenceMs <= 0) return;
    const v = clock() - Math.max(okAt, excusedAt) > fenceMs;
    if (v === fenced) return;
    fenced = v;
    onFence?.(v);
  };
  return {
    check,
    confirm(sentAt: number) {
      okAt = Math.max(okAt, sentAt);
      check();
    },
    excuse(sentAt: number) {
      excusedAt = Math.max(excusedAt, sentAt);
      check();
    },
    fenced: () => fenced,
    age: () => Math.max(0, Math.round(clock() - okAt)),
  };
}

/** Options of {@link renewRelayLease}. */
export interface RenewRelayLeaseOptions {
  /** The fence (ms without a confirmed renewal or excuse); 0: none. Default RELAY_LEASE_FENCE_MS. */
  fenceMs?: number;
  onFence?: (fenced: boolean) => void;
  /** The second path when this process's own write fails (billing's RenewRelayLease). */
  viaPeer?: RenewThroughPeer;
  /** Called when the path that confirms the lease changes (for the logs). */
  onPath?: (path: LeasePath) => void;
  clock?: () => number;
}

/**
 * Renews a relay process's lease until stop() (which leaves it to lapse). Each renewal is written
 * by the process itself; when that fails or takes longer than half a period, through `viaPeer`
 * (while the own write keeps failing, both at once). The lease is confirmed (its age and the fence
 * clock move) when either write lands. When no renewal has been confirmed for `fenceMs` (Redis out
 * of reach of both, or a stuck event loop) `onFence(true)` is called once: billing may give back
 * this process's holds from RELAY_LEASE_LAPSE_MS on, so the relay ends the requests that hold a
 * reservation before then; `onFence(false)` once a renewal is confirmed again.
 *
 * A peer that answers it can neither write nor read the leases holds the fence off (not the age):
 * then no billing replica sharing that Redis can read them, and nothing lapses (watchRelayLeases);
 * holds sent meanwhile carry the growing age and are never given back by a lapse. The residual
 * case (another billing replica that still reads Redis) is in docs/security.md.
 */
export function renewRelayLease(
  client: Redis,
  instance: string,
  everyMs = RELAY_LEASE_RENEW_MS,
  opts: RenewRelayLeaseOptions = {},
): { stop(): void; fenced(): boolean; age(): number } {
  const clock = opts.clock ?? Date.now;
  const fenceMs = opts.fenceMs ?? RELAY_LEASE_FENCE_MS;
  const lease = leaseClock(clock, fenceMs, opts.onFence);
  // Renewed often enough that a fence shorter than the usual period (tests) is not reached between two.
  const periodMs = fenceMs > 0 ? Math.max(10, Math.min(everyMs, fenceMs / 3)) : everyMs;
  const ownTimeoutMs = Math.max(5, Math.min(periodMs / 2, 1_000));
  // A busy billing may answer late: an answer counts from its send time, so it may take up to half
  // the fence (at most one new call per period: two in flight at most).
  const peerDeadlineMs = Math.max(50, Math.min(fenceMs > 0 ? fenceMs / 2 : everyMs, 2_000));
  const path = pathReporter(opts.onPath);
  let beat = 0;
  let ownOk = true;

  const viaPeer = (renewal: RelayLeaseRenewal) => {
    if (!opts.viaPeer) return;
    const sentAt = clock();
    opts.viaPeer(renewal, peerDeadlineMs).then(
      (outcome) => {
        if (outcome === 'renewed') lease.confirm(sentAt);
        // Only "no Redis at all" holds the fence off: a peer that still reads the leases can lapse them.
        if (outcome === 'unreachable') lease.excuse(sentAt);
        // Reported only while the own write fails (both paths run side by side then).
        if (!ownOk) path(PATH_OF[outcome]);
      },
      () => undefined,
    );
  };
  const renew = () => {
    lease.check();
    const sentAt = clock();
    const renewal = { instance, score: relayLeaseScore(beat++) };
    const failing = !ownOk || connectionDown(client);
    // Known to fail: the peer at once, not after the own write's timeout.
    if (failing) viaPeer(renewal);
    void writeRelayLease(client, renewal, ownTimeoutMs).then((ok) => {
      ownOk = ok;
      if (ok) {
        lease.confirm(sentAt);
        path('redis');
      } else if (!failing) viaPeer(renewal);
    });
  };
  renew();
  const timer = setInterval(renew, periodMs);
  timer.unref();
  // The fence is checked more often than the renewals: it must act well before the lapse.
  const watcher = fenceMs > 0 ? setInterval(lease.check, Math.max(10, Math.min(everyMs, fenceMs / 4))) : undefined;
  watcher?.unref();
  return {
    stop: () => {
      clearInterval(timer);
      clearInterval(watcher);
    },
    fenced: lease.fenced,
    /** Milliseconds since the last renewal Redis confirmed (its send time), on this process's clock. */
    age: lease.age,
  };
}

/** Calls `onPath` when the path differs from the last one reported (the first is 'redis': no call). */
function pathReporter(onPath?: (path: LeasePath) => void) {
  let last: LeasePath = 'redis';
  return (p: LeasePath) => {
    if (p === last) return;
    last = p;
    onPath?.(p);
  };
}

/**
 * Billing's view of the relay leases, read every `everyMs`. lapsed(instance) holds only for an
 * instance seen renewing before whose score has not moved for RELAY_LEASE_LAPSE_MS of billing's
 * clock, while the view is fresh (read within 3 x everyMs). After a failed read (Redis down, so the
 * relays could not renew either) every lease starts its lapse time again: nothing lapses because
 * of a Redis outage.
 *
 * Which holds of a lapsed instance go back: a hold whose relay sent its lease age (how long before
 * the pre-consume its last renewal was confirmed, on the relay's own clock) counts when that age was
 * at most RELAY_LEASE_FENCE_MS: a process killed mid-request placed its last holds within a renewal
 * period of its last renewal, however late billing got to them; a hold sent later came from a relay
 * still alive then (it could not reach Redis) and is left to its settle (or the hold TTL). A hold
 * without an age (callers without a lease) counts when billing placed it up to
 * `RELAY_LEASE_FENCE_MS - everyMs` after it last saw the lease move.
 */
export function watchRelayLeases(
  client: Redis,
  opts: { everyMs?: number; lapseMs?: number; holdGraceMs?: number; clock?: () => number } = {},
): {
  lapsed(instance: string, heldAt?: number, leaseAgeMs?: number): boolean;
  check(): Promise<void>;
  stop(): void;
} {
  const everyMs = opts.everyMs ?? RELAY_LEASE_RENEW_MS;
  const lapseMs = opts.lapseMs ?? RELAY_LEASE_LAPSE_MS;
  const holdGraceMs = opts.holdGraceMs ?? RELAY_LEASE_FENCE_MS - everyMs;
  const clock = opts.clock ?? Date.now;
  const seen = new Map<string, { score: string; movedAt: number }>();
  let readAt = 0;
  const check = async () => {
    let flat: string[];
    try {
      flat = await client.zrange(RELAY_LEASES_KEY, 0, -1, 'WITHSCORES');
    } catch {
      return;
    }
    const now = clock();
    const gap = now - readAt > 3 * everyMs;
    readAt = now;
    const present = new Set<string>();
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const id = flat[i] as string;
      const score = flat[i + 1] as string;
      present.add(id);
      const prev = seen.get(id);
      if (!prev || prev.score !== score || gap) seen.set(id, { score, movedAt: now });
    }
    for (const id of seen.keys()) if (!present.has(id)) seen.delete(id);
    client.zremrangebyscore(RELAY_LEASES_KEY, '-inf', (Date.now() - LEASE_KEEP_MS) * 1000).catch(() => undefined);
  };
  const timer = setInterval(() => void check(), everyMs);
  timer.unref();
  void check();
  return {
    lapsed(instance, heldAt, leaseAgeMs) {
      const now = clock();
      if (now - readAt > 3 * everyMs) return false;
      const s = seen.get(instance);
      if (s === undefined || now - s.movedAt <= lapseMs) return false;
      if (leaseAgeMs !== undefined) return leaseAgeMs <= RELAY_LEASE_FENCE_MS;
      return heldAt === undefined || heldAt <= s.movedAt + holdGraceMs;
    },
    check,
    stop: () => clearInterval(timer),
  };
}
