/**
 * Wallet slices (ADR 0004, "The pre-consume path and its target"; docs/security.md, "Overspend
 * bound"): instead of one billing round per request, this relay process holds one reservation per
 * user, a *slice* of the wallet sized to a few of the user's request bounds, and admits the
 * user's requests against it in memory. Each admitted request takes its bound from the slice while
 * it runs and gives back the difference to its charge when it ends; billing charges the request
 * from the slice's hold (its usage event names the slice). A new slice is taken in the background
 * before the open ones run low; a request waits only when none can cover it, and when billing
 * refuses a slice the request takes today's path (its own pre-consume, refused with the same error).
 *
 * A slice is closed (takes no more requests) when it is idle for `idleMs`, older than `maxAgeMs`,
 * too small for a request that needed a new slice, or on closeAll (shutdown, lease fence); once
 * its requests have ended it is released: its release event goes behind their usage events, so
 * billing gives back what is left after every charge it covers.
 */

/** The sizing and lifetime options (RELAY_WALLET_SLICE_*). */
export interface SliceOptions {
  /** How many of the requesting request's bound a slice holds. */
  requests: number;
  /** A slice not drawn from for this long is closed and released. */
  idleMs: number;
  /** A slice older than this takes no more requests (well within billing's hold TTL). */
  maxAgeMs: number;
}

/** What the slices need from billing and the usage pipeline. */
export interface SlicePorts {
  /**
   * Holds `amount` of the user's wallet under `sliceId`, or less down to `min` when the balance is
   * short (billing's PreConsume as a wallet slice); resolves what was granted and the balance left;
   * rejects with billing's error (FAILED_PRECONDITION: refused).
   */
  take(userId: number, sliceId: string, amount: number, min: number): Promise<{ granted: number; userQuota: number }>;
  /**
   * Queues the slice's release event (behind the usage events already queued); also for a take
   * that did not answer (it may still be applied: the release gives it back, or refuses it late).
   */
  release(userId: number, sliceId: string): void;
  /** A new slice id (the process's request-id prefix first: its lease covers it). */
  newId(): string;
  clock?(): number;
}

/** One slice as this process accounts for it. */
export interface Slice {
  id: string;
  userId: number;
  size: number;
  /** Size minus the charges of ended requests and the bounds of running ones. */
  left: number;
  inflight: number;
  openedAt: number;
  usedAt: number;
  closed: boolean;
  released: boolean;
}

/** A request admitted against a slice: its bound is taken from it until it ends. */
export interface SliceTicket {
  slice: Slice;
  need: number;
  ended: boolean;
}

/** A user's slices and what this process knows of the balance outside them. */
interface UserSlices {
  slices: Slice[];
  /** The balance billing last answered (after the holds), plus what was released since; undefined: unknown. */
  free: number | undefined;
  taking: Promise<void> | undefined;
  /** No slices before this (billing refused one for another reason than the balance: a subscription). */
  offUntil: number;
  /** When billing last asked the user's slices back (0: never): a slice asked for before it goes back. */
  revokedAt: number;
}

/** Billing's refusal of a hold the balance cannot cover (ledger-state.ts). */
const SHORT = '用户额度不足';
/** How long a user whose slice was refused for a subscription keeps the per-request path. */
const OFF_MS = 60_000;

/** Attempts of one request to find room (each waits for at most one new slice). */
const ATTEMPTS = 3;

/**
 * The size of a new slice for a request of bound `need`: `requests` of it, never more than the
 * balance known to be free; 0 when even the request is not known to fit (it then pre-consumes).
 */
export function sliceSize(need: number, requests: number, free: number | undefined): number {
  const want = need * Math.max(1, requests);
  if (free === undefined) return want;
  return free >= need ? Math.min(want, free) : 0;
}

/** Whether a slice can take a request of bound `need` at `now`. */
export const admits = (s: Slice, need: number, now: number, maxAgeMs: number): boolean =>
  !s.closed && s.left >= need && now - s.openedAt <= maxAgeMs;

/** Takes `need` from the first open slice with room; undefined when none has it. */
export function admitFrom(slices: Slice[], need: number, now: number, maxAgeMs: number): SliceTicket | undefined {
  for (const s of slices) {
    if (!admits(s, need, now, maxAgeMs)) continue;
    s.left -= need;
    s.inflight++;
    s.usedAt = now;
    return { slice: s, need, ended: false };
  }
  return undefined;
}

/** The room left in a user's open slices. */
const roomOf = (slices: Slice[], now: number, maxAgeMs: number): number => {
  let room = 0;
  for (const s of slices) if (!s.closed && now - s.openedAt <= maxAgeMs) room += Math.max(0, s.left);
  return room;
};

/** The state of one process's slices, shared by the functions below. */
interface SliceContext {
  opts: SliceOptions;
  ports: SlicePorts;
  clock: () => number;
  users: Map<number, UserSlices>;
  /** After the final closeAll: no slice stays open. */
  stopped: boolean;
}

/** Gives a closed slice back once no request of it runs. */
function releaseIfDone(ctx: SliceContext, u: UserSlices, s: Slice): void {
  if (!s.closed || s.inflight > 0 || s.released) return;
  s.released = true;
  u.slices = u.slices.filter((x) => x !== s);
  if (u.free !== undefined) u.free += Math.max(0, s.left);
  ctx.ports.release(s.userId, s.id);
}

function closeSlice(ctx: SliceContext, u: UserSlices, s: Slice): void {
  s.closed = true;
  releaseIfDone(ctx, u, s);
}

/**
 * A granted slice joins the user's; those too small for the request that asked for it close. One
 * asked for at `askedAt`, before billing asked the user's slices back, goes back at once (it may
 * hold what a refused request waits for), as does one granted after the final closeAll (shutdown).
 */
function opened(
  ctx: SliceContext,
  u: UserSlices,
  slice: Slice,
  need: number,
  userQuota: number,
  askedAt: number,
): void {
  u.free = userQuota;
  for (const s of [...u.slices]) if (!s.closed && s.left < need) closeSlice(ctx, u, s);
  u.slices.push(slice);
  if (ctx.stopped || u.revokedAt > askedAt) closeSlice(ctx, u, slice);
}

/** Asks billing for a slice of `size` for a request of bound `need` (one take per user at a time). */
function takeSlice(ctx: SliceContext, userId: number, u: UserSlices, size: number, need: number): Promise<void> {
  const id = ctx.ports.newId();
  const askedAt = ctx.clock();
  const taking = ctx.ports.take(userId, id, size, need).then(
    (res) => {
      const now = ctx.clock();
      const slice: Slice = {
        id,
        userId,
        size: res.granted,
        left: res.granted,
        inflight: 0,
        openedAt: now,
        usedAt: now,
        closed: false,
        released: false,
      };
      opened(ctx, u, slice, need, res.userQuota, askedAt);
    },
    (err: unknown) => {
      const e = err as { code?: string; message?: string };
      if (e.code !== 'FAILED_PRECONDITION') return ctx.ports.release(userId, id);
      // Short: the request's own pre-consume gives the exact answer (and the balance). Otherwise
      // (a subscription may pay): the per-request path for a while.
      if (e.message !== SHORT) {
        u.offUntil = ctx.clock() + OFF_MS;
        return;
      }
      u.free = 0;
      // What is left of slices too small for the request goes back (once their requests end), where
      // its own pre-consume, or another process, can use it.
      for (const s of [...u.slices]) if (!s.closed && s.left < need) closeSlice(ctx, u, s);
    },
  );
  const tracked: Promise<void> = taking.finally(() => {
    if (u.taking === tracked) u.taking = undefined;
  });
  u.taking = tracked;
  return tracked;
}

/** After an admission: a new slice in the background when the open ones are running low. */
function topUp(ctx: SliceContext, userId: number, u: UserSlices, need: number, now: number): void {
  const { requests, maxAgeMs } = ctx.opts;
  if (u.taking || roomOf(u.slices, now, maxAgeMs) >= need * Math.ceil(requests / 2)) return;
  const size = sliceSize(need, requests, u.free);
  if (size >= need) void takeSlice(ctx, userId, u, size, need);
}

/** The user's slices, an empty entry when there is none yet. */
function userOf(ctx: SliceContext, userId: number): UserSlices {
  let u = ctx.users.get(userId);
  if (!u) {
    u = { slices: [], free: undefined, taking: undefined, offUntil: 0, revokedAt: 0 };
    ctx.users.set(userId, u);
  }
  return u;
}

/** A reservation from the user's slices, waiting only for a new slice when none has room. */
async function reserveFrom(ctx: SliceContext, userId: number, need: number): Promise<SliceTicket | undefined> {
  const u = userOf(ctx, userId);
  for (let i = 0; i < ATTEMPTS; i++) {
    const now = ctx.clock();
    if (u.offUntil > now) return undefined;
    const ticket = admitFrom(u.slices, need, now, ctx.opts.maxAgeMs);
    if (ticket) {
      topUp(ctx, userId, u, need, now);
      return ticket;
    }
    if (u.taking) {
      await u.taking;
      continue;
    }
    const size = sliceSize(need, ctx.opts.requests, u.free);
    if (size < need) return undefined;
    await takeSlice(ctx, userId, u, size, need);
  }
  return undefined;
}

/** Closes idle and old slices (released once their requests end); forgets users without any. */
function sweepIdle(ctx: SliceContext): void {
  const now = ctx.clock();
  const { idleMs, maxAgeMs } = ctx.opts;
  for (const [userId, u] of ctx.users) {
    for (const s of [...u.slices]) {
      if (!s.closed && (now - s.usedAt >= idleMs || now - s.openedAt > maxAgeMs)) closeSlice(ctx, u, s);
    }
    if (u.slices.length === 0 && !u.taking && u.offUntil <= now) ctx.users.delete(userId);
  }
}

/** The slices of every user this process serves on the slice path. */
export function walletSlices(opts: SliceOptions, ports: SlicePorts) {
  const ctx: SliceContext = { opts, ports, clock: ports.clock ?? Date.now, users: new Map(), stopped: false };
  return {
    /**
     * A reservation of `need` for a request of the user, drawn from a slice (waiting only for a new
     * slice when none has room); undefined: no slice can be had, the request pre-consumes.
     */
    reserve: (userId: number, need: number): Promise<SliceTicket | undefined> => reserveFrom(ctx, userId, need),

    /** The request ended and was charged `charged` (0: failed); its slice gets the rest of its bound back. */
    finish(ticket: SliceTicket, charged: number): void {
      if (ticket.ended) return;
      ticket.ended = true;
      const s = ticket.slice;
      s.left += ticket.need - charged;
      s.inflight--;
      s.usedAt = ctx.clock();
      const u = ctx.users.get(s.userId);
      if (u) releaseIfDone(ctx, u, s);
    },

    /** The balance a per-request pre-consume answered (the next slice is sized by it). */
    observe(userId: number, userQuota: number): void {
      const u = ctx.users.get(userId);
      if (u) u.free = userQuota;
    },

    /**
     * The user's wallet changed outside requests (an admin's change, a credit): the user's slices
     * take no more requests (the next ones pre-consume or take a new slice against the new
     * balance), and the free balance is unknown again.
     */
    drop(userId: number): void {
      const u = ctx.users.get(userId);
      if (!u) return;
      u.free = undefined;
      for (const s of [...u.slices]) closeSlice(ctx, u, s);
    },

    /**
     * Billing refused a hold of the user while slices held the balance (common/slice-signals.ts):
     * the user's slices take no more requests and go back as their requests end (a slice being
     * asked for now goes back once granted). The user's next requests take a new slice as usual,
     * sized by what billing grants from the balance given back.
     */
    revoke(userId: number): void {
      const u = ctx.users.get(userId);
      if (!u) return;
      u.revokedAt = ctx.clock();
      for (const s of [...u.slices]) closeSlice(ctx, u, s);
    },

    sweep: () => sweepIdle(ctx),

    /**
     * Closes every slice (lease fence; `final`: shutdown, and slices granted later close at once):
     * released as their requests end.
     */
    closeAll(final = false): void {
      if (final) ctx.stopped = true;
      for (const u of ctx.users.values()) for (const s of [...u.slices]) closeSlice(ctx, u, s);
    },

    /** Slices held (tests, metrics). */
    held(): number {
      let n = 0;
      for (const u of ctx.users.values()) n += u.slices.length;
      return n;
    },
  };
}

export type WalletSlices = ReturnType<typeof walletSlices>;
