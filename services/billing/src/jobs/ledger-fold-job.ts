import type { Lease, Logger } from '@aigw/common';
import { type FoldStore, foldPass } from '../domain/ledger-fold.ts';

/** What the job needs to fold on one replica at a time: the shared lease and how long it lasts. */
export interface FoldLease {
  lease: Lease;
  /** The lease's time to live: renewed every third of it; another replica takes it this long after a holder died. */
  ttlMs: number;
}

/**
 * Holds the fold's lease: takes it, renews it every third of its time to live, and calls
 * `onLost` when a renewal finds it gone or cannot tell (Redis not answering): the pass in flight
 * stops after its current user, and the next try takes it again if it is still free.
 */
export function foldLeaseHolder(l: FoldLease, logger: Logger, onLost: () => void) {
  let held = false;
  let timer: NodeJS.Timeout | undefined;
  const lose = (why: string, err?: unknown) => {
    if (!held) return;
    held = false;
    clearInterval(timer);
    logger.warn({ err, owner: l.lease.owner }, `wallet ledger fold lease lost (${why}); the pass in flight stops`);
    onLost();
  };
  const renew = async () => {
    try {
      if (!(await l.lease.renew())) lose('taken or expired');
    } catch (err) {
      lose('renewal failed', err);
    }
  };
  return {
    get held() {
      return held;
    },
    /** True when this replica holds the lease (taken now or still held). */
    async take(): Promise<boolean> {
      if (held) return true;
      try {
        held = await l.lease.acquire();
      } catch (err) {
        logger.warn({ err }, 'wallet ledger fold lease not taken: Redis did not answer; tried again later');
        return false;
      }
      if (held) {
        logger.info({ owner: l.lease.owner }, 'wallet ledger fold lease taken: this replica folds');
        timer = setInterval(() => void renew(), Math.max(10, Math.floor(l.ttlMs / 3)));
        timer.unref();
      }
      return held;
    },
    /** Gives the lease up (on stop), so another replica takes it at its next try. */
    async release(): Promise<void> {
      clearInterval(timer);
      if (!held) return;
      held = false;
      await l.lease.release().catch((err: unknown) => logger.warn({ err }, 'wallet ledger fold lease not released'));
    },
  };
}

/**
 * Runs a fold pass `firstMs` after start, then every `intervalMs` (one at a time; stop() ends the
 * pass in flight between two users), with a log line per pass (what it folded and freed, how long
 * it took). With a `lease`, only the replica holding it folds; the others try to take it every
 * lease period (or interval, if shorter), so one of them folds within a lease period after the
 * holder died. A pass cut short, by a death or a lost lease, is finished by the next one, whoever
 * runs it (every step of the fold is idempotent: docs/adr/0003-wallet-ledger.md, "Compaction").
 */
export function startLedgerFold(opts: {
  store: FoldStore;
  horizonMs: number;
  intervalMs: number;
  firstMs: number;
  logger: Logger;
  clock?: () => number;
  lease?: FoldLease;
}): { stop(): Promise<void> } {
  const clock = opts.clock ?? Date.now;
  const stopped = new AbortController();
  let pass: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  const holder = opts.lease ? foldLeaseHolder(opts.lease, opts.logger, () => pass?.abort()) : undefined;
  const standbyMs = Math.min(opts.lease?.ttlMs ?? opts.intervalMs, opts.intervalMs);
  const fold = async () => {
    pass = new AbortController();
    const t0 = performance.now();
    try {
      const signal = AbortSignal.any([stopped.signal, pass.signal]);
      const stats = await foldPass(opts.store, { horizonMs: opts.horizonMs, now: clock(), signal });
      const ms = Math.round(performance.now() - t0);
      opts.logger.info({ ...stats, ms, horizonHours: opts.horizonMs / 3_600_000 }, 'wallet ledger fold pass');
    } catch (err) {
      opts.logger.warn({ err }, 'wallet ledger fold pass failed; the next pass finishes it');
    }
    pass = undefined;
  };
  const run = async () => {
    const mine = holder ? await holder.take() : true;
    if (mine && !stopped.signal.aborted) await fold();
    if (!stopped.signal.aborted) schedule(holder && !holder.held ? standbyMs : opts.intervalMs);
  };
  const schedule = (ms: number) => {
    timer = setTimeout(() => void run(), ms);
    timer.unref();
  };
  schedule(opts.firstMs);
  return {
    async stop() {
      stopped.abort();
      clearTimeout(timer);
      await holder?.release();
    },
  };
}
